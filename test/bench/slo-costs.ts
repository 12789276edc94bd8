/**
 * bench:slo-costs — what reading SLOs and an agent's baselines costs, before and after they read aggregates once
 * (docs/BENCHMARKS.md, "Learned baselines and SLO burn alerts"), on embedded chDB and PGlite in a temp dir.
 *
 *   1. SLOs. AGENTS agents × 30 days of ended runs (RUNS_PER_HOUR each per hour, every 50th failed, durations 0.5 –
 *      8 s) and a score on each; 4 SLOs per agent (success rate over 30 days, latency under 2 s over 7 days, under 5 s
 *      over 30 days, a score's mean over 30 days): 40 by default. Per view of /slos and per sweep of one
 *      slo_burn_rate rule for each SLO, the ClickHouse statements and the time, before (each SLO's raw read over its
 *      whole window, and the page's chart read per SLO: the code before this change, kept below as `before`) and after
 *      (alerts/slos/tallies.ts: hours rolled up, three reads for all), alternating before/after; the first roll-up
 *      (backfill) is timed apart.
 *   2. An agent's baselines (the agent page's "Usual and changed" card, six metrics): ClickHouse and Postgres
 *      statements per view, each metric explained on its own (before) and with the agent's reads shared (after).
 *
 * The time figures drift with the machine's load (printed beside them); the statement counts do not.
 * Run: npm run bench:slo-costs   (env: BENCH_SLO_AGENTS=10, BENCH_SLO_RUNS_PER_HOUR=20, BENCH_REPS=5)
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { openPglite } from "../../core/postgres/pglite.js";
import { migratePostgres } from "../../core/postgres/migrate.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { sloTallies, type RunTally, type Slo } from "../../stores/slos.js";
import { toChTime } from "../../stores/runs/run-query.js";
import { burnOverTime, sloStatus, sloWindows } from "../../alerts/slos/budget.js";
import { sloSlices, sloTalliesAt } from "../../alerts/slos/tallies.js";
import { agentReads, explainBaseline } from "../../alerts/baselines/explain.js";
import { METRIC_NAMES } from "../../alerts/baselines/metrics.js";

const AGENTS = Number(process.env.BENCH_SLO_AGENTS ?? 10);
const RUNS_PER_HOUR = Number(process.env.BENCH_SLO_RUNS_PER_HOUR ?? 20);
const REPS = Number(process.env.BENCH_REPS ?? 5);
const HOUR = 3_600_000;
const PID = 3;
const NOW = new Date(Math.floor(Date.now() / 60_000) * 60_000);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Counts the statements sent through a ClickHouse and a Sql. */
function counting(ch: ClickHouse, sql: Sql) {
  const n = { ch: 0, sql: 0 };
  const c: ClickHouse = { ...ch, query: (q, p) => { n.ch++; return ch.query(q, p); }, exec: (q, p) => { n.ch++; return ch.exec(q, p); }, sandbox: () => ch.sandbox(), close: () => ch.close() };
  const s: Sql = { ...sql, query: (q, p) => { n.sql++; return sql.query(q, p); }, transaction: (fn) => sql.transaction(fn), run: (p, a) => sql.run(p, a), close: () => sql.close() };
  return { ch: c, sql: s, n, reset: () => { n.ch = 0; n.sql = 0; } };
}

