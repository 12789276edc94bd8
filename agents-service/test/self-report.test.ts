/**
 * Self-reporting: with a Runwatch key configured, each /improve becomes one run in a real Runwatch server
 * (web ingest + pipeline on embedded ports), reported through the JS client: run_start, steps for language
 * detection and the LLM call, run_end with tokens and cost, or an error event.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { startTestServer, waitForRun, type TestServer } from "../../test/e2e/harness.js";
import { runwatchTracer, AGENT_NAME } from "../runwatch-tracer.js";
import { PY_CODE, startHarness, type Harness } from "./harness.js";

let runwatch: TestServer;
let agents: Harness;
let key: string;
beforeAll(async () => {
  runwatch = await startTestServer({ pipeline: true });
  const user = await runwatch.user();
  key = await runwatch.key(user.id);
  const tracer = await runwatchTracer({ apiKey: key, baseUrl: runwatch.url }, createLogger("error"), { flushIntervalMs: 20 });
  agents = await startHarness({}, {}, { tracer });
}, 120_000);
afterAll(async () => {
  await agents?.close();
  await runwatch?.close();
});

type RunBody = { run: Record<string, any>; events: Array<{ event_type: string; payload: Record<string, any> }> };

describe("self-reporting to Runwatch", () => {
  it("one run per /improve: run_start, detect + LLM steps, run_end with tokens and cost", async () => {
    const r = await agents.improve({ code: PY_CODE, provider: "openai" });
    expect(r.status).toBe(200);
    const runId = r.headers.get("x-request-id")!;
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);
    const body = await waitForRun<RunBody>(runwatch.url, key, runId, (b) => b.run.status === "success" && b.events.length >= 6);
    expect(body.run).toMatchObject({ agent_name: AGENT_NAME, status: "success", model: "gpt-4.1-mini", prompt_tokens: 1200, completion_tokens: 300 });
    expect(body.run.cost_usd).toBeCloseTo(0.00096, 9);
    const steps = body.events.filter((e) => e.event_type === "step").map((e) => `${e.payload.node_name}:${e.payload.phase}`);
    expect(steps).toEqual(["detect_language:start", "detect_language:end", "llm_openai:start", "llm_openai:end"]);
    const detect = body.events.find((e) => e.event_type === "step" && e.payload.phase === "end" && e.payload.node_name === "detect_language")!;
    expect(detect.payload.output).toMatchObject({ language: "python", method: expect.any(String) });
    const start = body.events.find((e) => e.event_type === "run_start")!;
    expect(start.payload.input).toMatchObject({ provider: "openai", code_chars: PY_CODE.length });
    expect(JSON.stringify(body.events)).not.toContain("item.get(key)"); // the code itself is not reported
  });

  it("a failed /improve ends its run with an error event", async () => {
    agents.fake.script("gemini", { kind: "answer", answer: { suggestions: "none" } });
    const r = await agents.improve({ code: PY_CODE, provider: "gemini" });
    expect(r.status).toBe(502);
    const runId = r.headers.get("x-request-id")!;
    const body = await waitForRun<RunBody>(runwatch.url, key, runId, (b) => b.run.status === "error");
    const error = body.events.find((e) => e.event_type === "error")!;
    expect(error.payload.error_message).toContain("the answer does not match the expected shape");
    const llmEnd = body.events.find((e) => e.event_type === "step" && e.payload.node_name === "llm_gemini" && e.payload.phase === "end");
    expect(llmEnd).toBeDefined();
  });
});
