/**
 * Sessions over real HTTP (docs/API.md, Sessions): session_id on events groups runs; GET /api/sessions lists a
 * user's sessions (filters, cursor) and GET /api/sessions/{id} one with its runs in start order; OTLP traces join a
 * session by gen_ai.conversation.id. As an attacker: another tenant's identical session id, hostile ids.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, hexId } from "./otlp-fixtures.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  [alice, bob] = [await srv.account(), await srv.account()];
});
afterAll(async () => {
  await srv?.close();
});

const t = (s: number) => new Date(Date.UTC(2026, 10, 25, 9, 0, s)).toISOString();

/** One chat turn: a run with its input and output, in a session (or none). */
async function turn(key: string, sdkRunId: string, session: string | undefined, at: number, agent = "chat-bot", tokens = 10): Promise<void> {
  const s = session ? { session_id: session } : {};
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [
    { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: agent, occurred_at: t(at), ...s, payload: { input: { message: `question ${sdkRunId}` } } },
    { event_type: "run_end", sdk_run_id: sdkRunId, occurred_at: t(at + 1), payload: { output: { answer: `answer ${sdkRunId}` }, prompt_tokens: tokens, completion_tokens: 0, model: "gpt-4o" } },
  ] }));
  expect(await res.json()).toMatchObject({ accepted: 2, rejected: 0 });
  await waitForRun(srv.url, key, sdkRunId, (b) => b.run.status === "success");
}

const get = async (key: string, path: string) => {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  return { status: res.status, body: (await res.json()) as any };
};

