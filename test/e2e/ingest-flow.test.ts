/**
 * End to end through ingest → log → pipeline → ClickHouse → read API, over real HTTP: the 7 event types move a
 * run running → waiting_for_input → running → success; previews are truncated to 500; an error run ends in
 * error; GET /api/runs filters and paginates; unknown runs are 404.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, waitForRun, type TestServer } from "./harness.js";

let srv: TestServer;
let key: string;
let otherKey: string;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true });
  key = await srv.key((await srv.user()).id);
  otherKey = await srv.key((await srv.user()).id);
});
afterAll(() => srv?.close());

const send = async (event: Record<string, unknown>, k = key) => {
  const res = await fetch(`${srv.url}/api/ingest`, json(k, event));
  expect(res.status, await res.clone().text()).toBe(202);
  return (await res.json()) as { event_id: string; run_id: string };
};

const t = (s: number) => new Date(Date.UTC(2026, 10, 23, 10, 0, s)).toISOString();

describe("a run through all 7 event types", () => {
  const id = "flow-success-1";
  const long = "L".repeat(2000);

  it("running → waiting_for_input → running → success, every event stored in order, previews truncated", async () => {
    const ids: string[] = [];
    ids.push((await send({ event_type: "run_start", sdk_run_id: id, agent_name: "researcher", occurred_at: t(0), payload: { framework: "langgraph", input: { q: "hi" } } })).event_id);
    ids.push((await send({ event_type: "step", sdk_run_id: id, occurred_at: t(1), payload: { node_name: "plan", phase: "start" } })).event_id);
    ids.push((await send({ event_type: "tool_call", sdk_run_id: id, occurred_at: t(2), payload: { tool_name: "search", phase: "end", input_preview: long, output_preview: long, duration_ms: 12 } })).event_id);
    let body = await waitForRun(srv.url, key, id, (b) => b.events.length === 3 && b.run.event_count === 3);
    expect(body.run.status).toBe("running");
    expect(body.run.agent_name).toBe("researcher");

    ids.push((await send({ event_type: "human_input_requested", sdk_run_id: id, occurred_at: t(3), payload: { question: "Approve?", context: { n: 1 }, channel: "dashboard" } })).event_id);
    body = await waitForRun(srv.url, key, id, (b) => b.events.length === 4 && b.run.event_count === 4);
    expect(body.run.status).toBe("waiting_for_input");
    expect(body.run.pending_question).toBe("Approve?");

    ids.push((await send({ event_type: "human_input_received", sdk_run_id: id, occurred_at: t(4), payload: { response: "yes", responded_by: "ada" } })).event_id);
    body = await waitForRun(srv.url, key, id, (b) => b.events.length === 5 && b.run.event_count === 5);
    expect(body.run.status).toBe("running");

    ids.push((await send({ event_type: "step", sdk_run_id: id, occurred_at: t(5), payload: { node_name: "plan", phase: "end", duration_ms: 4000, output: { ok: true } } })).event_id);
    ids.push((await send({ event_type: "run_end", sdk_run_id: id, occurred_at: t(6), payload: { output: { a: 1 }, prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, cost_usd: 0.0123, model: "gpt-4o-mini" } })).event_id);
    body = await waitForRun(srv.url, key, id, (b) => b.events.length === 7 && b.run.status === "success");

    expect(body.events.map((e) => e.event_id)).toEqual(ids);
    expect(body.events.map((e) => e.event_type)).toEqual(["run_start", "step", "tool_call", "human_input_requested", "human_input_received", "step", "run_end"]);
    const tool = body.events[2]!.payload;
    expect(tool.input_preview).toHaveLength(500);
    expect(tool.output_preview).toHaveLength(500);
    expect(tool.output_preview.startsWith("L".repeat(499))).toBe(true);
    expect(tool.output_preview_truncated).toBe(true);
    expect(body.run).toMatchObject({
      sdk_run_id: id, status: "success", model: "gpt-4o-mini", prompt_tokens: 100, completion_tokens: 50, total_tokens: 150,
      started_at: t(0), ended_at: t(6), duration_ms: 6000, event_count: 7, pending_question: "",
    });
    expect(body.run.cost_usd).toBeCloseTo(0.0123, 6);
    expect(body.events[0]!.occurred_at).toBe(t(0));
  });

  it("a run with an error ends in error, with the message on the run", async () => {
    const eid = "flow-error-1";
    await send({ event_type: "run_start", sdk_run_id: eid, agent_name: "researcher", occurred_at: t(10), payload: {} });
    await send({ event_type: "step", sdk_run_id: eid, occurred_at: t(11), payload: { node_name: "fetch", phase: "start" } });
    await send({ event_type: "error", sdk_run_id: eid, occurred_at: t(12), payload: { error_type: "TimeoutError", error_message: "upstream timed out", traceback: "Traceback..." } });
    const body = await waitForRun(srv.url, key, eid, (b) => b.events.length === 3 && b.run.event_count === 3);
    expect(body.run.status).toBe("error");
    expect(body.run.error_count).toBe(1);
    expect(body.run.last_error).toContain("upstream timed out");
  });

  it("the batch endpoint feeds the same pipeline", async () => {
    const bid = "flow-batch-1";
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, {
      events: [
        { event_type: "run_start", sdk_run_id: bid, agent_name: "batcher", occurred_at: t(20), payload: {} },
        { event_type: "step", sdk_run_id: bid, occurred_at: t(21), payload: { node_name: "a", phase: "end" } },
        { event_type: "run_end", sdk_run_id: bid, occurred_at: t(22), payload: { total_tokens: 9 } },
      ],
    }));
    expect(res.status).toBe(207);
    const body = await waitForRun(srv.url, key, bid, (b) => b.events.length === 3 && b.run.event_count === 3);
    expect(body.run.status).toBe("success");
  });
});

describe("GET /api/runs", () => {
  it("lists the key owner's runs only, newest first, with filters and cursor pagination", async () => {
    await waitForRun(srv.url, key, "flow-batch-1", () => true);
    await send({ event_type: "run_start", sdk_run_id: "someone-else", agent_name: "researcher", payload: {} }, otherKey);
    await waitForRun(srv.url, otherKey, "someone-else", () => true);

    const all = (await (await fetch(`${srv.url}/api/runs`, bearer(key))).json()) as { runs: any[]; next_cursor: string | null };
    const names = all.runs.map((r) => r.sdk_run_id);
    expect(names).toEqual(expect.arrayContaining(["flow-success-1", "flow-error-1", "flow-batch-1"]));
    expect(names).not.toContain("someone-else");

    const errors = (await (await fetch(`${srv.url}/api/runs?status=error`, bearer(key))).json()) as { runs: any[] };
    expect(errors.runs.map((r) => r.sdk_run_id)).toEqual(["flow-error-1"]);
    const batcher = (await (await fetch(`${srv.url}/api/runs?agent_name=batcher`, bearer(key))).json()) as { runs: any[] };
    expect(batcher.runs.map((r) => r.sdk_run_id)).toEqual(["flow-batch-1"]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (await fetch(`${srv.url}/api/runs?limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, bearer(key))).json()) as { runs: any[]; next_cursor: string | null };
      expect(page.runs.length).toBeLessThanOrEqual(1);
      seen.push(...page.runs.map((r) => r.sdk_run_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(names);
  });

  it("422 naming the bad query parameter, 401 without a key", async () => {
    for (const [q, field] of [["status=done", "status"], ["limit=0", "limit"], ["limit=abc", "limit"], ["since=not-a-date", "since"]] as const) {
      const res = await fetch(`${srv.url}/api/runs?${q}`, bearer(key));
      expect(res.status).toBe(422);
      expect(((await res.json()) as any).error).toMatchObject({ code: "validation_error", field });
    }
    const res = await fetch(`${srv.url}/api/runs`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.code).toBe("missing_api_key");
  });

  it("404 JSON for a run that does not exist or belongs to someone else", async () => {
    for (const [id, k] of [["no-such-run", key], ["someone-else", key]] as const) {
      const res = await fetch(`${srv.url}/api/runs/${id}`, bearer(k));
      expect(res.status).toBe(404);
      expect(((await res.json()) as any).error.code).toBe("not_found");
    }
  });
});
