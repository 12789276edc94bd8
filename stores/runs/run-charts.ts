/**
 * The runs charts (docs/DASHBOARD.md, Charts): the runs a filter matches, bucketed by start time over a range, with
 * each bucket's run count, errors, latency percentiles, tokens, cost and score means. The bucket size is chosen
 * from the range (at most MAX_BUCKETS buckets), so a 30-day chart is as cheap to draw as a 1-hour one. Two grouped
 * scans: the runs (agent_runs FINAL, the filter's WHERE from runs-filter-sql.ts) and their scores.
 *
 * Definitions, which the tests recompute: a run belongs to the bucket of its start (its last event while its
 * run_start has not arrived); errors are runs whose status is error; latency is over the runs that ended
 * (quantileExact: the value at position floor(level × n) of the bucket's sorted durations); a score's mean is the
 * mean of every numeric or boolean (1/0) value of that name given to the bucket's runs or their spans.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { SINCE_UNIT_MS, type RunsFilter } from "../../core/runs-filter/index.js";
import { DURATION_MS, runsFilterSql, SqlParams } from "./runs-filter-sql.js";
import { RUN_SORT_AT } from "./run-query.js";

/** Bucket sizes, seconds: the smallest that gives at most MAX_BUCKETS buckets over the range. */
export const BUCKET_SECONDS = [60, 300, 900, 1_800, 3_600, 3 * 3_600, 6 * 3_600, 12 * 3_600, 86_400, 7 * 86_400, 28 * 86_400] as const;
export const MAX_BUCKETS = 120;
/** A chart over a filter with no time in it. */
export const DEFAULT_CHART_RANGE_MS = 24 * 3_600_000;
/** Score means are drawn for the most-given scores, at most this many. */
export const MAX_CHART_SCORES = 5;

export interface ChartRange {
  readonly from: string;
  readonly to: string;
  readonly bucket_seconds: number;
}

export interface ChartBucket {
  /** The bucket's start (UTC ISO). */
  readonly at: string;
  readonly runs: number;
  readonly errors: number;
  /** errors / runs; null for an empty bucket. */
  readonly error_rate: number | null;
  /** Over the runs that ended; null when none did. */
  readonly p50_ms: number | null;
  readonly p95_ms: number | null;
  readonly p99_ms: number | null;
  readonly tokens: number;
  readonly cost_usd: number;
  /** Score name → mean of its values in the bucket (names in RunsChart.scores); absent: no value. */
  readonly scores: Readonly<Record<string, number>>;
}

export interface RunsChart {
  readonly range: ChartRange;
  /** Every bucket of the range, in order (empty ones too, so the x axis is time). */
  readonly buckets: readonly ChartBucket[];
  /** The score names drawn, most given first. */
  readonly scores: readonly string[];
}

/**
 * The range a filter's time fields name: from/to, or since back from now, or the last DEFAULT_CHART_RANGE_MS; `to`
 * defaults to now. The bucket size follows from its length.
 */
export function chartRange(f: RunsFilter, now = Date.now()): ChartRange {
  const sinceMs = f.since ? Number(f.since.slice(0, -1)) * SINCE_UNIT_MS[f.since.slice(-1) as keyof typeof SINCE_UNIT_MS] : undefined;
  const to = f.to !== undefined ? Date.parse(f.to) : now;
  let from = f.from !== undefined ? Date.parse(f.from) : undefined;
  // Both from and since: the later of the two, as the list reads them (both must hold).
  if (sinceMs !== undefined) from = Math.max(from ?? 0, now - sinceMs);
  from ??= to - DEFAULT_CHART_RANGE_MS;
  if (!(from < to)) from = to - 60_000;
  const span = (to - from) / 1000;
  const bucket = BUCKET_SECONDS.find((b) => Math.ceil(span / b) <= MAX_BUCKETS) ?? BUCKET_SECONDS[BUCKET_SECONDS.length - 1];
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), bucket_seconds: bucket };
}

interface RunRow { t: number | string; runs: number | string; errors: number | string; q: (number | string | null)[] | null; tokens: number | string; cost: number | string }
interface ScoreRow { t: number | string; name: string; mean: number | string; n: number | string }