describe("sessions API", () => {
  it("groups runs by session_id: totals, last status, runs in start order; another tenant's same id is theirs alone", async () => {
    await turn(alice.key, "a-t1", "chat-1", 0);
    await turn(alice.key, "a-t2", "chat-1", 10, "chat-bot", 20);
    await turn(alice.key, "a-x", "chat-2", 5, "helper");
    await turn(alice.key, "a-t3", "chat-1", 20, "chat-bot", 30);
    await turn(alice.key, "a-solo", undefined, 30);
    await turn(bob.key, "b-t1", "chat-1", 40);

    const { status, body } = await get(alice.key, "/api/sessions");
    expect(status).toBe(200);
    expect(body.next_cursor).toBeNull();
    expect(body.sessions.map((s: any) => s.session_id)).toEqual(["chat-1", "chat-2"]); // newest activity first
    expect(body.sessions[0]).toMatchObject({
      session_id: "chat-1", run_count: 3, first_started_at: t(0), last_activity_at: t(21), total_tokens: 60, last_status: "success", agent_names: ["chat-bot"],
    });
    expect(body.sessions[0].total_cost_usd).toBeGreaterThan(0);

    const one = await get(alice.key, "/api/sessions/chat-1");
    expect(one.status).toBe(200);
    expect(one.body.session.run_count).toBe(3);
    expect(one.body.runs.map((r: any) => [r.sdk_run_id, r.session_id])).toEqual([["a-t1", "chat-1"], ["a-t2", "chat-1"], ["a-t3", "chat-1"]]);
    expect((await get(alice.key, "/api/runs/a-solo")).body.run.session_id).toBeNull();

    const bobs = await get(bob.key, "/api/sessions/chat-1");
    expect(bobs.body.runs.map((r: any) => r.sdk_run_id)).toEqual(["b-t1"]);
    expect((await get(bob.key, "/api/sessions/chat-2")).status).toBe(404);
    expect((await get(alice.key, "/api/sessions/no-such-session")).status).toBe(404);
  });

  it("GET /api/runs?session_id&status=waiting_for_input names the session's paused run (how SDKs find what a resume continues), per tenant", async () => {
    const [carol, dave] = [await srv.account(), await srv.account()];
    await turn(carol.key, "w-done", "wait-1", 50);
    const ask = await fetch(`${srv.url}/api/ingest/batch`, json(carol.key, { events: [
      { event_type: "run_start", sdk_run_id: "w-paused", agent_name: "chat-bot", occurred_at: t(52), session_id: "wait-1", payload: {} },
      { event_type: "human_input_requested", sdk_run_id: "w-paused", occurred_at: t(53), payload: { question: "Ship it?" } },
    ] }));
    expect(ask.status).toBe(207);
    await waitForRun(srv.url, carol.key, "w-paused", (b) => b.run.status === "waiting_for_input");
    const found = await get(carol.key, "/api/runs?session_id=wait-1&status=waiting_for_input&limit=1");
    expect(found.body.runs.map((r: any) => r.sdk_run_id)).toEqual(["w-paused"]);
    expect((await get(carol.key, "/api/runs?session_id=wait-1")).body.runs.map((r: any) => r.sdk_run_id)).toEqual(["w-paused", "w-done"]);
    expect((await get(dave.key, "/api/runs?session_id=wait-1&status=waiting_for_input")).body.runs).toEqual([]);
    expect((await get(carol.key, "/api/runs?session_id=a&session_id=b")).body.error).toMatchObject({ field: "session_id" });
    // Hostile filters find nothing and break nothing: NUL, a lone surrogate's bytes, truncated UTF-8, 5,000 chars, SQL.
    for (const q of ["%00", "a%00b", "%ED%A0%80", "%F0%9F%98", "x".repeat(5000), "'%3B%20DROP%20TABLE%20agent_runs--"]) {
      const r = await get(carol.key, `/api/runs?session_id=${q}&status=waiting_for_input`);
      expect([r.status, r.body.runs], q.slice(0, 20)).toEqual([200, []]);
    }
    // and a valid event sent afterwards is stored and found by its session.
    await turn(carol.key, "w-after", "wait-2", 60);
    expect((await get(carol.key, "/api/runs?session_id=wait-2")).body.runs.map((r: any) => r.sdk_run_id)).toEqual(["w-after"]);
  });

  it("filters by agent and time, pages with a cursor, and checks its parameters", async () => {
    expect((await get(alice.key, "/api/sessions?agent_name=helper")).body.sessions.map((s: any) => s.session_id)).toEqual(["chat-2"]);
    expect((await get(alice.key, `/api/sessions?since=${encodeURIComponent(t(15))}`)).body.sessions.map((s: any) => s.session_id)).toEqual(["chat-1"]);
    const first = await get(alice.key, "/api/sessions?limit=1");
    expect(first.body.sessions.map((s: any) => s.session_id)).toEqual(["chat-1"]);
    const second = await get(alice.key, `/api/sessions?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.sessions.map((s: any) => s.session_id)).toEqual(["chat-2"]);
    expect(second.body.next_cursor).toBeNull();
    for (const [query, field] of [["limit=0", "limit"], ["since=yesterday", "since"], ["cursor=garbage", "cursor"]]) {
      const r = await get(alice.key, `/api/sessions?${query}`);
      expect(r.status, query).toBe(422);
      expect(r.body.error.field).toBe(field);
    }
    expect((await fetch(`${srv.url}/api/sessions`)).status).toBe(401);
    // Hostile ids in the path and the filters: a clear answer, never a 500.
    for (const path of ["/api/sessions/%00", "/api/sessions/%ED%A0%80", `/api/sessions/${"x".repeat(5000)}`, "/api/runs?score_name=%00", "/api/sessions?agent_name=%00"]) {
      const r = await fetch(`${srv.url}${path}`, bearer(alice.key));
      expect([200, 404, 422], path).toContain(r.status);
    }
  });

  it("a run's session is set by its first event that names one; bad session ids are refused naming the field", async () => {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(alice.key, { events: [
      { event_type: "run_start", sdk_run_id: "a-first", agent_name: "chat-bot", session_id: "chat-9", payload: {} },
      { event_type: "run_end", sdk_run_id: "a-first", session_id: "chat-other", payload: {} },
      { event_type: "run_start", sdk_run_id: "a-bad", agent_name: "chat-bot", session_id: "s".repeat(201), payload: {} },
      { event_type: "run_start", sdk_run_id: "a-bad", agent_name: "chat-bot", session_id: "nul\u0000here", payload: {} },
      { event_type: "run_start", sdk_run_id: "a-bad", agent_name: "chat-bot", session_id: "", payload: {} },
    ] }));
    const body = (await res.json()) as { accepted: number; results: { status: number; error?: { field?: string } }[] };
    expect(body.accepted).toBe(2);
    expect(body.results.slice(2).map((r) => [r.status, r.error?.field])).toEqual([[422, "session_id"], [422, "session_id"], [422, "session_id"]]);
    const { run } = await waitForRun(srv.url, alice.key, "a-first", (b) => b.run.status === "success");
    expect(run.session_id).toBe("chat-9");
  });

  it("an OTLP trace joins the session of gen_ai.conversation.id (or session.id)", async () => {
    const [traceId, root] = [hexId(16), hexId(8)];
    const now = Date.now();
    const spans = [{ traceId, spanId: root, name: "invoke_agent bot", startMs: now - 100, endMs: now, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "otel-bot", "gen_ai.conversation.id": "conv-42" } }];
    const res = await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${alice.key}`, "content-type": "application/json" }, body: exportJson(spans) });
    expect(res.status).toBe(200);
    const { run } = await waitForRun(srv.url, alice.key, traceId, (b) => b.run.status === "success");
    expect(run.session_id).toBe("conv-42");
    expect((await get(alice.key, "/api/sessions/conv-42")).body.runs.map((r: any) => r.sdk_run_id)).toEqual([traceId]);
  });
});
