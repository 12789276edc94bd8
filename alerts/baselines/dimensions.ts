/**
 * An agent's baselines per environment and per config version (stores/baselines/dimension-hours.ts): the same bands
 * as the agent-wide one (band.ts, the same rules and the same history needed), each learned only from the hours of
 * the runs that named that environment or ran with that config version. A version a few hours old is "learning",
 * with the hours it has; a config activation is compared as the two versions' own bands where both have one.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { dimensionStats, type Dimension } from "../../stores/baselines/dimension-hours.js";
import { MIN_RUNS_PER_HOUR, SENSITIVITIES, learnBand, type Band, type Sensitivity } from "./band.js";
import type { ChangePoint } from "./change-points.js";
import type { MetricName } from "./metrics.js";

/** How many config versions the explanation shows: the ones with the latest hours. */
export const RECENT_VERSIONS = 5;
const MAX_ENVIRONMENTS = 20;

export interface DimensionBand {
  /** Set for an environment's band. */
  readonly environment?: string;
  /** Set for a config version's band. */
  readonly version?: number;
  /** The latest hour with enough runs it was learned from, ISO. */
  readonly latest_hour: string;
  readonly bands: Readonly<Record<Sensitivity, Band>>;
}

/** A config activation as its versions' own bands (medium sensitivity): the one it replaced and the one activated. */
export interface VersionsCompared {
  /** The version active before (the previous activation, else the newest lower version with history); null: none known. */
  readonly from_version: number | null;
  readonly to_version: number;
  /** null: that version has no hour with enough runs in the history. */
  readonly before: Band | null;
  readonly after: Band | null;
}

const bandsOf = (stats: Parameters<typeof learnBand>[0], metric: MetricName): Record<Sensitivity, Band> =>
  Object.fromEntries((Object.keys(SENSITIVITIES) as Sensitivity[]).map((s) => [s, learnBand(stats, metric, s)])) as Record<Sensitivity, Band>;

export async function dimensionBands(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent: string; readonly metric: MetricName; readonly stored: string; readonly hourOfWeek: number; readonly since: Date; readonly until: Date },
): Promise<{ environments: DimensionBand[]; config_versions: DimensionBand[] }> {
  const read = (dimension: Dimension, limit: number) => dimensionStats(ch, {
    projectId: q.projectId, agent: q.agent, metric: q.stored, dimension, hourOfWeek: q.hourOfWeek, since: q.since, until: q.until, minRuns: MIN_RUNS_PER_HOUR, limit,
  });
  const [environments, versions] = await Promise.all([read("environment", MAX_ENVIRONMENTS), read("config_version", RECENT_VERSIONS)]);
  return {
    environments: environments
      .map((s) => ({ environment: s.dimension_value, latest_hour: s.latest_hour, bands: bandsOf(s, q.metric) }))
      .sort((a, b) => a.environment.localeCompare(b.environment)),
    config_versions: versions
      .map((s) => ({ version: Number(s.dimension_value), latest_hour: s.latest_hour, bands: bandsOf(s, q.metric) }))
      .sort((a, b) => b.version - a.version),
  };
}

/** The activation `c` as its two versions' bands; `earlier` are the change points before it, oldest first. */
export function compareVersions(c: ChangePoint, earlier: readonly ChangePoint[], versions: readonly DimensionBand[]): VersionsCompared | undefined {
  const to = c.version;
  if (to === undefined) return undefined;
  const previous = [...earlier].reverse().find((x) => x.kind === "config_activation" && x.version !== to)?.version
    ?? versions.map((v) => v.version!).filter((v) => v < to).sort((a, b) => b - a)[0];
  const bandOf = (v: number | undefined): Band | null => (v === undefined ? null : versions.find((x) => x.version === v)?.bands.medium ?? null);
  return { from_version: previous ?? null, to_version: to, before: bandOf(previous), after: bandOf(to) };
}

/** The statistics of one environment's runs per agent (or for one), what the anomaly trigger with `environment` judges with. */
export const environmentStats = (
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent?: string; readonly stored: string; readonly environment: string; readonly hourOfWeek: number; readonly since: Date; readonly until: Date },
) => dimensionStats(ch, {
  projectId: q.projectId, agent: q.agent, metric: q.stored, dimension: "environment", value: q.environment, hourOfWeek: q.hourOfWeek,
  since: q.since, until: q.until, minRuns: MIN_RUNS_PER_HOUR, limit: 100_000,
});
