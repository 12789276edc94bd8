/**
 * A baseline opened up: for one agent and metric at `now`, the band of each sensitivity (or "learning"), the hourly
 * values it was learned from, the live window, and the agent's change points with the metric before and after each
 * (and the shift in band spreads: how significant it is against the metric's usual spread; for a config activation,
 * the two versions' own bands), and the band of each environment and recent config version. What /api/baselines
 * answers; the numbers are the ones the anomaly trigger judges with.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { baselineStats, windowMetrics, type WindowMetrics } from "../../stores/baselines/metric-hours.js";
import { metricHistory } from "../../stores/baselines/history.js";
import { HISTORY_DAYS, MIN_RUNS_PER_HOUR, SENSITIVITIES, hourOfWeek, learnBand, slotLabel, type Band, type Sensitivity } from "./band.js";
import { beforeAfter, changePoints, type ChangePoint, type Side } from "./change-points.js";
import { isRunMetric, metricLabel, storedMetric, type MetricName } from "./metrics.js";
import { windowValues } from "./window.js";
import { rollUpProject } from "./rollup.js";
import { compareVersions, dimensionBands, type DimensionBand, type VersionsCompared } from "./dimensions.js";

const HOUR_MS = 3_600_000;

export interface BaselineExplanation {
  readonly agent: string;
  readonly metric: MetricName;
  /** The score, for a score's mean. */
  readonly score?: string;
  readonly label: string;
  readonly at: string;
  readonly hour_of_week: string;
  readonly bands: Readonly<Record<Sensitivity, Band>>;
  /** The hourly values the band is learned from: the slot's when it has enough, else every hour's. */
  readonly learned_from: readonly { hour: string; runs: number; value: number }[];
  readonly window: { readonly minutes: number; readonly runs: number; readonly value: number | null };
  readonly changes: readonly (ChangePoint & { before: Side; after: Side; shift_in_spreads: number | null; versions?: VersionsCompared })[];
  /** The agent's band for each environment its runs named in the history (dimensions.ts). */
  readonly environments: readonly DimensionBand[];
  /** The same for each of its most recent config versions. */
  readonly config_versions: readonly DimensionBand[];
}

/**
 * What explaining several metrics of one agent at one `now` reads once for all of them (agentReads): its change
 * points, and the live window of its run metrics (one query gives all five).
 */
export interface AgentReads {
  readonly changes: Promise<ChangePoint[]>;
  readonly runWindows: Promise<WindowMetrics[]>;
}

/** The shared reads of an agent's baselines at `now` (HISTORY_DAYS of change points, the last `windowMinutes`). */
export function agentReads(ports: { readonly sql: Sql; readonly clickhouse: ClickHouse }, q: { readonly projectId: number; readonly agent: string; readonly windowMinutes: number; readonly now: Date }): AgentReads {
  const until = Math.floor(q.now.getTime() / HOUR_MS) * HOUR_MS;
  const reads = {
    changes: changePoints(ports, q.projectId, q.agent, new Date(until - HISTORY_DAYS * 24 * HOUR_MS), q.now),
    runWindows: windowMetrics(ports.clickhouse, { projectId: q.projectId, agent: q.agent, from: new Date(q.now.getTime() - q.windowMinutes * 60_000), to: q.now }),
  };
  // Each is awaited by every explanation, after its roll-up: a failure must not count as unhandled before that.
  reads.changes.catch(() => undefined);
  reads.runWindows.catch(() => undefined);
  return reads;
}

/** `shared`: the agent's reads made once for every metric explained at the same `now` and window (agentReads). */
export async function explainBaseline(
  ports: { readonly sql: Sql; readonly clickhouse: ClickHouse },
  q: { readonly projectId: number; readonly agent: string; readonly metric: MetricName; readonly score?: string; readonly windowMinutes: number; readonly now: Date },
  shared?: AgentReads,
): Promise<BaselineExplanation> {
  const { projectId, agent, metric, now } = q;
  const ref = metric === "score_mean" ? { metric, score: q.score } : { metric };
  const stored = storedMetric(ref);
  await rollUpProject(ports.clickhouse, projectId, now);
  const how = hourOfWeek(now);
  const until = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const since = new Date(until.getTime() - HISTORY_DAYS * 24 * HOUR_MS);
  const [stats, history, windows, changes, dims] = await Promise.all([
    baselineStats(ports.clickhouse, { projectId, metric: stored, agent, hourOfWeek: how, since, until, minRuns: MIN_RUNS_PER_HOUR }),
    metricHistory(ports.clickhouse, { projectId, agent, metric: stored, since, until }),
    shared && isRunMetric(metric)
      ? shared.runWindows.then((ws) => ws.map((w) => ({ agent_name: w.agent_name, runs: w.runs, value: w.values[metric] })))
      : windowValues(ports.clickhouse, { projectId, agent, ref, from: new Date(now.getTime() - q.windowMinutes * 60_000), to: now }),
    shared?.changes ?? changePoints(ports, projectId, agent, since, now),
    dimensionBands(ports.clickhouse, { projectId, agent, metric, stored, hourOfWeek: how, since, until }),
  ]);
  const bands = Object.fromEntries((Object.keys(SENSITIVITIES) as Sensitivity[]).map((s) => [s, learnBand(stats[0], metric, s)])) as Record<Sensitivity, Band>;
  const medium = bands.medium;
  const usable = history.filter((h) => h.runs >= MIN_RUNS_PER_HOUR);
  const learnedFrom = medium.state === "ready" && medium.basis === "slot" ? usable.filter((h) => hourOfWeek(new Date(h.hour)) === how) : usable;
  const w = windows[0];
  return {
    agent, metric, ...(ref.score !== undefined ? { score: ref.score } : {}), label: metricLabel(ref), at: now.toISOString(), hour_of_week: slotLabel(how), bands, learned_from: learnedFrom,
    window: { minutes: q.windowMinutes, runs: w?.runs ?? 0, value: w ? w.value : null },
    changes: changes.map((c, i) => {
      const { before, after } = beforeAfter(history, c.at);
      const shift = medium.state === "ready" && before.runs > 0 && after.runs > 0 ? (after.value - before.value) / medium.spread : null;
      const versions = c.kind === "config_activation" ? compareVersions(c, changes.slice(0, i), dims.config_versions) : undefined;
      return { ...c, before, after, shift_in_spreads: shift, ...(versions ? { versions } : {}) };
    }),
    environments: dims.environments,
    config_versions: dims.config_versions,
  };
}