/** The page's chart read per SLO before this change (stores/slos.ts sloHistory, removed): a query per SLO. */
async function beforeHistory(ch: ClickHouse, slo: Slo, now: Date, buckets: number): Promise<(RunTally & { start: string })[]> {
  const windowMs = slo.window_days * 86_400_000;
  const bucketMs = Math.ceil(windowMs / buckets);
  const since = now.getTime() - windowMs;
  const ended = "ifNull(ended_at, status_at)";
  const score = slo.objective === "score_mean";
  const rows = await ch.query<{ b: string; t: string; bad: string }>(
    score
      ? `SELECT intDiv(toUnixTimestamp64Milli(s.created_at) - {since_ms:Int64}, {bucket_ms:Int64}) AS b, count() AS t, sum(1 - least(greatest(s.value_number, 0), 1)) AS bad
           FROM (SELECT run_id, created_at, value_number FROM scores FINAL WHERE project_id = {pid:UInt64} AND name = {score:String} AND value_type IN ('number', 'boolean')
                   AND created_at >= {since:DateTime64(3, 'UTC')} AND created_at <= {now:DateTime64(3, 'UTC')}) AS s
          INNER JOIN (SELECT run_id FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND experiment_id = ''
                   AND last_event_at >= {since:DateTime64(3, 'UTC')}) AS r ON s.run_id = r.run_id GROUP BY b ORDER BY b`
      : `SELECT intDiv(toUnixTimestamp64Milli(${ended}) - {since_ms:Int64}, {bucket_ms:Int64}) AS b, count() AS t,
                sum(${slo.objective === "latency" ? `toUInt8(dateDiff('millisecond', ifNull(started_at, ${ended}), ${ended}) > {threshold_ms:Float64})` : "toUInt8(status = 'error')"}) AS bad
           FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND agent_name = {agent:String} AND status IN ('success', 'error') AND experiment_id = ''
            AND last_event_at >= {since:DateTime64(3, 'UTC')} AND ${ended} >= {since:DateTime64(3, 'UTC')} AND ${ended} <= {now:DateTime64(3, 'UTC')} GROUP BY b ORDER BY b`,
    {
      pid: PID, agent: slo.agent_name, now: toChTime(now.toISOString()), since: toChTime(new Date(since).toISOString()), since_ms: since, bucket_ms: bucketMs,
      threshold_ms: (slo.threshold_seconds ?? 0) * 1000, score: slo.score_name ?? "",
    },
  );
  const by = new Map(rows.map((r) => [Number(r.b), r]));
  return Array.from({ length: buckets }, (_, i) => ({ start: new Date(since + i * bucketMs).toISOString(), total: Number(by.get(i)?.t ?? 0), bad: Number(by.get(i)?.bad ?? 0) }));
}

