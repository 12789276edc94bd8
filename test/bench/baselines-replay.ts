/**
 * bench:baselines' in-process replay and how a replay's alerts are scored, shared by test/bench/baselines.ts (the
 * replay alone, several rule sets) and test/bench/baselines-ingest.ts (the same replay next to the anomaly trigger
 * judging the same runs read back through ingest).
 *
 * The in-process replay: the fleet's hours before `t0` are written to agent_metric_hours as the roll-up would write
 * them (insertMetricHours), then one week is replayed minute by minute: every minute each agent's 30-minute window is
 * computed from the runs with the window SQL's formulas (metricsOf) and judged against the band of the hour
 * (baselineStats + learnBand, read once per simulated hour), one episode per excursion; each finished hour is
 * appended to the table, so the baselines keep learning during the replay.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { baselineStats, insertMetricHours, type BaselineStats, type MetricHour } from "../../stores/baselines/metric-hours.js";
import { BAND_RULES, HISTORY_DAYS, MIN_RUNS_PER_HOUR, hourOfWeek, learnBand, outsideBand, type BandRules } from "../../alerts/baselines/band.js";
import { OutOfBandSince } from "../../alerts/baselines/confirm.js";
import type { MetricName } from "../../alerts/baselines/metrics.js";
import { FLEET_METRICS, HOUR, MINUTE, metricsOf, type FleetMetric, type Incident, type Run } from "./baselines-fleet.js";

export const WINDOW_MIN = 30;
export const MIN_RUNS = 10;
export const DAY = 24 * HOUR;
export const REPLAY_DAYS = 7;

export const bandMetric = (m: FleetMetric): MetricName => (m.startsWith("score_mean:") ? "score_mean" : (m as MetricName));
export const agentName = (i: number) => `agent-${String(i).padStart(4, "0")}`;

/** Where a replay's runs come from: a Fleet, or runs recorded from one (the same runs sent through ingest). */
export interface RunSource {
  readonly size: number;
  runsInMinute(i: number, t: number): Run[];
}

/** An alert: its agent, metric, when it was judged (the end of the minute whose window left the band), its volume. */
export interface Fire { agent: number; metric: FleetMetric; t: number; volume: number }

/** The rule sets compared, cumulative: the band as it was, then each rule of alerts/baselines/ added in turn. */
const BEFORE: BandRules = { shrinkHours: 0, relativeFloor: 0.05, exactShares: false };
export interface Variant { readonly name: string; readonly rules: BandRules; readonly confirm: boolean }
export const VARIANTS: readonly Variant[] = [
  { name: "slot MAD only", rules: BEFORE, confirm: false },
  { name: "+ two sweeps out of band", rules: BEFORE, confirm: true },
  { name: "+ shrinkage to the all-hours spread", rules: { ...BEFORE, shrinkHours: BAND_RULES.shrinkHours }, confirm: true },
  { name: "+ shares judged on the binomial tail", rules: BAND_RULES, confirm: true },
];
/** The anomaly trigger's rule set: BAND_RULES and the one-minute confirmation. */
export const TRIGGER_VARIANT: Variant = VARIANTS.at(-1)!;

function hourRows(source: RunSource, hourStart: number, out: MetricHour[]): void {
  for (let i = 0; i < source.size; i++) {
    const runs: Run[] = [];
    for (let m = 0; m < 60; m++) runs.push(...source.runsInMinute(i, hourStart + m * MINUTE));
    pushRows(out, i, hourStart, runs);
  }
}

function pushRows(out: MetricHour[], i: number, hourStart: number, runs: readonly Run[]): void {
  const values = metricsOf(runs);
  for (const metric of FLEET_METRICS) {
    const v = values[metric];
    if (v.volume > 0) out.push({ agent_name: agentName(i), metric, hour: new Date(hourStart), runs: v.volume, value: v.value });
  }
}

export interface VariantResult { readonly name: string; readonly fires: Fire[]; readonly judged: number }

