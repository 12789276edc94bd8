/**
 * bench:baselines — learned baselines and SLO burn alerts against a synthetic fleet with known patterns
 * (test/bench/baselines-fleet.ts), on embedded chDB in a temp dir.
 *
 *   1. Detection. FLEET agents × 8 metrics. Four weeks of hourly history are written to agent_metric_hours (the
 *      roll-up's own table, through stores/baselines/metric-hours.ts insertMetricHours: the same rows the roll-up
 *      would write from those runs). Then one week is replayed forward in simulated time, minute by minute: each
 *      minute's runs are generated, every minute a sweep judges each agent and metric as the anomaly trigger does
 *      (the 30-minute window's value and volume, min_runs 10, the band from baselineStats + learnBand at medium
 *      sensitivity, one episode per excursion), and each finished hour is appended to agent_metric_hours, so the
 *      baselines keep learning during the replay, incidents included. The live windows are computed in-process from
 *      the generated runs (the same formulas as the window SQL), not read back through ingest (bench:baselines-ingest,
 *      test/bench/baselines-ingest.ts, replays a smaller fleet through ingest and the trigger itself, next to this replay).
 *      Every window is judged under several rule sets at once (VARIANTS: the band as first merged, then each rule of
 *      alerts/baselines/ added in turn, the last being the trigger's), each with its own episodes. Prints, per rule
 *      set, precision and recall of anomaly alerts, false alerts per agent per simulated week and time to detect per
 *      injected incident; for the trigger's (every set with BENCH_BREAKDOWN=all) where the false alerts come from.
 *   2. Cost. 1,000 agents × 8 metrics × 28 days of hours (5.4 M rows, written by INSERT … SELECT): one evaluation's
 *      baseline reads (8 baselineStats queries over every agent) and bands, in ms, and the process RSS (chDB runs in
 *      this process); then 20 sweeps (5 minutes) of one anomaly rule per metric, the statistics read on every sweep
 *      and from the trigger's cache (alerts/baselines/stats-cache.ts), alternating.
 *   3. SLO burn alerts: a minute-by-minute run stream with two error bursts, alerts/slos/budget.ts judging every
 *      minute, against fire and resolve times computed by hand.
 *
 * Run: npm run bench:baselines   (env: BENCH_FLEET=20, BENCH_COST_AGENTS=1000, BENCH_BREAKDOWN=all)
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { baselineStats } from "../../stores/baselines/metric-hours.js";
import { HISTORY_DAYS, MIN_RUNS_PER_HOUR, hourOfWeek, learnBand } from "../../alerts/baselines/band.js";
import { baselineStatsReads, cachedBaselineStats, hoursWritten } from "../../alerts/baselines/stats-cache.js";
import { FLEET_METRICS, Fleet, incidentsAt, type FleetMetric } from "./baselines-fleet.js";
import { DAY, VARIANTS, bandMetric, replayInProcess, report } from "./baselines-replay.js";
import { judgeSloInProcess, sloHeading, sloLines } from "./baselines-slo.js";

const FLEET = Number(process.env.BENCH_FLEET ?? 20);
const COST_AGENTS = Number(process.env.BENCH_COST_AGENTS ?? 1000);
/** The replay's start: the next Monday 00:00 UTC, so no hour written is older than the table's 35-day TTL. */
const T0 = (() => {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return today + ((8 - new Date(today).getUTCDay()) % 7 || 7) * DAY;
})();
const PID = 1;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");

const INCIDENTS = incidentsAt(T0, FLEET);

async function detection(ch: Awaited<ReturnType<typeof openChdb>>): Promise<void> {
  const log = (line: string) => console.log(line);
  const results = await replayInProcess(ch, { pid: PID, source: new Fleet(FLEET, INCIDENTS), t0: T0, variants: VARIANTS, log });
  console.log(`(load ${load()})`);
  console.log("each rule set judges the same replay; the rules are cumulative, the last is the trigger's (BAND_RULES + confirmation):");
  for (const x of results) report(x.name, x, INCIDENTS, FLEET, x === results.at(-1) || process.env.BENCH_BREAKDOWN === "all", log);
}

