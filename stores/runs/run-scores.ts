/**
 * The scores of a few runs as the runs list counts them, read without FINAL.
 *
 * A score re-written under the same id (an evaluation retried, a review redone, an event delivered twice) counts
 * once: as its latest row (created_at; every writer stamps a re-write later, or writes the same row again). `scores
 * FINAL` folds the same rows, but reads every score of the project to do so (the whole table's key columns, merged
 * across parts), where the runs list needs the scores of the few hundred runs it is placing: their rows, grouped by
 * score id, are a read of the few granules their run ids are in.
 *
 * So the list reads a superset with a plain read (the rows of a name, within a range, in order) and settles its
 * candidates here: a run matches a score condition when the latest row of one of its scores does (runs-filter-sql.ts
 * says the same for the other reads), and a run's value for sorting is its latest number/boolean score of the name.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { ScoreCondition } from "../../core/runs-filter/index.js";

/** The latest row of one score. */
export interface LatestScore {
  readonly run_id: string;
  readonly score_id: string;
  readonly name: string;
  readonly value_type: string;
  readonly value_number: number;
  readonly created_at: string;
}

/** The latest row of each score of the runs `runIds` (UUIDs), by run id. */
export async function latestScoresOf(ch: ClickHouse, projectId: number, runIds: readonly string[]): Promise<Map<string, LatestScore[]>> {
  const out = new Map<string, LatestScore[]>();
  if (runIds.length === 0) return out;
  // Aliases of their own: an aggregate's alias that is a column's name would be read inside the other aggregates.
  const rows = await ch.query<{ run: string; id: string; n: string; t: string; v: number | string; at: string }>(
    `SELECT toString(run_id) AS run, toString(score_id) AS id, argMax(name, created_at) AS n,
            argMax(value_type, created_at) AS t, argMax(value_number, created_at) AS v, toString(max(created_at)) AS at
       FROM scores WHERE project_id = {project:UInt64} AND run_id IN {ids:Array(UUID)} GROUP BY run_id, score_id`,
    { project: projectId, ids: [...new Set(runIds)] },
  );
  for (const r of rows) {
    const list = out.get(r.run) ?? [];
    list.push({ run_id: r.run, score_id: r.id, name: r.n, value_type: r.t, value_number: Number(r.v), created_at: r.at });
    out.set(r.run, list);
  }
  return out;
}

const numeric = (s: LatestScore) => s.value_type === "number" || s.value_type === "boolean";

/** Whether a run with these scores meets `c` (a score of its name, any value or a number/boolean within bounds). */
export function meetsScore(scores: readonly LatestScore[] | undefined, c: ScoreCondition): boolean {
  const bounded = c.min !== undefined || c.max !== undefined;
  return (scores ?? []).some((s) => s.name === c.name && (!bounded || (numeric(s) && within(s.value_number, c))));
}

function within(n: number, c: ScoreCondition): boolean {
  if (c.min !== undefined && (c.min_exclusive ? !(n > c.min) : !(n >= c.min))) return false;
  if (c.max !== undefined && (c.max_exclusive ? !(n < c.max) : !(n <= c.max))) return false;
  return true;
}

/** A run's value of score `name` for sorting: its latest number/boolean score of that name (created_at, then id). */
export function sortScore(scores: readonly LatestScore[] | undefined, name: string): number | undefined {
  let best: LatestScore | undefined;
  for (const s of scores ?? []) {
    if (s.name !== name || !numeric(s)) continue;
    if (!best || s.created_at > best.created_at || (s.created_at === best.created_at && s.score_id > best.score_id)) best = s;
  }
  return best?.value_number;
}
