/**
 * The MCP server over real HTTP (docs/MCP.md), spoken to by the TypeScript SDK's own Client over its Streamable HTTP
 * transport: the tools listed with their schemas, each one called against runs, datasets and experiments sent through
 * the ingest API and the HTTP API; another project's key finds nothing of the first's; an ingest-only, revoked or
 * removed member's key is refused before any MCP exchange; a viewer reads but writes nothing; wait_for_run answers with
 * a run sent while it waits, and times out cleanly; hostile arguments are tool errors naming what is wrong; every
 * call is in the project's audit log.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { announceAccessChange, removeMemberNow } from "../../accounts/index.js";
import { createApiKey, revokeApiKey } from "../../stores/accounts/api-keys.js";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { bearer, json, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number };
let owner: { id: number; email: string };
let ownerKey: string;
let viewerKey: string;
let bob: TestAccount;
let experiments: string[];
const clients: Client[] = [];

const BIG = "x".repeat(60_000);

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "runwatch-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

interface Called { isError: boolean; text: string; body: any }
async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Called> {
  const r = await client.callTool({ name, arguments: args });
  const text = (r.content as { type: string; text: string }[])[0]!.text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { isError: r.isError === true, text, body };
}

async function send(key: string, events: unknown[]): Promise<void> {
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));
  expect(res.status).toBe(207);
}

const runEvents = (id: string, agent: string, opts: { error?: boolean; input?: unknown } = {}) => [
  { event_type: "run_start", sdk_run_id: id, agent_name: agent, tags: ["vip"], metadata: { customer: "acme" }, payload: { input: opts.input ?? { question: `q ${id}` } } },
  { event_type: "step", sdk_run_id: id, span_id: `${id}-plan`, payload: { node_name: "plan", phase: "start", input: { big: BIG } } },
  { event_type: "step", sdk_run_id: id, span_id: `${id}-plan`, payload: { node_name: "plan", phase: "end", output: "planned" } },
  { event_type: "step", sdk_run_id: id, span_id: `${id}-llm`, parent_span_id: `${id}-plan`, payload: { node_name: "call_model", kind: "llm", phase: "end", model: "gpt-4o", prompt_tokens: 10, completion_tokens: 5 } },
  opts.error
    ? { event_type: "error", sdk_run_id: id, payload: { error_type: "RuntimeError", error_message: "tool failed" } }
    : { event_type: "run_end", sdk_run_id: id, payload: { output: `answer ${id}` } },
];

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Alpha");
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  const viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  viewerKey = await srv.key(viewer.id, { projectId: team.id });
  bob = await srv.account();

  await send(ownerKey, [...runEvents("mcp-1", "support"), ...runEvents("mcp-2", "support", { error: true }), ...runEvents("mcp-3", "billing")]);
  await send(bob.key, runEvents("bob-1", "support"));
  for (const id of ["mcp-1", "mcp-3"]) await waitForRun(srv.url, ownerKey, id, (b) => b.run.status === "success");
  await waitForRun(srv.url, ownerKey, "mcp-2", (b) => b.run.status === "error");
  await waitForRun(srv.url, bob.key, "bob-1", (b) => b.run.status === "success");

  // A dataset, two experiments over it (runs sent with their ids), and a queue.
  const post = async (path: string, body: unknown) => (await (await fetch(`${srv.url}${path}`, json(ownerKey, body))).json()) as any;
  await post("/api/datasets", { name: "qa" });
  await post("/api/datasets/qa/items", { items: ["a", "b"].map((id) => ({ id, input: { q: id }, expected_output: id.toUpperCase() })) });
  experiments = [];
  for (const [name, outputs] of [["v1", ["A", "B"]], ["v2", ["A", "wrong"]]] as const) {
    const id = (await post("/api/experiments", { dataset: "qa", name, agent_name: "qa-bot" })).experiment.id as string;
    experiments.push(id);
    for (const [k, item] of ["a", "b"].entries()) {
      const run = `${name}-${item}`;
      await send(ownerKey, [
        { event_type: "run_start", sdk_run_id: run, agent_name: "qa-bot", payload: { input: { q: item }, experiment_id: id, dataset_item_id: item, repetition: 1 } },
        { event_type: "run_end", sdk_run_id: run, payload: { output: outputs[k] } },
      ]);
      await waitForRun(srv.url, ownerKey, run, (b) => b.run.status === "success");
      await post("/api/scores", { sdk_run_id: run, name: "correct", value: outputs[k] === item.toUpperCase() });
    }
  }
  await post("/api/annotation-queues", { name: "triage", score_configs: [{ name: "ok", type: "boolean" }] });
}, 120_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await srv?.close();
});

describe("the MCP server", () => {
  it("lists its tools with their JSON schemas and descriptions", async () => {
    const client = await connect(ownerKey);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "search_runs", "get_run", "get_span", "wait_for_run", "get_scores", "list_agents", "list_datasets", "list_dataset_items",
      "get_experiment", "compare_experiments", "describe_sql_schema", "run_sql", "add_to_dataset", "add_to_queue", "post_score",
    ]);
    for (const t of tools) {
      expect(t.description!.length, t.name).toBeGreaterThan(80);
      expect(t.inputSchema.type).toBe("object");
    }
    const search = tools.find((t) => t.name === "search_runs")!;
    expect(search.inputSchema.properties).toMatchObject({ filter: { type: "string", maxLength: 2000 }, limit: { type: "integer", maximum: 100 } });
    expect(search.annotations).toMatchObject({ readOnlyHint: true });
    expect(tools.find((t) => t.name === "post_score")!.annotations).toMatchObject({ readOnlyHint: false });
  });

  it("searches runs with the explorer's filter, pages them, and reads a run, its span tree and a span's payload in windows", async () => {
    const client = await connect(ownerKey);
    const errors = await call(client, "search_runs", { filter: "agent:support status:error" });
    expect(errors.isError).toBe(false);
    expect(errors.body.runs.map((r: any) => r.sdk_run_id)).toEqual(["mcp-2"]);
    const first = await call(client, "search_runs", { filter: "tag:vip", limit: 2, sort: "start_time", order: "asc" });
    expect(first.body.runs).toHaveLength(2);
    const rest = await call(client, "search_runs", { filter: "tag:vip", limit: 2, sort: "start_time", order: "asc", cursor: first.body.next_cursor });
    expect([...first.body.runs, ...rest.body.runs].map((r: any) => r.sdk_run_id).sort()).toEqual(["mcp-1", "mcp-2", "mcp-3"]);

    const run = await call(client, "get_run", { sdk_run_id: "mcp-1", span_limit: 1 });
    expect(run.body.run).toMatchObject({ sdk_run_id: "mcp-1", status: "success", agent_name: "support", tags: ["vip"], metadata: { customer: "acme" }, total_tokens: 15 });
    expect(run.body.input).toEqual({ question: "q mcp-1" });
    expect(run.body.total_spans).toBe(2);
    expect(run.body.spans.map((s: any) => [s.span_id, s.depth])).toEqual([["mcp-1-plan", 0]]);
    const next = await call(client, "get_run", { sdk_run_id: "mcp-1", span_limit: 1, span_cursor: run.body.next_span_cursor });
    expect(next.body.spans.map((s: any) => [s.span_id, s.depth, s.model])).toEqual([["mcp-1-llm", 1, "gpt-4o"]]);
    expect(next.body.next_span_cursor).toBeNull();

    let text = "";
    let offset: number | null = 0;
    while (offset !== null) {
      const window: Called = await call(client, "get_span", { sdk_run_id: "mcp-1", span_id: "mcp-1-plan", offset, max_chars: 25_000 });
      expect(window.isError).toBe(false);
      expect(window.body.text.length).toBeLessThanOrEqual(25_000);
      text += window.body.text;
      offset = window.body.next_offset;
    }
    const span = JSON.parse(text);
    expect(span.input).toEqual({ big: BIG });
    expect(span.output).toBe("planned");
  });

  it("describes the SQL tables and answers a query over the project's rows, cut at max_rows, refusing what is not a read", async () => {
    const client = await connect(ownerKey);
    const schema = await call(client, "describe_sql_schema");
    const runs = schema.body.tables.find((t: any) => t.name === "runs");
    expect(runs.columns.map((c: any) => c.name)).toEqual(expect.arrayContaining(["sdk_run_id", "agent_name", "status"]));
    const byAgent = await call(client, "run_sql", {
      sql: "SELECT agent_name, count() AS n, countIf(status = 'error') AS errors FROM runs WHERE agent_name IN {agents:Array(String)} GROUP BY agent_name ORDER BY agent_name",
      params: { agents: ["support", "billing"] },
    });
    expect(byAgent.isError, byAgent.text).toBe(false);
    expect(byAgent.body.columns.map((c: any) => c.name)).toEqual(["agent_name", "n", "errors"]);
    expect(byAgent.body.rows.map((r: any[]) => [r[0], Number(r[1]), Number(r[2])])).toEqual([["billing", 1, 0], ["support", 2, 1]]);
    expect(byAgent.body.truncated).toBe(false);
    const cut = await call(client, "run_sql", { sql: "SELECT sdk_run_id FROM runs ORDER BY sdk_run_id", max_rows: 2 });
    expect([cut.body.rows.length, cut.body.truncated, cut.body.limit]).toEqual([2, true, "rows"]);
    for (const sql of ["SELECT * FROM system.tables", "SELECT * FROM url('http://127.0.0.1:9/x', CSV)", "DROP TABLE runs", "SELECT 1; SELECT 2"]) {
      const r = await call(client, "run_sql", { sql });
      expect([sql, r.isError]).toEqual([sql, true]);
      expect(r.text).toMatch(/sql|not allowed|database/i);
      expect(r.text).not.toMatch(/agent_runs|DB::|Stack|at \w+ \(/);
    }
    // Another project's key reads its own rows only.
    const other = await call(await connect(bob.key), "run_sql", { sql: "SELECT sdk_run_id FROM runs ORDER BY sdk_run_id" });
    expect(other.body.rows).toEqual([["bob-1"]]);
  });

  it("cuts long strings with a marker instead of sending them whole", async () => {
    const client = await connect(ownerKey);
    await send(ownerKey, [
      { event_type: "run_start", sdk_run_id: "long-1", agent_name: "support", payload: { input: "y".repeat(10_000) } },
      { event_type: "run_end", sdk_run_id: "long-1", payload: { output: "done" } },
    ]);
    await waitForRun(srv.url, ownerKey, "long-1", (b) => b.run.status === "success");
    const run = await call(client, "get_run", { sdk_run_id: "long-1" });
    expect(run.body.input).toMatch(/^y{2000}…\[cut: 8000 more characters\]$/);
  });

  it("reads scores, agents, datasets, items, experiments and their comparison", async () => {
    const client = await connect(ownerKey);
    const byRun = await call(client, "get_scores", { sdk_run_id: "v2-b" });
    expect(byRun.body.scores.map((s: any) => [s.name, s.value])).toEqual([["correct", false]]);
    const byName = await call(client, "get_scores", { name: "correct", filter: "is:experiment agent:qa-bot" });
    expect(byName.body.runs).toHaveLength(4);
    expect(byName.body.page_summary).toMatchObject({ runs: 4, numeric_values: 4, mean: 0.75 });

    const agents = await call(client, "list_agents", {});
    expect(agents.body.agents.map((a: any) => a.name).sort()).toEqual(expect.arrayContaining(["billing", "support"]));
    expect(agents.body.agents.find((a: any) => a.name === "support").stats).toMatchObject({ runs: 3, errors: 1 });

    const datasets = await call(client, "list_datasets", {});
    expect(datasets.body.datasets).toMatchObject([{ name: "qa", item_count: 2 }]);
    const items = await call(client, "list_dataset_items", { dataset: "qa", limit: 1 });
    expect(items.body.items.map((i: any) => i.id)).toEqual(["a"]);
    const more = await call(client, "list_dataset_items", { dataset: "qa", limit: 1, cursor: items.body.next_cursor });
    expect(more.body).toMatchObject({ items: [{ id: "b", expected_output: "B" }], next_cursor: null });

    const listed = await call(client, "get_experiment", { dataset: "qa" });
    expect(listed.body.experiments.map((e: any) => e.name)).toEqual(["v2", "v1"]);
    const v2 = await call(client, "get_experiment", { experiment_id: experiments[1] });
    expect(v2.body.experiment).toMatchObject({ name: "v2", completed_count: 2, scores: { correct: { mean: 0.5, count: 2 } } });
    expect(v2.body.results.map((r: any) => [r.item_id, r.output])).toEqual([["a", "A"], ["b", "wrong"]]);

    const compared = await call(client, "compare_experiments", { experiment_ids: [experiments[1], experiments[0]], baseline: experiments[0] });
    expect(compared.body).toMatchObject({ dataset: "qa", baseline: experiments[0], regression_count: 1 });
    expect(compared.body.items.map((i: any) => [i.item.id, i.regression])).toEqual([["a", false], ["b", true]]);
    const regressed = await call(client, "compare_experiments", { experiment_ids: experiments, baseline: experiments[0], only_regressions: true });
    expect(regressed.body.items.map((i: any) => i.item.id)).toEqual(["b"]);
  });

  it("writes as the HTTP API does: a run into a dataset, runs into a queue, a score", async () => {
    const client = await connect(ownerKey);
    const added = await call(client, "add_to_dataset", { sdk_run_id: "mcp-3", dataset: "qa", use_run_output: true });
    expect(added.body).toMatchObject({ dataset: "qa", version: 2, changed: 1 });
    const items = (await (await fetch(`${srv.url}/api/datasets/qa/items`, bearer(ownerKey))).json()) as any;
    expect(items.items.find((i: any) => i.source_sdk_run_id === "mcp-3")).toMatchObject({ input: { question: "q mcp-3" }, expected_output: "answer mcp-3", source: "run" });

    const queues = await call(client, "add_to_queue", {});
    const queue = queues.body.queues.find((q: any) => q.name === "triage");
    const queued = await call(client, "add_to_queue", { queue_id: queue.id, runs: [{ sdk_run_id: "mcp-2" }, { sdk_run_id: "mcp-1", span_id: "mcp-1-llm" }] });
    expect(queued.body).toMatchObject({ queue: "triage", added: 2 });

    const scored = await call(client, "post_score", { sdk_run_id: "mcp-1", name: "helpful", value: 0.9, comment: "good" });
    expect(scored.isError).toBe(false);
    const scores = (await (await fetch(`${srv.url}/api/runs/mcp-1/scores`, bearer(ownerKey))).json()) as any;
    expect(scores.scores).toMatchObject([{ score_id: scored.body.score_id, name: "helpful", value: 0.9, comment: "good" }]);
  });

  it("waits for the next matching run sent during the call, and times out cleanly when none comes", async () => {
    const client = await connect(ownerKey);
    const waiting = call(client, "wait_for_run", { filter: "agent:watched status:error", timeout_seconds: 30 });
    await new Promise((r) => setTimeout(r, 500));
    // A run that does not match, then one that does.
    await send(ownerKey, runEvents("watch-ok", "watched"));
    await new Promise((r) => setTimeout(r, 300));
    await send(ownerKey, runEvents("watch-bad", "watched", { error: true }));
    const got = await waiting;
    expect(got.isError).toBe(false);
    expect(got.body).toMatchObject({ matched: true, run: { sdk_run_id: "watch-bad", status: "error" } });

    const started = Date.now();
    const none = await call(client, "wait_for_run", { filter: "agent:nobody", timeout_seconds: 2 });
    expect(none.body).toMatchObject({ matched: false, message: "no run matched within 2 s" });
    expect(Date.now() - started).toBeLessThan(6_000);

    // A run that starts, with on=started.
    const starting = call(client, "wait_for_run", { filter: "agent:starter", on: "started", timeout_seconds: 30 });
    await new Promise((r) => setTimeout(r, 500));
    await send(ownerKey, [{ event_type: "run_start", sdk_run_id: "start-1", agent_name: "starter", payload: {} }]);
    expect((await starting).body).toMatchObject({ matched: true, run: { sdk_run_id: "start-1", status: "running" } });

    // Another project's runs never wake a wait of this one.
    const quiet = call(client, "wait_for_run", { filter: "agent:support", on: "started", timeout_seconds: 3 });
    await new Promise((r) => setTimeout(r, 300));
    await send(bob.key, runEvents("bob-2", "support"));
    expect((await quiet).body.matched).toBe(false);
  });
});

describe("who may use it", () => {
  it("finds nothing of another project: its ids are not found with this project's key", async () => {
    const client = await connect(bob.key);
    const runs = (await call(client, "search_runs", {})).body.runs.map((r: any) => r.sdk_run_id);
    expect(runs).toContain("bob-1");
    expect(runs.filter((id: string) => !id.startsWith("bob-"))).toEqual([]);
    for (const [tool, args] of [
      ["get_run", { sdk_run_id: "mcp-1" }], ["get_span", { sdk_run_id: "mcp-1", span_id: "mcp-1-plan" }],
      ["get_scores", { sdk_run_id: "v1-a" }], ["list_dataset_items", { dataset: "qa" }], ["get_experiment", { experiment_id: experiments[0] }],
      ["compare_experiments", { experiment_ids: experiments }], ["post_score", { sdk_run_id: "mcp-1", name: "x", value: 1 }],
      ["list_agents", { agent: "qa-bot" }],
    ] as const) {
      const r = await call(client, tool, args);
      expect([tool, r.isError, r.text]).toEqual([tool, true, expect.stringMatching(/not found|no (dataset|experiment|agent)/i)]);
    }
    expect((await call(client, "list_datasets")).body.datasets).toEqual([]);
    expect((await call(client, "get_scores", { name: "correct", filter: "is:experiment" })).body.runs).toEqual([]);
  });

  it("refuses an ingest-only, revoked or removed member's key before any MCP exchange", async () => {
    const initialize = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } };
    const post = (key: string | undefined) => fetch(`${srv.url}/mcp`, json(key, initialize, { accept: "application/json, text/event-stream" }));
    const ingestOnly = await srv.key(owner.id, { projectId: team.id, scope: "ingest" });
    const refused = await post(ingestOnly);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: { code: "insufficient_scope" } });
    expect((await post(undefined)).status).toBe(401);

    const revoked = await createApiKey(srv.ports.sql, owner.id, "to revoke", null, { projectId: team.id });
    expect((await post(revoked.key)).status).toBe(200);
    await revokeApiKey(srv.ports.sql, team.id, revoked.info.id, owner.id);
    await announceAccessChange(srv.ports.pubsub, { keyId: revoked.info.id });
    await until("the revoked key refused", async () => (await post(revoked.key)).status, (s) => s === 401, 10_000);

    const leaver = await srv.user();
    await setMember(srv.ports.sql, team.id, leaver.email, "member", owner.id);
    const leaverKey = await srv.key(leaver.id, { projectId: team.id });
    expect((await post(leaverKey)).status).toBe(200);
    await removeMemberNow(srv.ports.sql, srv.ports.pubsub, team.id, leaver.email, owner.id);
    await until("the removed member's key refused", async () => (await post(leaverKey)).status, (s) => s === 401, 10_000);

    // No sessions: no stream to open, none to end.
    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(`${srv.url}/mcp`, { method, headers: { authorization: `Bearer ${ownerKey}` } });
      expect([method, res.status, res.headers.get("allow")]).toEqual([method, 405, "POST"]);
    }
  });

  it("lets a viewer read, and refuses a viewer's writes naming the role they take", async () => {
    const client = await connect(viewerKey);
    expect((await call(client, "search_runs", { filter: "agent:support" })).body.runs.length).toBeGreaterThan(0);
    for (const [tool, args] of [
      ["post_score", { sdk_run_id: "mcp-1", name: "x", value: 1 }],
      ["add_to_dataset", { sdk_run_id: "mcp-1", dataset: "qa" }],
      ["add_to_queue", {}],
    ] as const) {
      const r = await call(client, tool, args);
      expect([tool, r.isError]).toEqual([tool, true]);
      expect(r.text).toMatch(new RegExp(`^${tool} is refused: .*now a viewer of its project.*it takes member or above`));
    }
    const scores = (await (await fetch(`${srv.url}/api/runs/mcp-1/scores`, bearer(ownerKey))).json()) as any;
    expect(scores.scores.map((s: any) => s.name)).not.toContain("x");
  });

  it("answers hostile arguments with tool errors naming the argument or the limit", async () => {
    const client = await connect(ownerKey);
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ["search_runs", { limit: 1_000_000 }, /limit/],
      ["search_runs", { filter: "cost>abc" }, /filter.*cost/],
      ["search_runs", { filter: "x".repeat(3_000) }, /filter/],
      ["search_runs", { cursor: "not-a-cursor" }, /cursor/],
      ["search_runs", { sort: "nonsense" }, /sort must be one of/],
      ["get_run", { sdk_run_id: "no-such-run" }, /run "no-such-run" not found/],
      ["get_run", { sdk_run_id: "mcp-1", span_cursor: "nope" }, /span_cursor/],
      ["get_run", { sdk_run_id: "r".repeat(10_000) }, /sdk_run_id/],
      ["get_span", { sdk_run_id: "mcp-1", span_id: "nope" }, /has no span "nope"/],
      ["get_span", { sdk_run_id: "mcp-1", span_id: "mcp-1-plan", max_chars: 10_000_000 }, /max_chars/],
      ["get_scores", {}, /either sdk_run_id/],
      ["list_dataset_items", { dataset: "nope" }, /no dataset named "nope"/],
      ["list_dataset_items", { dataset: "qa", version: 99 }, /no version 99/],
      ["get_experiment", { experiment_id: "00000000-0000-4000-8000-000000000000" }, /no experiment/],
      ["compare_experiments", { experiment_ids: Array(6).fill(experiments[0]) }, /experiment_ids/],
      ["post_score", { sdk_run_id: "mcp-1", name: "n", value: "v".repeat(500) }, /value/],
      ["wait_for_run", { timeout_seconds: 3_600 }, /timeout_seconds/],
      ["wait_for_run", { filter: "status:bogus" }, /filter.*status/],
      ["no_such_tool", {}, /no_such_tool/],
    ];
    for (const [tool, args, message] of cases) {
      const r = await call(client, tool, args);
      expect([tool, r.isError], JSON.stringify(args).slice(0, 80)).toEqual([tool, true]);
      expect(r.text, tool).toMatch(message);
      expect(r.text, tool).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
    }
  });

  it("audits every call: who, which tool, whether it answered", async () => {
    const client = await connect(ownerKey);
    await call(client, "list_datasets");
    await call(client, "get_run", { sdk_run_id: "audit-missing" });
    const entries = await until("the calls audited", () => auditLog(srv.ports.sql, team.id, 500),
      (log) => log.some((e) => e.action === "mcp.tool_call" && e.target === "get_run" && e.details.ok === false && String(e.details.error).includes("audit-missing")));
    const mine = entries.filter((e) => e.action === "mcp.tool_call");
    expect(mine.find((e) => e.target === "list_datasets")).toMatchObject({ actor: owner.email, details: { ok: true, key_id: expect.any(Number) } });
    expect(mine.some((e) => e.target === "no_such_tool" && e.details.ok === false)).toBe(true);
  });
});
