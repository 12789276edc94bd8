/**
 * The runs list sorted by a score, without joining the score to every run of the project before the top-N (the join
 * probed a million runs against every run's latest value: 0.5–0.6 s a page; docs/BENCHMARKS.md, "The runs explorer").
 *
 * The runs with the score come first, in the score's order, from the top of the scores: the first `want` rows of the
 * score's name (number/boolean, past the cursor) in (value, sdk_run_id) order, a plain read. A run's value is one of
 * its rows (its latest: run-scores.ts), in its place in that order, so the runs whose latest value is among those rows
 * are, in order, the list's scored runs up to the last row read; a row that is not its run's latest is dropped. Their
 * runs are read after (the filter's WHERE, every version: run-list.ts keeps the latest). When the rows run out, the
 * runs without the score follow (sort_has 0), by id: unscoredCondition.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { latestScoresOf, sortScore } from "./run-scores.js";
import type { SqlParams } from "./runs-filter-sql.js";

export interface ScoreSortRead {
  /** The candidate rows (user_id, external_id, version, run_id, sort_value, sort_has 1), in the score's order. */
  readonly rows: Record<string, unknown>[];
  /** Whether the score's rows past the cursor are all read. */
  readonly complete: boolean;
}

interface Top { run_id: string; sdk_run_id: string; value_number: number | string }

/**
 * The candidates among the runs with score `name`, from its first `want` rows after `cursor` (when the cursor is among
 * the scored runs). `runsQuery` reads the rows of agent_runs that match the filter among these runs.
 */
export async function scoredCandidates(
  ch: ClickHouse, projectId: number, name: string, desc: boolean, cursor: { value: number; id: string } | undefined,
  want: number, runsQuery: (ids: { runIds: string[]; externalIds: string[] }) => Promise<Record<string, unknown>[]>,
): Promise<ScoreSortRead> {
  const dir = desc ? "DESC" : "ASC";
  const cmp = desc ? "<" : ">";
  const after = cursor === undefined ? "" : ` AND (value_number ${cmp} {cv:Float64} OR (value_number = {cv:Float64} AND sdk_run_id ${cmp} {cid:String}))`;
  const top = await ch.query<Top>(
    `SELECT toString(run_id) AS run_id, sdk_run_id, value_number FROM scores
      WHERE project_id = {project:UInt64} AND name = {name:String} AND value_type IN ('number', 'boolean')${after}
      ORDER BY value_number ${dir}, sdk_run_id ${dir} LIMIT {want:UInt32}`,
    { project: projectId, name, want, ...(cursor ? { cv: String(cursor.value), cid: cursor.id } : {}) },
  );
  const latest = await latestScoresOf(ch, projectId, top.map((t) => t.run_id));

  // The runs in order, each at its latest value's row.
  const place = new Map<string, { at: number; value: number }>();
  for (const t of top) {
    const value = sortScore(latest.get(t.run_id), name);
    if (place.has(t.run_id) || value === undefined || value !== Number(t.value_number)) continue;
    place.set(t.run_id, { at: place.size, value });
  }
  const complete = top.length < want;
  if (place.size === 0) return { rows: [], complete };
  const ids = [...place.keys()];
  const external = new Set(top.filter((t) => place.has(t.run_id)).map((t) => t.sdk_run_id));
  const rows = await runsQuery({ runIds: ids, externalIds: [...external] });

  const of = (r: Record<string, unknown>) => place.get(String(r.run_id));
  const placed = rows.filter((r) => of(r) !== undefined);
  placed.sort((a, b) => of(a)!.at - of(b)!.at);
  for (const r of placed) Object.assign(r, { sort_value: of(r)!.value, sort_has: 1 });
  return { rows: placed, complete };
}

/**
 * The runs without score `name` (no latest row of a score of that name is a number/boolean): a condition on
 * agent_runs, bound in `p`. Read only once the scored runs are all listed.
 */
export function unscoredCondition(name: string, project: string, p: SqlParams): string {
  const n = p.bind("String", name);
  return `run_id NOT IN (SELECT run_id FROM scores WHERE project_id = ${project}
      AND run_id IN (SELECT run_id FROM scores WHERE project_id = ${project} AND name = ${n} AND value_type IN ('number', 'boolean'))
      GROUP BY run_id, score_id HAVING argMax(name, created_at) = ${n} AND argMax(value_type, created_at) IN ('number', 'boolean'))`;
}