const num = (v: unknown): number => Number(v ?? 0);
const ms = (v: unknown): number | null => (v === null || v === undefined || Number.isNaN(Number(v)) ? null : Math.round(Number(v)));

/** The runs chart of the project's runs matching `filter` over its range (chartRange). */
export async function runsChart(ch: ClickHouse, projectId: number, filter: RunsFilter, now = Date.now()): Promise<RunsChart> {
  const range = chartRange(filter, now);
  const p = new SqlParams();
  const { where } = runsFilterSql(projectId, [filter], p, now);
  const at = RUN_SORT_AT;
  // A run starts no later than its last event: the bound on last_event_at adds nothing but lets its minmax index
  // (migration 190) skip the granules of runs last active before the range.
  where.push(`${at} >= ${p.time(range.from)}`, `${at} < ${p.time(range.to)}`, `last_event_at >= ${p.time(range.from)}`);
  // The size is one of BUCKET_SECONDS, never input: written into the SQL (an INTERVAL takes no parameter).
  const bucket = `toUnixTimestamp(toStartOfInterval(${at}, INTERVAL ${range.bucket_seconds} SECOND, 'UTC'))`;
  const runsOf = `FROM agent_runs FINAL WHERE ${where.join(" AND ")}`;
  // The runs with a version that matches: a superset of the runs, enough to narrow the scores read (the join with the
  // runs read with FINAL keeps the exact ones), at a plain read's cost instead of a second FINAL.
  const versionsOf = `FROM agent_runs WHERE ${where.join(" AND ")}`;
  const [runRows, scoreRows] = await Promise.all([
    ch.query<RunRow>(
      `SELECT ${bucket} AS t, count() AS runs, countIf(status = 'error') AS errors,
              quantilesExactIf(0.5, 0.95, 0.99)(ifNull(${DURATION_MS}, 0), isNotNull(${DURATION_MS})) AS q,
              countIf(isNotNull(${DURATION_MS})) AS ended, sum(total_tokens) AS tokens, sum(cost_usd) AS cost
         ${runsOf} GROUP BY t ORDER BY t`,
      p.values,
    ).then((rows) => rows as (RunRow & { ended: number | string })[]),
    ch.query<ScoreRow>(
      `SELECT r.t AS t, s.name AS name, avg(s.value_number) AS mean, count() AS n
         FROM (SELECT run_id, ${bucket} AS t ${runsOf}) AS r
         INNER JOIN (SELECT run_id, name, value_number FROM scores FINAL
                      WHERE project_id = ${p.bind("UInt64", projectId)} AND value_type IN ('number', 'boolean')
                        AND run_id IN (SELECT run_id ${versionsOf})) AS s ON s.run_id = r.run_id
        GROUP BY t, name`,
      p.values,
    ),
  ]);
  const totals = new Map<string, number>();
  for (const r of scoreRows) totals.set(r.name, (totals.get(r.name) ?? 0) + num(r.n));
  const scores = [...totals].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, MAX_CHART_SCORES).map(([name]) => name);
  const byTime = new Map(runRows.map((r) => [num(r.t), r]));
  const scoresByTime = new Map<number, Record<string, number>>();
  for (const r of scoreRows) {
    if (!scores.includes(r.name)) continue;
    const t = num(r.t);
    const m = scoresByTime.get(t) ?? {};
    m[r.name] = Number(r.mean);
    scoresByTime.set(t, m);
  }
  const buckets: ChartBucket[] = [];
  const step = range.bucket_seconds;
  const first = Math.floor(Date.parse(range.from) / 1000 / step) * step;
  for (let t = first; t * 1000 < Date.parse(range.to); t += step) {
    const r = byTime.get(t);
    const runs = num(r?.runs);
    const errors = num(r?.errors);
    const ended = num(r?.ended) > 0;
    buckets.push({
      at: new Date(t * 1000).toISOString(),
      runs, errors, error_rate: runs > 0 ? errors / runs : null,
      p50_ms: ended ? ms(r?.q?.[0]) : null, p95_ms: ended ? ms(r?.q?.[1]) : null, p99_ms: ended ? ms(r?.q?.[2]) : null,
      tokens: num(r?.tokens), cost_usd: num(r?.cost),
      scores: scoresByTime.get(t) ?? {},
    });
  }
  return { range, buckets, scores };
}