async function cost(ch: Awaited<ReturnType<typeof openChdb>>): Promise<void> {
  const pid = 2;
  const now = T0;
  const t0 = performance.now();
  // Seeded in SQL: COST_AGENTS agents × 8 metrics × 672 hours, values with a little variation.
  await ch.exec(
    `INSERT INTO agent_metric_hours (project_id, agent_name, metric, hour, runs, value, rolled_at)
     SELECT {pid:UInt64}, concat('agent-', toString(intDiv(number, 8 * 672))), [${FLEET_METRICS.map((m) => `'${m}'`).join(", ")}][intDiv(number, 672) % 8 + 1],
            toDateTime({until:UInt32}, 'UTC') - (number % 672 + 1) * 3600, 20, 1 + (cityHash64(number) % 100) / 1000, now64(3)
       FROM numbers({n:UInt64})`,
    { pid, until: now / 1000, n: COST_AGENTS * 8 * 672 },
  );
  console.log(`cost: ${(COST_AGENTS * 8 * 672).toLocaleString("en-US")} hourly rows (${COST_AGENTS} agents × 8 metrics × 28 days) written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const times: number[] = [];
  let rssMax = 0;
  const rssBefore = process.memoryUsage().rss;
  for (let rep = 0; rep < 3; rep++) {
    const s = performance.now();
    let ready = 0;
    for (const metric of FLEET_METRICS) {
      const stats = await baselineStats(ch, { projectId: pid, metric, hourOfWeek: hourOfWeek(new Date(now)), since: new Date(now - HISTORY_DAYS * DAY), until: new Date(now), minRuns: MIN_RUNS_PER_HOUR });
      for (const st of stats) if (learnBand(st, bandMetric(metric), "medium").state === "ready") ready++;
    }
    times.push(performance.now() - s);
    rssMax = Math.max(rssMax, process.memoryUsage().rss);
    if (rep === 0) console.log(`  bands ready: ${ready} of ${COST_AGENTS * 8}`);
  }
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  console.log(`  one evaluation's baselines (8 reads over every agent, then the bands): ${times.map((t) => t.toFixed(0)).join(", ")} ms (load ${load()})`);
  console.log(`  process RSS (chDB in process): ${mib(rssBefore)} MiB before the reads, ${mib(rssMax)} MiB at most after each of them`);
  await sweepsCached(ch, pid, now);
}

/**
 * The anomaly trigger's statistics over SWEEPS sweeps (5 minutes at one every 15 s, within one roll-up interval) of
 * one rule per metric: read on every sweep (before alerts/baselines/stats-cache.ts) and cached, alternating.
 */
async function sweepsCached(ch: Awaited<ReturnType<typeof openChdb>>, pid: number, now: number): Promise<void> {
  const SWEEPS = 20;
  const query = (metric: FleetMetric) => ({ projectId: pid, metric, hourOfWeek: hourOfWeek(new Date(now)), since: new Date(now - HISTORY_DAYS * DAY), until: new Date(now), minRuns: MIN_RUNS_PER_HOUR });
  const times = { every: [] as number[], cached: [] as number[] };
  const reads = { every: SWEEPS * FLEET_METRICS.length, cached: 0 };
  for (let rep = 0; rep < 3; rep++) {
    for (const side of ["every", "cached"] as const) {
      hoursWritten(ch, pid); // a roll-up just wrote: the first sweep reads
      const before = baselineStatsReads();
      const s = performance.now();
      for (let sweep = 0; sweep < SWEEPS; sweep++) {
        for (const metric of FLEET_METRICS) await (side === "every" ? baselineStats(ch, query(metric)) : cachedBaselineStats(ch, query(metric)));
      }
      times[side].push(performance.now() - s);
      if (side === "cached") reads.cached = baselineStatsReads() - before;
    }
  }
  const fmt = (xs: number[]) => xs.map((t) => t.toFixed(0)).join(", ");
  console.log(`  ${SWEEPS} sweeps of one anomaly rule per metric: statistics read on every sweep ${reads.every} times, ${fmt(times.every)} ms; cached ${reads.cached} times, ${fmt(times.cached)} ms (alternating, load ${load()})`);
}

/** Two bursts on a steady 50 runs/min against 99% success over 30 days (baselines-slo.ts); reference times worked out by hand. */
function sloBurn(): void {
  console.log(sloHeading);
  for (const line of sloLines(judgeSloInProcess())) console.log(`  ${line}`);
}

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-baselines-"));
console.log(`machine: ${os.cpus().length} cores, Node ${process.version}; load average ${load()}`);
const ch = await openChdb(dir, "runwatch");
try {
  await migrateClickHouse(ch);
  sloBurn();
  await detection(ch);
  await cost(ch);
} finally {
  await ch.close();
  await fs.rm(dir, { recursive: true, force: true });
}
