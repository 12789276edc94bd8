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
 *      the generated runs (the same formulas as the window SQL), not read back through ingest.
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
import { baselineStats, insertMetricHours, type BaselineStats, type MetricHour } from "../../stores/baselines/metric-hours.js";
import { BAND_RULES, HISTORY_DAYS, MIN_RUNS_PER_HOUR, hourOfWeek, learnBand, outsideBand, type BandRules } from "../../alerts/baselines/band.js";
import { OutOfBandSince } from "../../alerts/baselines/confirm.js";
import { baselineStatsReads, cachedBaselineStats, hoursWritten } from "../../alerts/baselines/stats-cache.js";
import type { MetricName } from "../../alerts/baselines/metrics.js";
import { BURN_ALERTS, sloStatus } from "../../alerts/slos/budget.js";
import { FLEET_METRICS, Fleet, HOUR, MINUTE, metricsOf, type FleetMetric, type Incident, type Run } from "./baselines-fleet.js";

const FLEET = Number(process.env.BENCH_FLEET ?? 20);
const COST_AGENTS = Number(process.env.BENCH_COST_AGENTS ?? 1000);
const WINDOW_MIN = 30;
const MIN_RUNS = 10;
const DAY = 24 * HOUR;
/** The replay's start: the next Monday 00:00 UTC, so no hour written is older than the table's 35-day TTL. */
const T0 = (() => {
  const today = Math.floor(Date.now() / DAY) * DAY;
  return today + ((8 - new Date(today).getUTCDay()) % 7 || 7) * DAY;
})();
const PID = 1;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const bandMetric = (m: FleetMetric): MetricName => (m.startsWith("score_mean:") ? "score_mean" : (m as MetricName));
const agentName = (i: number) => `agent-${String(i).padStart(4, "0")}`;

const at = (day: number, hour: number) => T0 + day * DAY + hour * HOUR;
const INCIDENTS: Incident[] = [
  { kind: "latency step", agent: 1, metrics: ["latency_p50", "latency_p95"], start: at(1, 10), end: at(1, 13) },
  { kind: "latency step", agent: 5, metrics: ["latency_p50", "latency_p95"], start: at(5, 20), end: at(5, 22) },
  { kind: "error-rate ramp", agent: 2, metrics: ["error_rate"], start: at(2, 8), end: at(2, 14) },
  { kind: "error-rate ramp", agent: 6, metrics: ["error_rate"], start: at(1, 14), end: at(1, 18) },
  { kind: "cost spike", agent: 3, metrics: ["cost_per_run"], start: at(3, 15), end: at(3, 16) },
  { kind: "cost spike", agent: 7, metrics: ["cost_per_run"], start: at(6, 3), end: at(6, 4) },
  { kind: "score drop after config change", agent: 4, metrics: ["score_mean:correctness"], start: at(4, 9), end: at(7, 0) },
  { kind: "score drop after config change", agent: 8, metrics: ["score_mean:correctness"], start: at(2, 12), end: at(7, 0) },
];

function hourRows(fleet: Fleet, hourStart: number, out: MetricHour[], keep?: Run[][]): void {
  for (let i = 0; i < fleet.size; i++) {
    const runs: Run[] = [];
    for (let m = 0; m < 60; m++) {
      const r = fleet.runsInMinute(i, hourStart + m * MINUTE);
      runs.push(...r);
      keep?.[i]!.push(...r);
    }
    const values = metricsOf(runs);
    for (const metric of FLEET_METRICS) {
      const v = values[metric];
      if (v.volume > 0) out.push({ agent_name: agentName(i), metric, hour: new Date(hourStart), runs: v.volume, value: v.value });
    }
  }
}

