/**
 * One public JSON shape of a run (core/events/run-json.ts): a dashboard socket's live `events` message (through the
 * pipeline's broadcast and a real gateway) and the read API (GET /api/runs/{id}, GET /api/runs, GET /api/sessions/{id})
 * give the same run the same keys, in the same order, with the same values.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startGateway, type Gateway } from "../../gateway/server.js";
import { REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../../core/tokens.js";
import { bearer, json, startTestServer, until, type TestServer } from "./harness.js";

const SECRET = "run-shape-e2e-secret-0123456789abcdef";

let srv: TestServer;
let gateway: Gateway;
let projectId: number;
let key: string;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true });
  gateway = await startGateway(srv.ports, { ...srv.ports.config, gatewayPort: 0 }, { sessionSecret: SECRET });
  const user = await srv.user();
  projectId = user.id;
  key = await srv.key(user.id);
});

afterAll(async () => {
  await gateway?.close();
  await srv?.close();
});

/** The project's live socket, subscribed, as web/static/live.js opens it; the runs of its `events` messages. */
async function liveRuns() {
  const token = signRealtimeToken(SECRET, projectId, "run-shape-session-0001", 60, Date.now(), projectId).token;
  const ws = new WebSocket(`${gateway.url}/ws`, [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${token}`]);
  const frames: any[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
  await until("hello", () => frames, (f) => f.some((x) => x.type === "hello"), 10_000);
  ws.send(JSON.stringify({ type: "subscribe", channel: `project.${projectId}` }));
  await until("subscribed", () => frames, (f) => f.some((x) => x.type === "subscribed"), 10_000);
  const runs = () => frames.filter((f) => f.type === "events").flatMap((f) => f.runs.map((r: { run: Record<string, unknown> }) => r.run));
  return { runs, close: () => ws.close() };
}

const t = (ms: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, 0, ms)).toISOString();

/** The run as GET /api/runs/{id} answers it, once its stored version has `eventCount` events. */
const apiRun = (id: string, eventCount: number) =>
  until(`GET /api/runs/${id}`, async () => (await (await fetch(`${srv.url}/api/runs/${encodeURIComponent(id)}`, bearer(key))).json()) as { run?: Record<string, unknown> },
    (b) => b.run?.event_count === eventCount, 20_000).then((b) => b.run!);

describe("the live events message and the read API", () => {
  it("carry a run as one object: same keys in the same order, same values", async () => {
    const live = await liveRuns();
    const experiment = "0192f0c4-8a5e-7b1c-9d2e-3f4a5b6c7d8e";
    const finished = [
      { event_type: "run_start", sdk_run_id: "shape-done", agent_name: "shaper", session_id: "shape-thread", occurred_at: t(0),
        payload: { framework: "langgraph", experiment_id: experiment, dataset_item_id: "item-7", repetition: 2 } },
      { event_type: "step", sdk_run_id: "shape-done", span_id: "l1", occurred_at: t(250),
        payload: { node_name: "chat", kind: "llm", phase: "end", duration_ms: 200, model: "gpt-4o-mini", prompt_tokens: 120, completion_tokens: 30, cost_usd: 0.0042 } },
      { event_type: "error", sdk_run_id: "shape-done", occurred_at: t(400), payload: { error_type: "ToolError", error_message: "the search timed out" } },
      { event_type: "run_end", sdk_run_id: "shape-done", occurred_at: t(1875), payload: { output: { answer: 42 } } },
    ];
    const waiting = [
      { event_type: "run_start", sdk_run_id: "shape-waiting", agent_name: "shaper", occurred_at: t(0), payload: {} },
      { event_type: "human_input_requested", sdk_run_id: "shape-waiting", occurred_at: t(10), payload: { question: "Send it?" } },
    ];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [...finished, ...waiting] }))).status).toBe(207);

    for (const [id, count] of [["shape-done", finished.length], ["shape-waiting", waiting.length]] as const) {
      const pushed = (await until(`a live ${id} with ${count} events`, live.runs, (rs) => rs.some((r) => r.sdk_run_id === id && r.event_count === count), 20_000))
        .find((r) => r.sdk_run_id === id && r.event_count === count)!;
      const read = await apiRun(id, count);
      expect(Object.keys(pushed)).toEqual(Object.keys(read));
      expect(pushed).toEqual(read);
      expect(JSON.stringify(pushed)).toBe(JSON.stringify(read));
      // The list and the session answer the same object (shape-done runs an experiment: the list shows it when asked).
      const listed = (await (await fetch(`${srv.url}/api/runs?agent_name=shaper&q=is:experiment`, bearer(key))).json()) as { runs: Record<string, unknown>[] };
      expect(listed.runs.find((r) => r.sdk_run_id === id)).toEqual(read);
    }

    // Every field of the shape was exercised with a value of its own, not only its default.
    const done = await apiRun("shape-done", finished.length);
    expect(done).toMatchObject({
      sdk_run_id: "shape-done", agent_name: "shaper", status: "success", started_at: t(0), ended_at: t(1875), duration_ms: 1875,
      last_event_at: t(1875), framework: "langgraph", model: "gpt-4o-mini", prompt_tokens: 120, completion_tokens: 30, total_tokens: 150,
      cost_usd: 0.0042, cost_source: "client", session_id: "shape-thread", experiment_id: experiment, dataset_item_id: "item-7",
      repetition: 2, event_count: 4, error_count: 1, last_error: expect.stringContaining("the search timed out"), llm_calls: 1, models: ["gpt-4o-mini"],
    });
    const session = (await (await fetch(`${srv.url}/api/sessions/shape-thread`, bearer(key))).json()) as { runs: Record<string, unknown>[] };
    expect(session.runs).toEqual([done]);
    expect(await apiRun("shape-waiting", waiting.length)).toMatchObject({
      status: "waiting_for_input", pending_question: "Send it?", ended_at: null, duration_ms: null,
      session_id: null, experiment_id: null, dataset_item_id: null, repetition: null,
    });
    live.close();
  }, 60_000);
});
