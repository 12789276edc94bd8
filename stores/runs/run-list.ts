/**
 * The runs list (EventStore.listRuns): a page of a project's runs that match a RunsFilter, in a RunsSort.
 *
 * agent_runs holds a row per run version (ReplacingMergeTree(version)) in the order (user_id, external_id, project_id),
 * which follows neither time nor any filter. Read with FINAL, a page folded every version of every run of the
 * project, every column, before the top-N sort could cut it (0.3–0.65 s a page at a million runs on 2 quiet cores,
 * twice to three times that on busy ones), and FINAL keeps the skip indexes from leaving granules out
 * (docs/BENCHMARKS.md, "The runs explorer"). The page is read in three small steps instead:
 *
 * 1. candidates: the rows (versions, without FINAL) that match the filter, in the sort's order, the first `want`:
 *    only the columns the filter and the sort read, and every skip index prunes (nothing has to be expanded to the
 *    other versions of a granule's runs, as FINAL must).
 * 2. which candidates are their run's latest version: (external_id, max(version)) of the candidates' runs, two narrow
 *    columns of the few granules their ids are in.
 * 3. the page: every column of the first limit + 1 runs whose latest version is a candidate, in candidate order.
 *
 * Why this is the list FINAL gives: a run is listed when its latest version matches, ordered by that version's
 * values. That version is a row step 1 reads, in its own place in the order; so the latest versions among the first
 * `want` candidates are, in order, the runs of the list up to the last candidate. A stale version (an older row,
 * matching or ranked where the run no longer is) takes a candidate's place and is dropped in step 2. When fewer than
 * limit + 1 runs remain while step 1 was cut at `want`, it runs again with GROWTH times as many; past MAX_CANDIDATES
 * (a filter that old versions match far more than latest ones) the page is read with FINAL.
 *
 * Newest first (the default), step 1 first reads the runs started in the last WINDOW_MS only, which a minmax index on
 * last_event_at (migration 190) finds without reading older granules; when the window holds too few, all runs.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunFilter } from "../../core/ports/event-store.js";
import { checkRunsFilter, parseRunsSort, type RunsFilter } from "../../core/runs-filter/index.js";
import { checkLimit, legacyRunsFilter, RUN_SORT_AT } from "./run-query.js";
import { runsFilterSql, SqlParams } from "./runs-filter-sql.js";
import { runsSortSql, type RunsOrder } from "./runs-sort-sql.js";

export const DEFAULT_RUNS_LIMIT = 50;
export const MAX_RUNS_LIMIT = 500;
/** Candidates read first, per run of the page (limit + 1): room for stale versions without a second round. */
const FIRST_CANDIDATES = 2;
const GROWTH = 8;
const MAX_CANDIDATES = 20_000;
/** Newest first, the runs started in this last stretch are read first. */
const WINDOW_MS = 24 * 3_600_000;

type Raw = Record<string, unknown>;
interface Candidate extends Raw { user_id: string; external_id: string; version: string }

/** The run's identity in agent_runs' order (what FINAL folds by; project_id is fixed by the query). */
const keyOf = (r: Raw) => `${String(r.user_id)}\n${String(r.external_id)}`;

export interface RunsPage<T> {
  readonly runs: T[];
  readonly next_cursor: string | null;
}

/**
 * A page of the project's runs under `query` (its filter, the older fields, sort, cursor, limit); rows as read, whole
 * (RUN_SELECT), decoded by `decode`.
 */