async function detection(ch: Awaited<ReturnType<typeof openChdb>>): Promise<void> {
  const fleet = new Fleet(FLEET, INCIDENTS);
  const started = performance.now();
  for (let h = HISTORY_DAYS * 24; h >= 1; h -= 24) {
    const rows: MetricHour[] = [];
    for (let k = 0; k < 24; k++) hourRows(fleet, T0 - (h - k) * HOUR, rows);
    await insertMetricHours(ch, PID, rows);
  }
  console.log(`history: ${FLEET} agents × 8 metrics × ${HISTORY_DAYS * 24} hours written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const recent: { t: number; runs: Run[] }[][] = Array.from({ length: FLEET }, () => []);
  const hourRuns: Run[][] = Array.from({ length: FLEET }, () => []);
  const variants = VARIANTS.map((v) => ({ ...v, open: new Map<string, boolean>(), since: new OutOfBandSince(), fires: [] as Fire[], judged: 0 }));
  let bands = new Map<string, BaselineStats>();
  let statsMs = 0, statsQueries = 0;
  for (let t = T0; t < T0 + 7 * DAY; t += MINUTE) {
    if (t % HOUR === 0) {
      if (t > T0) {
        const rows: MetricHour[] = [];
        for (let i = 0; i < FLEET; i++) {
          const values = metricsOf(hourRuns[i]!);
          for (const metric of FLEET_METRICS) {
            const v = values[metric];
            if (v.volume > 0) rows.push({ agent_name: agentName(i), metric, hour: new Date(t - HOUR), runs: v.volume, value: v.value });
          }
          hourRuns[i] = [];
        }
        await insertMetricHours(ch, PID, rows);
      }
      // The band of an hour of the week changes only when the hour does: read once per simulated hour.
      bands = new Map();
      const s0 = performance.now();
      for (const metric of FLEET_METRICS) {
        const stats = await baselineStats(ch, {
          projectId: PID, metric, hourOfWeek: hourOfWeek(new Date(t)), minRuns: MIN_RUNS_PER_HOUR,
          since: new Date(t - HISTORY_DAYS * DAY), until: new Date(t),
        });
        for (const s of stats) bands.set(`${s.agent_name} ${metric}`, s);
        statsQueries++;
      }
      statsMs += performance.now() - s0;
    }
    for (let i = 0; i < FLEET; i++) {
      const runs = fleet.runsInMinute(i, t);
      hourRuns[i]!.push(...runs);
      const r = recent[i]!;
      r.push({ t, runs });
      while (r.length > 0 && r[0]!.t <= t - WINDOW_MIN * MINUTE) r.shift();
      const values = metricsOf(r.flatMap((x) => x.runs));
      for (const metric of FLEET_METRICS) {
        const v = values[metric];
        const m = bandMetric(metric);
        for (const x of variants) {
          if (v.volume < MIN_RUNS) continue;
          const band = learnBand(bands.get(`${agentName(i)} ${metric}`), m, "medium", v.volume, x.rules);
          if (band.state === "learning") continue;
          x.judged++;
          const key = `${i} ${metric}`;
          const outside = outsideBand(band, m, v.value);
          const confirmed = x.since.confirmed(key, outside, t, x.confirm ? MINUTE : 0);
          const open = x.open.get(key) ?? false;
          const active = open ? outside : confirmed;
          if (active === open) continue;
          x.open.set(key, active);
          if (active) x.fires.push({ agent: i, metric, t: t + MINUTE, volume: v.volume }); // judged at the minute's end
        }
      }
    }
  }
  console.log(`replay: 7 simulated days, a sweep every simulated minute; ${statsQueries} baselineStats reads, ${(statsMs / statsQueries).toFixed(1)} ms each (load ${load()})`);
  console.log("each rule set judges the same replay; the rules are cumulative, the last is the trigger's (BAND_RULES + confirmation):");
  for (const x of variants) report(x.name, x.fires, x.judged, x === variants.at(-1) || process.env.BENCH_BREAKDOWN === "all");
}

interface Fire { agent: number; metric: FleetMetric; t: number; volume: number }

/** The rule sets compared, cumulative: the band as it was, then each rule of alerts/baselines/ added in turn. */
const BEFORE: BandRules = { shrinkHours: 0, relativeFloor: 0.05, exactShares: false };
const VARIANTS: { name: string; rules: BandRules; confirm: boolean }[] = [
  { name: "slot MAD only", rules: BEFORE, confirm: false },
  { name: "+ two sweeps out of band", rules: BEFORE, confirm: true },
  { name: "+ shrinkage to the all-hours spread", rules: { ...BEFORE, shrinkHours: BAND_RULES.shrinkHours }, confirm: true },
  { name: "+ shares judged on the binomial tail", rules: BAND_RULES, confirm: true },
];

function report(name: string, fires: readonly Fire[], judged: number, details: boolean): void {
  const matches = (f: Fire, x: Incident) => f.agent === x.agent && x.metrics.includes(f.metric) && f.t >= x.start && f.t <= x.end + WINDOW_MIN * MINUTE;
  const truePos = fires.filter((f) => INCIDENTS.some((x) => matches(f, x)));
  const falsePos = fires.filter((f) => !INCIDENTS.some((x) => matches(f, x)));
  const detected = INCIDENTS.map((x) => ({ x, first: fires.filter((f) => matches(f, x)).sort((a, b) => a.t - b.t)[0] }));
  const delays = detected.map((d) => (d.first ? `${Math.round((d.first.t - d.x.start) / MINUTE)}` : "–")).join("/");
  const byMetric = new Map<string, number>();
  for (const f of falsePos) byMetric.set(f.metric, (byMetric.get(f.metric) ?? 0) + 1);
  console.log(`${name}: ${fires.length} alerts (${judged.toLocaleString("en-US")} judgements), precision ${(truePos.length / Math.max(1, fires.length)).toFixed(2)}, recall ${detected.filter((d) => d.first).length}/${INCIDENTS.length}, false alerts per agent-week ${(falsePos.length / FLEET).toFixed(2)} (${[...byMetric].map(([m, n]) => `${m} ${n}`).join(", ") || "none"}); minutes to detect ${delays}`);
  if (!details) return;
  if (falsePos.length) breakdown(falsePos);
  console.log("  time to detect (simulated, from the incident's start; target ≤ 10 min):");
  for (const { x, first } of detected) {
    const delay = first ? `${Math.round((first.t - x.start) / MINUTE)} min (${first.metric})` : "not detected";
    console.log(`    ${x.kind.padEnd(31)} agent ${x.agent}, ${new Date(x.start).toISOString().slice(0, 16)}Z: ${delay}`);
  }
}

/** Where the false alerts come from: per metric, by the window's volume and by the UTC hour of the day. */
function breakdown(falsePos: readonly Fire[]): void {
  const table = (name: string, key: (f: Fire) => string) => {
    const by = new Map<string, Map<string, number>>();
    for (const f of falsePos) {
      const row = by.get(f.metric) ?? new Map<string, number>();
      row.set(key(f), (row.get(key(f)) ?? 0) + 1);
      by.set(f.metric, row);
    }
    for (const [metric, row] of by) console.log(`    ${metric} by ${name}: ${[...row].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true })).map(([k, n]) => `${k}: ${n}`).join(", ")}`);
  };
  const bucket = (v: number) => (v < 20 ? "<20" : v < 40 ? "20-39" : v < 80 ? "40-79" : "80+");
  console.log("  false alerts:");
  table("window volume", (f) => bucket(f.volume));
  table("UTC hour", (f) => String(new Date(f.t).getUTCHours()).padStart(2, "0"));
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

/** Two bursts on a steady 50 runs/min against 99% success over 30 days; reference times worked out by hand. */
function sloBurn(): void {
  const target = 0.99;
  // burst A: 15 bad of 50 (30%) for 60 min from minute 600. Fast: the 1 h window reaches 14.4% bad after
  //   0.30 × e / 60 ≥ 0.144 → e ≥ 28.8 → fires at +29 min; the 5 min window drops under 14.4% once it holds at most
  //   2 burst minutes (30 of 250 = 12%) → resolves at +63 min. Slow: the 6 h window needs 0.30 × e / 360 ≥ 0.06 →
  //   e ≥ 72 > 60: never.
  // burst B: 7 bad of 50 (14%) for 240 min from minute 2000. Fast: 14% < 14.4%: never. Slow: 0.14 × e / 360 ≥ 0.06
  //   → e ≥ 154.3 → fires at +155 min; the 30 min window drops under 6% once it holds at most 12 burst minutes
  //   (84 of 1500 = 5.6%; 13 give 6.07%) → resolves at +258 min.
  const reference = { fast: { fire: 600 + 29, resolve: 600 + 63 }, slow: { fire: 2000 + 155, resolve: 2000 + 258 } };
  const bad = (m: number) => (m >= 600 && m < 660 ? 15 : m >= 2000 && m < 2240 ? 7 : 0);
  const tally = (now: number, minutes: number) => {
    let b = 0;
    for (let m = Math.max(0, now - minutes); m < now; m++) b += bad(m);
    return { total: 50 * Math.min(now, minutes), bad: b };
  };
  const seen: Record<"fast" | "slow", { fire?: number; resolve?: number }> = { fast: {}, slow: {} };
  const state = { fast: false, slow: false };
  for (let now = 1; now <= 3000; now++) {
    const s = sloStatus({ target }, [tally(now, 30 * 1440), tally(now, 60), tally(now, 5), tally(now, 360), tally(now, 30)]);
    for (const speed of ["fast", "slow"] as const) {
      if (s.alerts[speed] === state[speed]) continue;
      state[speed] = s.alerts[speed];
      if (s.alerts[speed]) seen[speed].fire ??= now;
      else seen[speed].resolve ??= now;
    }
  }
  console.log(`SLO burn alerts (99% over 30 days, thresholds ${BURN_ALERTS.fast.threshold}× / ${BURN_ALERTS.slow.threshold}×), minute of firing and resolving, measured vs by hand:`);
  for (const speed of ["fast", "slow"] as const) {
    const ok = seen[speed].fire === reference[speed].fire && seen[speed].resolve === reference[speed].resolve;
    console.log(`  ${speed}: fired ${seen[speed].fire}, resolved ${seen[speed].resolve}; reference ${reference[speed].fire}, ${reference[speed].resolve}: ${ok ? "match" : "MISMATCH"}`);
  }
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
