/**
 * Scores from the JS client against a real server (`runwatch start` on free ports): run.score / client.score right
 * after a run (its queued events flushed first, a 404 while the server stores the run retried), read back through
 * GET /api/runs/{id}/scores; a refused score and a run that never arrives reject.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError } from "../src/index.js";
import { startRealServer, type RealServer } from "./real-server.js";

let server: RealServer;
let client: Runwatch;

beforeAll(async () => {
  server = await startRealServer();
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 5_000 });
}, 120_000);
afterAll(async () => {
  await client?.shutdown();
  await server?.stop();
});

describe("scores", () => {
  it("scores a run and one of its LLM spans right after the run; the server lists both", async () => {
    const run = client.startRun({ agentName: "js-scored-agent", input: { q: "hi" } });
    let spanId = "";
    await run.llmCall("answer", { model: "gpt-4o" }, (call) => {
      spanId = call.spanId;
      call.setUsage({ promptTokens: 10, completionTokens: 2 });
      return "hello";
    });
    run.end("hello");
    // The events are still queued (flush every 5 s): score() sends them first and waits for the run.
    const first = await run.score("user_feedback", true, { comment: "spot on", source: "human" });
    const second = await client.score(run.sdkRunId, "correctness", 0.75, { spanId, source: "llm_judge" });
    expect(first).not.toBe(second);
    const res = await fetch(`${server.url}/api/runs/${run.sdkRunId}/scores`, { headers: { authorization: `Bearer ${server.key}` } });
    const { scores } = (await res.json()) as { scores: Record<string, unknown>[] };
    expect(scores.map((s) => [s.score_id, s.name, s.value, s.comment, s.source, s.span_id])).toEqual([
      [first, "user_feedback", true, "spot on", "human", null],
      [second, "correctness", 0.75, "", "llm_judge", spanId],
    ]);
  });

  it("rejects a refused score naming the field, and gives up on a run that never arrives", async () => {
    const run = client.startRun({ agentName: "js-scored-agent" });
    run.end();
    const refused = await run.score("label", "x".repeat(201)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RunwatchError);
    expect((refused as RunwatchError).details.status).toBe(422);
    expect((refused as RunwatchError).message).toContain("value");
    const started = Date.now();
    const missing = await client.score(`js-missing-${Date.now()}`, "thumbs", false, { timeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(String(missing)).toContain("could not score run");
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("runs started with a sessionId group into that session (GET /api/sessions/{id}), in start order", async () => {
    const session = `js-thread-${Date.now()}`;
    const first = client.startRun({ agentName: "js-chat", sessionId: session, input: { message: "hi" } });
    first.end("hello");
    await new Promise((r) => setTimeout(r, 5)); // the next turn starts later (runs of the same millisecond sort by id)
    const second = client.startRun({ agentName: "js-chat", sessionId: session, input: { message: "bye" } });
    second.end("see you");
    await client.flush();
    const deadline = Date.now() + 10_000;
    let body: { runs?: { sdk_run_id: string; session_id: string }[] } = {};
    while (Date.now() < deadline) {
      const res = await fetch(`${server.url}/api/sessions/${session}`, { headers: { authorization: `Bearer ${server.key}` } });
      body = res.status === 200 ? ((await res.json()) as typeof body) : {};
      if (body.runs?.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(body.runs?.map((r) => [r.sdk_run_id, r.session_id])).toEqual([[first.sdkRunId, session], [second.sdkRunId, session]]);
  });
});

