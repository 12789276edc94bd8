/**
 * The filter bar's completion of `model:` (stores/runs/filter-values.ts) on the explorer bench's dataset
 * (explorer-data.ts: runs with ~10 LLM calls each, their models in each run's `models`): the query the store sends
 * now, against the read of llm_calls it replaced and against a `tag:` completion (a read of the same runs' granules),
 * alternating, warm; for each, the rows and granules ClickHouse plans to read once its indexes have pruned (EXPLAIN
 * ESTIMATE) and the time. The store's SQL is captured from its ClickHouse port and sent straight to a chDB session.
 *
 *   npm run bench:filter-values                       BENCH_RUNS (100000), BENCH_REPS (15), BENCH_DATA_DIR
 */
import os from "node:os";
import path from "node:path";
import type { Session } from "chdb";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { NOT_JUDGE } from "../../core/events/judge-runs.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { inlineParams } from "../../core/clickhouse/inline-params.js";
import { filterValues, VALUES_WINDOW_DAYS, type ValueField } from "../../stores/runs/filter-values.js";
import { ensureDataset, PROJECT } from "./explorer-data.js";
import { openRawSessions } from "./explorer-cases.js";

const RUNS = Number(process.env.BENCH_RUNS ?? 100_000);
const REPS = Number(process.env.BENCH_REPS ?? 15);
const DIR = process.env.BENCH_DATA_DIR ?? path.join(os.tmpdir(), `runwatch-bench-explorer-${RUNS}`);

interface Sent { sql: string; params: Record<string, unknown> }

/** The SQL and parameters filterValues sends for `field`, captured from a port that records and passes them on. */
async function sentFor(ch: ClickHouse, field: ValueField): Promise<Sent> {
  let sent: Sent | undefined;
  const capture: ClickHouse = {
    ...ch,
    query: <T>(sql: string, params?: Record<string, unknown>) => { sent = { sql, params: params ?? {} }; return ch.query<T>(sql, params); },
  };
  await filterValues(capture, PROJECT, field, "");
  return sent!;
}

/** The model values as they were read before runs kept their models: the window's runs' own model and llm_calls, a row a call. */
function replaced(now: Sent): Sent {
  const window = `now64(3) - INTERVAL ${VALUES_WINDOW_DAYS} DAY`;
  const before = `SELECT DISTINCT model AS v FROM agent_runs WHERE project_id = {pid:UInt64} AND ${NOT_JUDGE} AND last_event_at >= ${window}
    UNION DISTINCT SELECT DISTINCT model AS v FROM llm_calls WHERE project_id = {pid:UInt64} AND started_at >= ${window}`;
  return { sql: `SELECT v FROM (${before}) WHERE v != '' AND startsWith(lowerUTF8(v), lowerUTF8({prefix:String})) ORDER BY v LIMIT {n:UInt32}`, params: now.params };
}

/** As the adapter sends it: the literals written into the text where they are small (inline-params.ts), else bound. */
async function measure(s: Session, q: Sent) {
  const plain = inlineParams(q.sql, q.params);
  const r = await (plain === undefined ? s.queryBindAsync(q.sql, q.params, { format: "JSONEachRow" }) : s.queryAsync(plain, { format: "JSONEachRow" }));
  return { ms: r.elapsed * 1000, values: r.text().trim().split("\n").filter(Boolean).length };
}

/** What ClickHouse plans to read after its indexes (EXPLAIN ESTIMATE): rows and granules, per table. */
async function estimate(s: Session, q: Sent): Promise<string> {
  const sql = `EXPLAIN ESTIMATE ${q.sql}`;
  const plain = inlineParams(sql, q.params);
  const r = await (plain === undefined ? s.queryBindAsync(sql, q.params, { format: "JSONEachRow" }) : s.queryAsync(plain, { format: "JSONEachRow" }));
  const rows = r.text().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as { table: string; rows: string; marks: string });
  return rows.map((t) => `${t.table} ${Number(t.rows).toLocaleString("en-US")} rows / ${t.marks} granules`).join(", ") || "nothing";
}

const log = (line: string) => console.log(line);
await ensureDataset(DIR, RUNS, log);
const ch = await openChdb(DIR, "runwatch");
const cases: [string, Sent][] = [];
try {
  const now = await sentFor(ch, "model");
  cases.push(["model: now (runs' models and model)", now], ["model: before (llm_calls)", replaced(now)], ["tag: (reference)", await sentFor(ch, "tag")]);
  const [calls] = await ch.query<{ n: string }>("SELECT count() AS n FROM llm_calls");
  const [runs] = await ch.query<{ n: string }>("SELECT count() AS n FROM agent_runs");
  log(`${Number(runs!.n).toLocaleString("en-US")} agent_runs rows, ${Number(calls!.n).toLocaleString("en-US")} llm_calls rows; load ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
} finally {
  await ch.close();
}

const [session] = await openRawSessions(DIR, 1);
const results = new Map<string, { ms: number[]; reads: string; values: number }>();
for (const [name, q] of cases) results.set(name, { ms: [], reads: await estimate(session!, q), values: (await measure(session!, q)).values }); // and a warm-up
for (let rep = 0; rep < REPS; rep++) {
  for (const [name, q] of rep % 2 === 0 ? cases : [...cases].reverse()) results.get(name)!.ms.push((await measure(session!, q)).ms);
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const base = pct(results.get(cases[2]![0])!.ms, 0.5);
log(`\n| Query | Reads (EXPLAIN ESTIMATE) | Values | p50 ms | p95 ms | p50 ÷ tag: |\n|---|---|---|---|---|---|`);
for (const [name, r] of results) {
  log(`| ${name} | ${r.reads} | ${r.values} | ${pct(r.ms, 0.5).toFixed(1)} | ${pct(r.ms, 0.95).toFixed(1)} | ${(pct(r.ms, 0.5) / base).toFixed(2)} |`);
}
log(`load after: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
session!.close();
