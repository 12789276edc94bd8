/**
 * A run's tags, metadata, end user, environment and release, and its input/output previews and search text, over
 * real HTTP (docs/API.md, "Tags, metadata, end user, environment, release"): set by any event of the run through
 * POST /api/ingest and /api/ingest/batch, folded (tags: union; metadata: latest per key, its type kept; the rest:
 * latest non-empty), read back from GET /api/runs/{id} and GET /api/runs; a value over a bound is a 422 naming the
 * field; the search text free-text search reads is kept per run and project.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

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

async function ingest(key: string, event: Record<string, unknown>): Promise<Response> {
  return fetch(`${srv.url}/api/ingest`, json(key, event));
}
async function batch(key: string, events: Record<string, unknown>[]): Promise<{ accepted: number; rejected: number; results: any[] }> {
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));
  expect(res.status).toBe(207);
  return (await res.json()) as { accepted: number; rejected: number; results: any[] };
}
const runOf = async (key: string, id: string) => ((await (await fetch(`${srv.url}/api/runs/${id}`, bearer(key))).json()) as { run: Record<string, any> }).run;

/** The search texts of a run's events in a project, as free-text search reads them. */
async function textRows(projectId: number, sdkRunId: string): Promise<string[]> {
  const rows = await srv.ports.clickhouse.query<{ text: string }>(
    "SELECT search_text AS text FROM agent_events FINAL WHERE project_id = {p:UInt64} AND sdk_run_id = {id:String} AND search_text != '' ORDER BY occurred_at, text",
    { p: projectId, id: sdkRunId },
  );
  return rows.map((r) => r.text);
}