/** The in-process replay of the week from `t0` under each of `variants`, on the hourly table of project `pid`. */
export async function replayInProcess(
  ch: ClickHouse,
  o: { readonly pid: number; readonly source: RunSource; readonly t0: number; readonly days?: number; readonly variants: readonly Variant[]; readonly log: (line: string) => void },
): Promise<VariantResult[]> {
  const days = o.days ?? REPLAY_DAYS;
  const { pid, source, t0 } = o;
  const size = source.size;
  const started = performance.now();
  for (let h = HISTORY_DAYS * 24; h >= 1; h -= 24) {
    const rows: MetricHour[] = [];
    for (let k = 0; k < 24; k++) hourRows(source, t0 - (h - k) * HOUR, rows);
    await insertMetricHours(ch, pid, rows);
  }
  o.log(`history: ${size} agents × 8 metrics × ${HISTORY_DAYS * 24} hours written in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const recent: { t: number; runs: Run[] }[][] = Array.from({ length: size }, () => []);
  const hourRuns: Run[][] = Array.from({ length: size }, () => []);
  const variants = o.variants.map((v) => ({ ...v, open: new Map<string, boolean>(), since: new OutOfBandSince(), fires: [] as Fire[], judged: 0 }));
  let bands = new Map<string, BaselineStats>();
  let statsMs = 0, statsQueries = 0;
  for (let t = t0; t < t0 + days * DAY; t += MINUTE) {
    if (t % HOUR === 0) {
      if (t > t0) {
        const rows: MetricHour[] = [];
        for (let i = 0; i < size; i++) {
          pushRows(rows, i, t - HOUR, hourRuns[i]!);
          hourRuns[i] = [];
        }
        await insertMetricHours(ch, pid, rows);
      }
      // The band of an hour of the week changes only when the hour does: read once per simulated hour.
      bands = new Map();
      const s0 = performance.now();
      for (const metric of FLEET_METRICS) {
        const stats = await baselineStats(ch, {
          projectId: pid, metric, hourOfWeek: hourOfWeek(new Date(t)), minRuns: MIN_RUNS_PER_HOUR,
          since: new Date(t - HISTORY_DAYS * DAY), until: new Date(t),
        });
        for (const s of stats) bands.set(`${s.agent_name} ${metric}`, s);
        statsQueries++;
      }
      statsMs += performance.now() - s0;
    }
    for (let i = 0; i < size; i++) {
      const runs = source.runsInMinute(i, t);
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
  o.log(`replay: ${days} simulated days, a sweep every simulated minute; ${statsQueries} baselineStats reads, ${(statsMs / statsQueries).toFixed(1)} ms each`);
  return variants.map((x) => ({ name: x.name, fires: x.fires, judged: x.judged }));
}

/** A replay's alerts scored against the incidents injected. */
export interface Scored {
  readonly alerts: number;
  readonly precision: number;
  readonly detected: number;
  readonly falsePerAgentWeek: number;
  readonly falseByMetric: ReadonlyMap<string, number>;
  /** Per incident, in order: its first matching alert (undefined: not detected). */
  readonly firsts: readonly { readonly x: Incident; readonly first?: Fire }[];
  readonly falsePos: readonly Fire[];
}

export function scoreFires(fires: readonly Fire[], incidents: readonly Incident[], agents: number, days = REPLAY_DAYS): Scored {
  const matches = (f: Fire, x: Incident) => f.agent === x.agent && x.metrics.includes(f.metric) && f.t >= x.start && f.t <= x.end + WINDOW_MIN * MINUTE;
  const truePos = fires.filter((f) => incidents.some((x) => matches(f, x)));
  const falsePos = fires.filter((f) => !incidents.some((x) => matches(f, x)));
  const firsts = incidents.map((x) => ({ x, first: fires.filter((f) => matches(f, x)).sort((a, b) => a.t - b.t)[0] }));
  const falseByMetric = new Map<string, number>();
  for (const f of falsePos) falseByMetric.set(f.metric, (falseByMetric.get(f.metric) ?? 0) + 1);
  return {
    alerts: fires.length, precision: truePos.length / Math.max(1, fires.length), detected: firsts.filter((d) => d.first).length,
    falsePerAgentWeek: falsePos.length / agents / (days / 7), falseByMetric, firsts, falsePos,
  };
}

const delayOf = (d: { x: Incident; first?: Fire }): string => (d.first ? `${Math.round((d.first.t - d.x.start) / MINUTE)}` : "–");

export function report(name: string, r: VariantResult | { fires: readonly Fire[]; judged?: number }, incidents: readonly Incident[], agents: number, details: boolean, log: (line: string) => void, days = REPLAY_DAYS): void {
  const s = scoreFires(r.fires, incidents, agents, days);
  const judged = r.judged === undefined ? "" : ` (${r.judged.toLocaleString("en-US")} judgements)`;
  log(`${name}: ${s.alerts} alerts${judged}, precision ${s.precision.toFixed(2)}, recall ${s.detected}/${incidents.length}, false alerts per agent-week ${s.falsePerAgentWeek.toFixed(2)} (${[...s.falseByMetric].map(([m, n]) => `${m} ${n}`).join(", ") || "none"}); minutes to detect ${s.firsts.map(delayOf).join("/")}`);
  if (!details) return;
  if (s.falsePos.length) breakdown(s.falsePos, log);
  log("  time to detect (simulated, from the incident's start; target ≤ 10 min):");
  for (const { x, first } of s.firsts) {
    const delay = first ? `${Math.round((first.t - x.start) / MINUTE)} min (${first.metric})` : "not detected";
    log(`    ${x.kind.padEnd(31)} agent ${x.agent}, ${new Date(x.start).toISOString().slice(0, 16)}Z: ${delay}`);
  }
}

/** Where the false alerts come from: per metric, by the window's volume and by the UTC hour of the day. */
function breakdown(falsePos: readonly Fire[], log: (line: string) => void): void {
  const table = (name: string, key: (f: Fire) => string) => {
    const by = new Map<string, Map<string, number>>();
    for (const f of falsePos) {
      const row = by.get(f.metric) ?? new Map<string, number>();
      row.set(key(f), (row.get(key(f)) ?? 0) + 1);
      by.set(f.metric, row);
    }
    for (const [metric, row] of by) log(`    ${metric} by ${name}: ${[...row].sort(([a], [b]) => a.localeCompare(b, "en", { numeric: true })).map(([k, n]) => `${k}: ${n}`).join(", ")}`);
  };
  const bucket = (v: number) => (v < 20 ? "<20" : v < 40 ? "20-39" : v < 80 ? "40-79" : "80+");
  log("  false alerts:");
  table("window volume", (f) => bucket(f.volume));
  table("UTC hour", (f) => String(new Date(f.t).getUTCHours()).padStart(2, "0"));
}
