/**
 * Every query of docs/ANALYTICS.md, read from the document itself, run against a known data set that went through
 * the real ingest API and pipeline (whichever ClickHouse the suite runs on), with its results checked: a query
 * edited in the doc is tested as written, and a schema change that breaks one fails here.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";

const DOC = new URL("../../docs/ANALYTICS.md", import.meta.url);
const queries = new Map([...readFileSync(DOC, "utf8").matchAll(/<!-- query: ([\w-]+) -->[\s\S]*?```sql\n([\s\S]*?)```/g)].map((m) => [m[1]!, m[2]!]));

let srv: TestServer;
let acct: TestAccount;
const at = (day: number, s: number) => new Date(Date.UTC(2026, 10, day, 10, 0, s)).toISOString();

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  acct = await srv.account();
  const llm = (run: string, day: number, s: number, model: string, provider: string, prompt: number, completion: number, duration: number, cached = 0) =>
    ({ event_type: "step", sdk_run_id: run, occurred_at: at(day, s), span_id: `${run}-llm`, payload: { node_name: "call_model", kind: "llm", phase: "end", model, provider, prompt_tokens: prompt, completion_tokens: completion, cached_tokens: cached, duration_ms: duration } });
  const start = (run: string, agent: string, day: number, extra: Record<string, unknown> = {}) => ({ event_type: "run_start", sdk_run_id: run, agent_name: agent, occurred_at: at(day, 0), payload: {}, ...extra });
  const end = (run: string, day: number) => ({ event_type: "run_end", sdk_run_id: run, occurred_at: at(day, 9), payload: {} });
  const tool = (run: string, name: string, duration: number) => ({ event_type: "tool_call", sdk_run_id: run, occurred_at: at(21, 3), payload: { tool_name: name, phase: "end", duration_ms: duration } });
  const events = [
    start("r1", "support-bot", 20, { config_version: 1, session_id: "s-1" }), llm("r1", 20, 2, "gpt-4o", "openai", 1000, 100, 800, 400), end("r1", 20),
    start("r2", "support-bot", 20, { config_version: 1 }), { event_type: "error", sdk_run_id: "r2", occurred_at: at(20, 5), payload: { error_type: "Timeout", error_message: "slow" } },
    start("r3", "support-bot", 21, { config_version: 2, session_id: "s-1" }), llm("r3", 21, 2, "gpt-4o-mini", "openai", 500, 50, 300), end("r3", 21),
    start("r4", "researcher", 21), tool("r4", "search", 900), tool("r4", "fetch", 120), llm("r4", 21, 5, "claude-sonnet-4-5", "anthropic", 2000, 200, 2000), end("r4", 21),
  ];
  expect(await (await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events }))).json()).toMatchObject({ rejected: 0 });
  for (const r of ["r1", "r2", "r3", "r4"]) await waitForRun(srv.url, acct.key, r, (b) => b.run.status !== "running");
  for (const [run, name, value] of [["r1", "helpful", 1], ["r3", "helpful", 0.5], ["r2", "thumbs", false], ["r4", "label", "good"]] as const) {
    expect((await fetch(`${srv.url}/api/scores`, json(acct.key, { sdk_run_id: run, name, value }))).status).toBe(201);
  }
});
afterAll(async () => {
  await srv?.close();
});

const run = async (name: string): Promise<Record<string, unknown>[]> => {
  const sql = queries.get(name);
  if (!sql) throw new Error(`docs/ANALYTICS.md has no query named ${name}`);
  const rows = await srv.ports.clickhouse.query<Record<string, unknown>>(sql, { user_id: acct.id });
  // Both transports quote 64-bit integers: compare numbers as numbers.
  return rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "string" && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v])));
};

describe("docs/ANALYTICS.md", () => {
  it("has at least eight example queries, and this test checks each of them", () => {
    expect([...queries.keys()].sort()).toEqual([
      "cached-vs-uncached-tokens", "cost-per-agent-per-day", "daily-cost-by-model", "error-rate-per-config-version",
      "p95-latency-per-model", "runs-by-status", "scores-per-version", "sessions", "slowest-tools",
    ]);
  });

  it("runs by status, cost per agent per day", async () => {
    expect(await run("runs-by-status")).toEqual([{ status: "error", runs: 1 }, { status: "success", runs: 3 }]);
    const cost = await run("cost-per-agent-per-day");
    expect(cost.map((r) => [r.day, r.agent_name, r.runs, r.tokens])).toEqual([
      ["2026-11-20", "support-bot", 2, 1100], ["2026-11-21", "researcher", 1, 2200], ["2026-11-21", "support-bot", 1, 550],
    ]);
    expect(cost[0]!.cost_usd).toBeGreaterThan(0); // gpt-4o's call, priced by the pipeline
  });

  it("latency, cached tokens and daily cost per model", async () => {
    expect((await run("p95-latency-per-model")).map((r) => [r.model, r.calls, r.p95_ms])).toEqual([
      ["claude-sonnet-4-5", 1, 2000], ["gpt-4o", 1, 800], ["gpt-4o-mini", 1, 300],
    ]);
    expect((await run("cached-vs-uncached-tokens")).find((r) => r.model === "gpt-4o")).toEqual({ model: "gpt-4o", cached_input_tokens: 400, uncached_input_tokens: 600, cached_share: 0.4 });
    const daily = await run("daily-cost-by-model");
    expect(daily.map((r) => [r.day, r.model, r.provider, r.calls])).toEqual([
      ["2026-11-20", "gpt-4o", "openai", 1], ["2026-11-21", "claude-sonnet-4-5", "anthropic", 1], ["2026-11-21", "gpt-4o-mini", "openai", 1],
    ]);
    expect(daily.every((r) => (r.cost_usd as number) > 0)).toBe(true);
  });

  it("error rate and scores per config version", async () => {
    expect((await run("error-rate-per-config-version")).map((r) => [r.agent_name, r.config_version, r.finished, r.errors, r.error_rate])).toEqual([
      ["researcher", null, 1, 0, 0], ["support-bot", 1, 2, 1, 0.5], ["support-bot", 2, 1, 0, 0],
    ]);
    expect((await run("scores-per-version")).map((r) => [r.agent_name, r.config_version, r.score, r.scores, r.average])).toEqual([
      ["support-bot", 1, "helpful", 1, 1], ["support-bot", 1, "thumbs", 1, 0], ["support-bot", 2, "helpful", 1, 0.5],
    ]);
  });

  it("the slowest tools and sessions", async () => {
    expect((await run("slowest-tools")).map((r) => [r.sdk_run_id, r.tool, r.duration_ms])).toEqual([["r4", "search", 900], ["r4", "fetch", 120]]);
    expect((await run("sessions")).map((r) => [r.session_id, r.turns, r.tokens])).toEqual([["s-1", 2, 1650]]);
  });
});
