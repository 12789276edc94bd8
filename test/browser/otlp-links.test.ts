/**
 * A span link and span log records on the run page, in Chromium: a worker agent's span links to the planner's span in
 * another trace of the same project (a handoff) and to a trace Runwatch does not have. Its panel lists the records
 * sent as OTLP logs for it, and the links: the handoff is a link that opens the planner's run at the linked span,
 * the other shows its ids. Screenshot: test/artifacts/otlp-span-links.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { until, waitForRun } from "../e2e/harness.js";
import { exportJson, hexId } from "../e2e/otlp-fixtures.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf } from "./trace-rows.js";

describe.skipIf(!haveBrowser)("span links and logs in a real browser", () => {
  const env = useBrowserStack();

  it("shows a span's log records and links; clicking the link opens the linked run at its span", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1440, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Lina", `links-${Date.now()}@example.com`);
    const planner = { traceId: hexId(16), spanId: hexId(8) };
    const worker = { traceId: hexId(16), spanId: hexId(8) };
    const unknown = { traceId: hexId(16), spanId: hexId(8) };
    const post = async (path: string, body: string) => {
      const res = await fetch(`${stack.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
      expect(res.status).toBe(200);
    };
    await post("/v1/traces", exportJson([{ ...planner, name: "invoke_agent planner", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" } }]));
    await post("/v1/traces", exportJson([{
      ...worker, name: "invoke_agent worker", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "worker" },
      links: [{ ...planner, attributes: { "link.kind": "handoff" } }, unknown],
    }]));
    await post("/v1/logs", JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [
      { traceId: worker.traceId, spanId: worker.spanId, eventName: "gen_ai.user.message", body: { kvlistValue: { values: [{ key: "content", value: { stringValue: "Plan the trip" } }] } } },
      { traceId: worker.traceId, body: { stringValue: "worker picked up the handoff" }, severityText: "INFO" },
    ] }] }] }));
    await waitForRun(stack.url, key, planner.traceId, (b) => b.run.status === "success");
    await waitForRun(stack.url, key, worker.traceId, (b) => b.run.status === "success");
    await until("the worker's log records", async () => (await (await fetch(`${stack.url}/api/runs/${worker.traceId}/logs`, { headers: { authorization: `Bearer ${key}` } })).json()).logs.length, (n) => n === 2);

    await page.goto(`${stack.url}/dashboard/${worker.traceId}`);
    expect(await panelShows(page, "")).toContain("worker picked up the handoff");
    await page.click(rowOf(worker.spanId));
    const text = await panelShows(page, worker.spanId);
    expect(text).toContain("Logs (1)");
    expect(text).toContain("user: Plan the trip"); // a GenAI message in one line, by role

    expect(text).toContain("Links (2)");
    expect(text).toContain(`trace ${unknown.traceId} · span ${unknown.spanId}`);
    expect(text).toContain(`planner (${planner.traceId.slice(0, 8)}…), span ${planner.spanId}`); // the linked run, by its agent
    expect(text).toContain("link.kind=handoff");
    await page.screenshot({ path: path.join(ARTIFACTS, "otlp-span-links.png"), fullPage: true });
    await page.click(`#trace-panel a[data-linked-span="${planner.spanId}"]`);
    await page.waitForURL((u) => u.pathname.endsWith(`/dashboard/${planner.traceId}`));
    expect(await panelShows(page, planner.spanId)).toContain("invoke_agent planner");
    await ctx.close();
  });
});