export async function listRunsPage<T>(ch: ClickHouse, projectId: number, query: RunFilter, runSelect: string, decode: (row: Raw) => T): Promise<RunsPage<T>> {
  const limit = checkLimit(query.limit, DEFAULT_RUNS_LIMIT, MAX_RUNS_LIMIT);
  // A filter handed over as data is checked here: its SQL relies on the Schema's bounds.
  const filters = [query.filter && checkRunsFilter(query.filter), legacyRunsFilter(query)].filter((f): f is RunsFilter => f !== undefined);
  const sort = parseRunsSort(query.sort?.field, query.sort?.order);
  /** The WHERE, ORDER BY and parameters of one query (each query binds its own). */
  const plan = () => {
    const p = new SqlParams();
    const { where, project } = runsFilterSql(projectId, filters, p);
    const order = runsSortSql(sort, query.cursor, p, project);
    if (order.after) where.push(order.after);
    if (query.external_ids) where.push(`external_id IN ${p.bind("Array(String)", [...query.external_ids])}`);
    return { p, where: where.join(" AND "), order };
  };
  const page = (rows: { run: Raw; cursorRow: Raw; order: RunsOrder }[]): RunsPage<T> => ({
    runs: rows.slice(0, limit).map((r) => decode(r.run)),
    next_cursor: rows.length > limit ? rows[limit - 1]!.order.cursorOf(rows[limit - 1]!.cursorRow) : null,
  });

  // Newest first, the last WINDOW_MS are read first: most pages are there, and the skip index on last_event_at leaves
  // the granules of older runs out (a run's start is never after its last event, and its last event never moves back).
  // Not when the filter has a subquery (free text, a model, a score): each read would build its set again.
  const newestFirst = sort.field === "start_time" && sort.order === "desc";
  const subquery = filters.some((f) => f.text || f.text_not || f.model || f.model_not || f.score);
  let window: string | undefined = newestFirst && !subquery ? new Date(Date.now() - WINDOW_MS).toISOString() : undefined;
  for (let want = FIRST_CANDIDATES * (limit + 1); want <= MAX_CANDIDATES; ) {
    const { p, where, order } = plan();
    const within = window === undefined ? "" : ` AND last_event_at >= ${p.time(window)} AND ${RUN_SORT_AT} >= ${p.time(window)}`;
    const candidates = await ch.query<Candidate>(
      `SELECT user_id, external_id, version, ${order.select} FROM agent_runs ${order.join}
        WHERE ${where}${within} ORDER BY ${order.orderBy} LIMIT ${p.bind("UInt32", want)}`,
      p.values,
    );
    const listed = latestAmong(candidates, await latestVersions(ch, projectId, candidates), limit + 1);
    const complete = candidates.length < want;
    // The listed runs are the list's first ones: everything outside the window ranks after every row inside it.
    if (listed.length > limit || (complete && window === undefined)) {
      const runs = await rowsOf(ch, projectId, listed, runSelect);
      return page(listed.flatMap((c) => { const run = runs.get(keyOf(c)); return run ? [{ run, cursorRow: c, order }] : []; }));
    }
    if (complete) window = undefined;
    else want *= GROWTH;
  }
  // FINAL folds versions before WHERE sees them, so a filter on status matches only the latest version.
  const { p, where, order } = plan();
  const rows = await ch.query<Raw>(
    `SELECT ${runSelect}, ${order.select} FROM agent_runs FINAL ${order.join}
      WHERE ${where} ORDER BY ${order.orderBy} LIMIT ${p.bind("UInt32", limit + 1)}`,
    p.values,
  );
  return page(rows.map((r) => ({ run: r, cursorRow: r, order })));
}

/** The candidates that are their run's latest version, once each, in order: at most `n`. */
function latestAmong(candidates: readonly Candidate[], latest: ReadonlyMap<string, string>, n: number): Candidate[] {
  const listed: Candidate[] = [];
  const taken = new Set<string>();
  for (const c of candidates) {
    const key = keyOf(c);
    if (latest.get(key) !== String(c.version) || taken.has(key)) continue;
    taken.add(key);
    listed.push(c);
    if (listed.length === n) break;
  }
  return listed;
}

/** The latest version of each candidate's run, by keyOf. */
async function latestVersions(ch: ClickHouse, projectId: number, candidates: readonly Candidate[]): Promise<Map<string, string>> {
  if (candidates.length === 0) return new Map();
  const rows = await ch.query<{ user_id: string; external_id: string; latest: string }>(
    `SELECT user_id, external_id, max(version) AS latest FROM agent_runs
      WHERE project_id = {project:UInt64} AND external_id IN {ids:Array(String)} GROUP BY user_id, external_id`,
    { project: projectId, ids: [...new Set(candidates.map((c) => c.external_id))] },
  );
  return new Map(rows.map((r) => [keyOf(r), String(r.latest)]));
}

/**
 * The listed runs' rows, whole, at the version listed; a newer one if that version was folded away by a merge since
 * (a run deleted meanwhile is left out).
 */
async function rowsOf(ch: ClickHouse, projectId: number, listed: readonly Candidate[], runSelect: string): Promise<Map<string, Raw>> {
  const out = new Map<string, Raw>();
  if (listed.length === 0) return out;
  const version = new Map(listed.map((c) => [keyOf(c), String(c.version)]));
  const rows = await ch.query<Raw>(
    `SELECT ${runSelect} FROM agent_runs WHERE project_id = {project:UInt64} AND external_id IN {ids:Array(String)}`,
    { project: projectId, ids: listed.map((c) => c.external_id) },
  );
  const listedVersion = (r: Raw) => String(r.version) === version.get(keyOf(r));
  for (const r of rows) {
    const seen = out.get(keyOf(r));
    const better = !seen || listedVersion(r) || (!listedVersion(seen) && BigInt(String(r.version)) > BigInt(String(seen.version)));
    if (better) out.set(keyOf(r), r);
  }
  return out;
}