describe("a run's tags, metadata, end user, environment and release through the ingest API", () => {
  it("POST /api/ingest sets each field; later events add tags, change metadata keys and the latest labels", async () => {
    const start = await ingest(alice.key, {
      event_type: "run_start", sdk_run_id: "single", agent_name: "refund-bot", occurred_at: t(0),
      tags: ["vip"], metadata: { customer: "acme", tier: 2, trial: true, code: "42" }, end_user: "cust-42", environment: "staging", release: "v1.0",
      payload: { input: [{ role: "system", content: "Be brief." }, { role: "user", content: "Can I get a refund for order 42?" }] },
    });
    expect(start.status).toBe(202);
    let run = (await waitForRun(srv.url, alice.key, "single", (b) => b.run.end_user === "cust-42")).run;
    expect(run).toMatchObject({
      tags: ["vip"], metadata: { customer: "acme", tier: 2, trial: true, code: "42" }, end_user: "cust-42", environment: "staging", release: "v1.0",
      input_preview: "Can I get a refund for order 42?", output_preview: "",
    });
    for (const e of [
      { event_type: "step", sdk_run_id: "single", occurred_at: t(1), tags: ["beta", "vip"], metadata: { tier: 3 }, payload: { node_name: "lookup", phase: "end" } },
      { event_type: "step", sdk_run_id: "single", occurred_at: t(2), environment: "production", release: "v1.1", payload: { node_name: "decide", phase: "end" } },
      { event_type: "run_end", sdk_run_id: "single", occurred_at: t(3), end_user: "cust-43", metadata: { resolved: false }, payload: { output: "Refund issued." } },
    ]) expect((await ingest(alice.key, e)).status).toBe(202);
    run = (await waitForRun(srv.url, alice.key, "single", (b) => b.run.status === "success")).run;
    expect(run).toMatchObject({
      tags: ["beta", "vip"], end_user: "cust-43", environment: "production", release: "v1.1", output_preview: "Refund issued.",
    });
    // Each value keeps the JSON type it was sent as: "42" stays a string, 3 a number, false a boolean.
    expect(run.metadata).toStrictEqual({ customer: "acme", tier: 3, trial: true, code: "42", resolved: false });
    // The runs list carries the same shape.
    const list = (await (await fetch(`${srv.url}/api/runs`, bearer(alice.key))).json()) as { runs: Record<string, any>[] };
    expect(list.runs.find((r) => r.sdk_run_id === "single")).toEqual(run);
  });

  it("POST /api/ingest/batch: every event may add; union and latest across events of one batch", async () => {
    const out = await batch(alice.key, [
      { event_type: "run_start", sdk_run_id: "batched", agent_name: "refund-bot", occurred_at: t(10), tags: ["b", "a"], metadata: { k: "v1" }, end_user: "u1", payload: { input: "hello" } },
      { event_type: "tool_call", sdk_run_id: "batched", occurred_at: t(11), tags: ["c", "a"], metadata: { k: "v2", n: 1.5 }, environment: "dev", payload: { tool_name: "search", phase: "end" } },
      { event_type: "run_end", sdk_run_id: "batched", occurred_at: t(12), release: "2026.11", payload: { output: { ok: true } } },
    ]);
    expect(out).toMatchObject({ accepted: 3, rejected: 0 });
    const run = (await waitForRun(srv.url, alice.key, "batched", (b) => b.run.status === "success")).run;
    expect(run).toMatchObject({ tags: ["a", "b", "c"], metadata: { k: "v2", n: 1.5 }, end_user: "u1", environment: "dev", release: "2026.11", input_preview: "hello", output_preview: '{"ok":true}' });
  });

  it("a run keeps at most 50 tags and 64 metadata keys: later ones are dropped, known keys still change", async () => {
    const tags = (from: number) => Array.from({ length: 30 }, (_, i) => `tag-${String(from + i).padStart(3, "0")}`);
    const keys = (from: number) => Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`key-${String(from + i).padStart(3, "0")}`, from + i]));
    await batch(alice.key, [
      { event_type: "run_start", sdk_run_id: "capped", agent_name: "a", occurred_at: t(20), tags: tags(0), metadata: keys(0), payload: {} },
      { event_type: "step", sdk_run_id: "capped", occurred_at: t(21), tags: tags(30), metadata: { ...keys(40), "key-000": "changed" }, payload: { node_name: "n", phase: "end" } },
      { event_type: "run_end", sdk_run_id: "capped", occurred_at: t(22), payload: {} },
    ]);
    const run = (await waitForRun(srv.url, alice.key, "capped", (b) => b.run.status === "success")).run;
    expect(run.tags).toEqual([...tags(0), ...tags(30)].slice(0, 50));
    expect(Object.keys(run.metadata)).toHaveLength(64);
    expect(run.metadata["key-000"]).toBe("changed");
    expect(run.metadata["key-063"]).toBe(63);
    expect(run.metadata).not.toHaveProperty("key-064");
  });

  it("a value over a bound is a 422 naming the field, alone and as a batch item; the batch's other items are taken", async () => {
    const base = { event_type: "step", sdk_run_id: "bounded", payload: { node_name: "n", phase: "end" } };
    const cases: [Record<string, unknown>, string][] = [
      [{ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tags"],
      [{ tags: ["ok", "x".repeat(201)] }, "tags.1"],
      [{ tags: "vip" }, "tags"],
      [{ metadata: { customer: { nested: true } } }, "metadata.customer"],
      [{ metadata: { customer: ["a"] } }, "metadata.customer"],
      [{ metadata: { customer: null } }, "metadata.customer"],
      [{ metadata: { note: "n".repeat(1025) } }, "metadata.note"],
      [{ metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) }, "metadata"],
      [{ metadata: "acme" }, "metadata"],
      [{ end_user: "" }, "end_user"],
      [{ end_user: "u".repeat(201) }, "end_user"],
      [{ environment: "e".repeat(101) }, "environment"],
      [{ release: "r".repeat(201) }, "release"],
      [{ release: 12 }, "release"],
    ];
    for (const [fields, field] of cases) {
      const res = await ingest(alice.key, { ...base, ...fields });
      expect([field, res.status]).toEqual([field, 422]);
      const body = (await res.json()) as { error: { code: string; field: string; message: string } };
      expect(body.error).toMatchObject({ code: "validation_error", field });
      expect(body.error.message.startsWith(`${field}: `)).toBe(true);
    }
    const out = await batch(alice.key, [{ ...base, tags: ["fine"] }, ...cases.map(([fields]) => ({ ...base, ...fields }))]);
    expect(out).toMatchObject({ accepted: 1, rejected: cases.length });
    expect(out.results.slice(1).map((r) => [r.status, r.error.field])).toEqual(cases.map(([, field]) => [422, field]));
    const run = (await waitForRun(srv.url, alice.key, "bounded", (b) => b.events.length === 1)).run;
    expect(run.tags).toEqual(["fine"]);
  });

  it("writes the run's search text (input, output, error, span names) for its project only; another project's run of the same id shows none of it", async () => {
    const events = (marker: string) => [
      { event_type: "run_start", sdk_run_id: "searchable", agent_name: "a", occurred_at: t(30), tags: [marker], metadata: { owner: marker }, end_user: `user-${marker}`, payload: { input: `Question about ${marker.toUpperCase()}` } },
      { event_type: "step", sdk_run_id: "searchable", occurred_at: t(31), payload: { node_name: `Node-${marker}`, phase: "start" } },
      { event_type: "step", sdk_run_id: "searchable", occurred_at: t(32), payload: { node_name: `Node-${marker}`, phase: "end" } },
      { event_type: "error", sdk_run_id: "searchable", occurred_at: t(33), payload: { error_type: "Timeout", error_message: `Gateway of ${marker}` } },
    ];
    await batch(alice.key, events("alpha"));
    await batch(bob.key, events("bravo"));
    await waitForRun(srv.url, alice.key, "searchable", (b) => b.run.status === "error");
    await waitForRun(srv.url, bob.key, "searchable", (b) => b.run.status === "error");
    const expected = (m: string) => [`question about ${m}`, `node-${m}`, `timeout: gateway of ${m}`];
    await until("alice's search text", () => textRows(alice.id, "searchable"), (rows) => rows.length === 3);
    expect(await textRows(alice.id, "searchable")).toEqual(expected("alpha"));
    await until("bob's search text", () => textRows(bob.id, "searchable"), (rows) => rows.length === 3);
    expect(await textRows(bob.id, "searchable")).toEqual(expected("bravo"));
    // The search the runs list makes, scoped by project: alice's words never find bob's run, nor his hers.
    const search = async (projectId: number, q: string) => (await srv.ports.clickhouse.query<{ id: string }>(
      "SELECT DISTINCT sdk_run_id AS id FROM agent_events WHERE project_id = {p:UInt64} AND search_text LIKE {q:String}", { p: projectId, q: `%${q}%` },
    )).map((r) => r.id);
    expect(await search(alice.id, "gateway of alpha")).toEqual(["searchable"]);
    expect(await search(alice.id, "bravo")).toEqual([]);
    expect(await search(bob.id, "alpha")).toEqual([]);
    const [a, b] = [await runOf(alice.key, "searchable"), await runOf(bob.key, "searchable")];
    expect([a.tags, a.metadata, a.end_user]).toEqual([["alpha"], { owner: "alpha" }, "user-alpha"]);
    expect([b.tags, b.metadata, b.end_user]).toEqual([["bravo"], { owner: "bravo" }, "user-bravo"]);
  });
});