async function seed(ch: ClickHouse): Promise<Slo[]> {
  const n = AGENTS * RUNS_PER_HOUR * 30 * 24;
  const t0 = performance.now();
  const spacing = Math.floor(HOUR / RUNS_PER_HOUR);
  await ch.exec(
    `INSERT INTO agent_runs (user_id, project_id, external_id, run_id, agent_name, status, status_at, started_at, ended_at, last_event_at, version)
     SELECT {pid:UInt64}, {pid:UInt64}, concat('r-', toString(number)), generateUUIDv4(number), concat('agent-', toString(number % {agents:UInt32})),
            if(number % 50 = 7, 'error', 'success'), e, e - toIntervalMillisecond(500 + cityHash64(number) % 7500), e, e + INTERVAL 1 SECOND, 1
       FROM (SELECT number, toDateTime64({now:DateTime64(3, 'UTC')}, 3, 'UTC') - toIntervalMillisecond(intDiv(number, {agents:UInt32}) * {spacing:UInt32} + 1000) AS e FROM numbers({n:UInt64}))`,
    { pid: PID, agents: AGENTS, spacing, n, now: toChTime(NOW.toISOString()) },
  );
  await ch.exec(
    `INSERT INTO scores (score_id, user_id, project_id, run_id, sdk_run_id, span_id, name, value_type, value_number, value_string, comment, source, created_at)
     SELECT generateUUIDv4(cityHash64(external_id)), {pid:UInt64}, {pid:UInt64}, run_id, external_id, '', 'correctness', 'number', (cityHash64(external_id) % 100) / 90, '', '', 'api', ended_at + INTERVAL 500 MILLISECOND
       FROM agent_runs WHERE project_id = {pid:UInt64}`,
    { pid: PID },
  );
  console.log(`seeded ${n.toLocaleString("en-US")} runs and as many scores (${AGENTS} agents × ${RUNS_PER_HOUR} runs an hour × 30 days) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const slos: Slo[] = [];
  for (let a = 0; a < AGENTS; a++) {
    const base = { agent_name: `agent-${a}`, target: 0.95, threshold_seconds: null, score_name: null, created_at: "" };
    slos.push({ ...base, id: slos.length + 1, name: `ok-${a}`, objective: "success_rate", window_days: 30 });
    slos.push({ ...base, id: slos.length + 1, name: `fast-${a}`, objective: "latency", threshold_seconds: 2, window_days: 7 });
    slos.push({ ...base, id: slos.length + 1, name: `slow-${a}`, objective: "latency", threshold_seconds: 5, window_days: 30 });
    slos.push({ ...base, id: slos.length + 1, name: `correct-${a}`, objective: "score_mean", score_name: "correctness", window_days: 30 });
  }
  return slos;
}

async function slos(ch: ClickHouse, sql: Sql): Promise<void> {
  const all = await seed(ch);
  const c = counting(ch, sql);
  const beforePage = () => Promise.all(all.map(async (s) => ({
    status: sloStatus(s, await sloTallies(c.ch, s, PID, NOW, sloWindows(s))), points: burnOverTime(s, await beforeHistory(c.ch, s, NOW, 30)),
  })));
  const afterPage = async () => {
    const t = await sloTalliesAt(c.ch, PID, all, NOW);
    return all.map((s, i) => ({ status: sloStatus(s, t[i]!.windows), points: burnOverTime(s, sloSlices(s, t[i]!, NOW, 30)) }));
  };
  const beforeSweep = async () => { for (const s of all) sloStatus(s, await sloTallies(c.ch, s, PID, NOW, sloWindows(s))); };
  const afterSweep = async () => { const t = await sloTalliesAt(c.ch, PID, all, NOW); all.forEach((s, i) => sloStatus(s, t[i]!.windows)); };

  let t0 = performance.now();
  c.reset();
  await sloTalliesAt(c.ch, PID, all, NOW);
  console.log(`SLOs: first read, with the roll-up's backfill of 30 days: ${(performance.now() - t0).toFixed(0)} ms, ${c.n.ch} ClickHouse statements (load ${load()})`);
  for (const [name, before, after] of [["/slos view", beforePage, afterPage], ["sweep of one rule per SLO", beforeSweep, afterSweep]] as const) {
    const times = { before: [] as number[], after: [] as number[] };
    const counts = { before: 0, after: 0 };
    for (let rep = 0; rep < REPS; rep++) {
      for (const [side, run] of [["before", before], ["after", after]] as const) {
        c.reset();
        t0 = performance.now();
        await run();
        times[side].push(performance.now() - t0);
        counts[side] = c.n.ch;
      }
    }
    const b = median(times.before), a = median(times.after);
    console.log(`  ${name}, ${all.length} SLOs: before ${counts.before} ClickHouse statements, median ${b.toFixed(0)} ms; after ${counts.after}, median ${a.toFixed(0)} ms (${(b / a).toFixed(1)}× less time; ${REPS} alternating reps, load ${load()})`);
  }
}

async function agentPage(ch: ClickHouse, sql: Sql): Promise<void> {
  const c = counting(ch, sql);
  const ports = { clickhouse: c.ch, sql: c.sql };
  const metrics = METRIC_NAMES.filter((m) => m !== "score_mean");
  const q = (metric: (typeof metrics)[number]) => ({ projectId: PID, agent: "agent-0", metric, windowMinutes: 30, now: NOW });
  await explainBaseline(ports, q("error_rate")); // the roll-up, not counted
  c.reset();
  await Promise.all(metrics.map((m) => explainBaseline(ports, q(m))));
  const before = { ...c.n };
  c.reset();
  const shared = agentReads(ports, { projectId: PID, agent: "agent-0", windowMinutes: 30, now: NOW });
  await Promise.all(metrics.map((m) => explainBaseline(ports, q(m), shared)));
  console.log(`agent page baselines (${metrics.length} metrics): before ${before.ch} ClickHouse + ${before.sql} Postgres statements per view; after ${c.n.ch} + ${c.n.sql}`);
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-slo-costs-"));
console.log(`machine: ${os.cpus().length} cores, Node ${process.version}; load average ${load()}`);
const ch = await openChdb(path.join(dir, "ch"), "runwatch");
const sql = await openPglite(path.join(dir, "pg"));
try {
  await migrateClickHouse(ch);
  await migratePostgres(sql);
  await slos(ch, sql);
  await agentPage(ch, sql);
} finally {
  await ch.close();
  await sql.close();
  await fs.rm(dir, { recursive: true, force: true });
}
