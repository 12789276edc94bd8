/**
 * An OpenTelemetry trace on the run page, in Chromium: spans exported over OTLP/HTTP JSON (GenAI conventions and
 * OpenInference kinds) render as the run's tree with kinds, the LLM call's model and tokens, and a failed tool
 * span marked as failed while the run succeeded, its error in its panel. Screenshot: test/artifacts/otlp-run-trace.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitForRun } from "../e2e/harness.js";
import { exportJson, hexId, type SpanSpec } from "../e2e/otlp-fixtures.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf, traceRows } from "./trace-rows.js";

describe.skipIf(!haveBrowser)("an OTLP trace in a real browser", () => {
  const env = useBrowserStack();

  it("shows the exported spans as the run's tree, a failed tool span as failed in a successful run", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1440, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Otto", `otlp-${Date.now()}@example.com`);
    const traceId = hexId(16);
    const [root, agent, llm, retr, rerank, tool] = [hexId(8), hexId(8), hexId(8), hexId(8), hexId(8), hexId(8)];
    const t0 = Date.now() - 3000;
    const span = (spanId: string, parentSpanId: string | undefined, name: string, start: number, end: number, attributes: SpanSpec["attributes"], extra: Partial<SpanSpec> = {}): SpanSpec =>
      ({ traceId, spanId, parentSpanId, name, startMs: t0 + start, endMs: t0 + end, attributes, ...extra });
    const spans = [
      span(llm, agent, "ChatOpenAI", 100, 900, { "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.provider": "openai", "llm.token_count.prompt": 1500, "llm.token_count.completion": 200, "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Which hotels near the beach?" }),
      span(retr, agent, "hotel_index", 950, 1100, { "openinference.span.kind": "RETRIEVER", "input.value": "beach hotels" }),
      span(rerank, agent, "cohere-rerank", 1110, 1200, { "openinference.span.kind": "RERANKER" }),
      span(tool, agent, "book_hotel", 1250, 1700, { "openinference.span.kind": "TOOL", "tool.name": "book_hotel", "input.value": '{"hotel": "Mar"}' }, {
        status: { code: 2, message: "sold out" },
        events: [{ name: "exception", attributes: { "exception.type": "SoldOut", "exception.message": "no rooms left" } }],
      }),
      span(agent, root, "travel-agent", 50, 1800, { "openinference.span.kind": "AGENT", "agent.name": "travel-agent" }),
      span(root, undefined, "LangGraph", 0, 1900, { "openinference.span.kind": "CHAIN", "output.value": "Booked nothing: sold out." }),
    ];
    const res = await fetch(`${stack.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: exportJson(spans, "travel-service") });
    expect(res.status).toBe(200);
    await waitForRun(stack.url, key, traceId, (b) => b.run.status === "success");
    await page.goto(`${stack.url}/dashboard/${traceId}`);
    await page.waitForSelector(rowOf(tool), { timeout: 10_000 });
    const rows = await traceRows(page);
    // The run, then its one root span, the agent under it, and the agent's four spans under the agent.
    expect(rows.map((r) => [r.id, r.level])).toEqual([["", 1], [root, 2], [agent, 3], [llm, 4], [retr, 4], [rerank, 4], [tool, 4]]);
    expect(rows.slice(3).map((r) => r.kind)).toEqual(["llm", "retrieval", "reranker", "tool"]);
    expect(await page.locator(rowOf(tool)).getAttribute("class")).toContain("tv-error");
    expect(rows.find((r) => r.id === llm)!.text).toContain("gpt-4o");
    await page.click(rowOf(tool));
    expect(await panelShows(page, tool)).toMatch(/sold out|no rooms left/);
    expect(await page.textContent("body")).toContain("travel-agent");
    await page.screenshot({ path: path.join(ARTIFACTS, "otlp-run-trace.png"), fullPage: true });
    await ctx.close();
  });
});
