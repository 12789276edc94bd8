/**
 * The prompt version an LLM call used, from each way in (docs/PROMPTS.md): the JS client's llmCall with the Prompt
 * from getPrompt, a raw ingest event's prompt_name / prompt_version, and OTLP spans with runwatch.prompt.* or
 * Langfuse's langfuse.observation.prompt.* attributes. Each lands in llm_calls (read back through /api/query), and the
 * prompt's page shows per version its runs, latency, tokens and cost.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch } from "../../clients/js/src/index.js";
import { json, loginJar, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, hexId } from "./otlp-fixtures.js";

let srv: TestServer;
let alice: TestAccount;

const sql = async (text: string) => {
  const res = await fetch(`${srv.url}/api/query`, json(alice.key, { sql: text }));
  const body = await res.json();
  if (res.status !== 200) throw new Error(JSON.stringify(body));
  return (body.rows as unknown[][]);
};

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  alice = await srv.account();
  for (const [prompt, labels] of [["Answer {{q}}", ["production"]], ["Answer {{q}} briefly", []]] as const) {
    const res = await fetch(`${srv.url}/api/prompts/qa/versions`, json(alice.key, { prompt, config: { model: "gpt-4o-mini" }, labels }));
    expect(res.status).toBe(201);
  }
});
afterAll(async () => {
  await srv?.close();
});

describe("prompt versions on LLM calls", () => {
  it("records the version from the SDK, the ingest API and OTLP, and the page sums them per version", async () => {
    // The JS client: the production prompt (v1), compiled and passed to llmCall.
    const client = new Runwatch({ apiKey: alice.key, baseUrl: srv.url });
    const prompt = await client.getPrompt("qa");
    await client.run({ agentName: "qa-bot", sdkRunId: "sdk-run" }, (run) =>
      run.llmCall("answer", { model: "gpt-4o-mini", provider: "openai", input: prompt.compile({ q: "2+2?" }), prompt }, (call) => {
        call.setUsage({ promptTokens: 10, completionTokens: 2, costUsd: 0.001 });
        return "4";
      }));
    // A fallback prompt (no version) records nothing.
    const fallback = await client.getPrompt("missing", { fallback: "Hi" });
    await client.run({ agentName: "qa-bot", sdkRunId: "fallback-run" }, (run) => run.llmCall("answer", { model: "gpt-4o-mini", prompt: fallback }, () => "hi"));
    await client.shutdown();

    // The ingest API: v2 on two calls of one run.
    const events = ["a", "b"].flatMap((span) => [
      { event_type: "step", sdk_run_id: "api-run", agent_name: "qa-bot", span_id: span, payload: { kind: "llm", node_name: "answer", phase: "start", model: "gpt-4o" } },
      { event_type: "step", sdk_run_id: "api-run", span_id: span, payload: { kind: "llm", node_name: "answer", phase: "end", model: "gpt-4o", prompt_tokens: 100, completion_tokens: 20, cost_usd: 0.01, duration_ms: 400, prompt_name: "qa", prompt_version: 2 } },
    ]);
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(alice.key, { events }))).status).toBe(207);
    // A bad version is refused naming the field.
    const bad = await fetch(`${srv.url}/api/ingest`, json(alice.key, { event_type: "step", sdk_run_id: "bad", payload: { kind: "llm", node_name: "x", phase: "end", prompt_version: 0 } }));
    expect([bad.status, (await bad.json()).error.field]).toEqual([422, "payload.prompt_version"]);

    // OTLP: Runwatch's attributes on one trace, Langfuse's (a version as text) on another.
    for (const [prefix, version] of [["runwatch.prompt", 2], ["langfuse.observation.prompt", "1"]] as const) {
      const traceId = hexId(16);
      const root = hexId(8);
      const body = exportJson([
        { traceId, spanId: root, name: "agent", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "otlp-bot" } },
        { traceId, spanId: hexId(8), parentSpanId: root, name: "chat", attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 5, [`${prefix}.name`]: "qa", [`${prefix}.version`]: version } },
      ]);
      expect((await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${alice.key}`, "content-type": "application/json" }, body })).status).toBe(200);
    }

    const rows = await until("every call stored", () => sql("SELECT sdk_run_id, prompt_name, prompt_version FROM llm_calls ORDER BY sdk_run_id, prompt_version"), (r) => r.length === 6);
    const byRun = rows.map((r) => [String(r[0]).startsWith("otlp") || String(r[0]).length === 32 ? "otlp" : r[0], r[1], Number(r[2])]);
    expect(byRun.filter((r) => r[0] !== "otlp")).toEqual([["api-run", "qa", 2], ["api-run", "qa", 2], ["fallback-run", "", 0], ["sdk-run", "qa", 1]]);
    expect(rows.filter((r) => !["api-run", "fallback-run", "sdk-run"].includes(String(r[0]))).map((r) => [r[1], Number(r[2])]).sort()).toEqual([["qa", 1], ["qa", 2]]);

    const jar = await loginJar(srv.url, alice.email);
    const html = await (await jar.fetch(`${srv.url}/prompts/qa`)).text();
    const row = (v: number) => html.match(new RegExp(`<tr data-version="${v}"[\\s\\S]*?</tr>`))![0];
    // v2: the API's run and an OTLP run; 200 + 50 tokens in; the API's cost.
    expect(row(2)).toMatch(/data-usage="runs">2</);
    expect(row(2)).toContain("250 / 45");
    expect(row(1)).toMatch(/data-usage="runs">2</);
    expect(row(1)).toContain("60 / 7");
  }, 120_000);
});
