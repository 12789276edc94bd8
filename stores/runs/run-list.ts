/**
 * The runs list (EventStore.listRuns): a page of a project's runs that match a RunsFilter, in a RunsSort.
 *
 * agent_runs holds a row per run version (ReplacingMergeTree(version)) in the order (user_id, external_id, project_id),
 * which follows neither time nor any filter. Read with FINAL, a page folded every version of every run of the
 * project, every column, before the top-N sort could cut it (0.3–0.65 s a page at a million runs on 2 quiet cores,
 * twice to three times that on busy ones), and FINAL keeps the skip indexes from leaving granules out
 * (docs/BENCHMARKS.md, "The runs explorer"). The page is read in two steps instead:
 *
 * 1. candidates: the rows (versions, without FINAL) that match the filter, in the sort's order, the first `want`:
 *    only the columns the filter and the sort read, and every skip index prunes (nothing has to be expanded to the
 *    other versions of a granule's runs, as FINAL must).
 * 2. the page: every column of every version of the first runs among the candidates, as many as the page still
 *    wants; a candidate is listed when it is its run's latest version (the highest version read of that run), in
 *    candidate order. A stale candidate leaves a place, and the next runs among the candidates are read for it.
 *
 * Why this is the list FINAL gives: a run is listed when its latest version matches, ordered by that version's
 * values. That version is a row step 1 reads, in its own place in the order; so the latest versions among the first
 * `want` candidates are, in order, the runs of the list up to the last candidate. A stale version (an older row,
 * matching or ranked where the run no longer is) takes a candidate's place and is dropped in step 2: reading a run by
 * its id reads all its versions, so the latest is known from the same read that fetches the page's columns (a read
 * of the versions alone before it cost a round of ~45 ms at a million runs). When fewer than
 * limit + 1 runs remain while step 1 was cut at `want`, it runs again with GROWTH times as many; past MAX_CANDIDATES
 * (a filter that old versions match far more than latest ones) the page is read with FINAL.
 *
 * Newest first (the default), step 1 first reads the runs started in the last WINDOW_MS only, which a minmax index on
 * last_event_at (migration 190) finds without reading older granules; when the window holds too few, all runs.
 *
 * A score filter matches candidates by a superset (a plain read of the scores) that `settle` makes exact per run. A
 * sort by a score reads its candidates from the top of the scores instead of joining the score to every run
 * (score-sort.ts), then the runs without the score, by id.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { RunFilter } from "../../core/ports/event-store.js";
import { checkRunsFilter, parseRunsSort, scoreOfSort, type RunsFilter, type ScoreCondition } from "../../core/runs-filter/index.js";
import { checkLimit, legacyRunsFilter, RUN_SORT_AT } from "./run-query.js";
import { runsFilterSql, SqlParams } from "./runs-filter-sql.js";
import { latestScoresOf, meetsScore } from "./run-scores.js";
import { runsSortSql } from "./runs-sort-sql.js";
import { scoredCandidates, unscoredCondition } from "./score-sort.js";

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
  const scoreConditions = filters.flatMap((f) => f.score ?? []);
  /**
   * The WHERE, ORDER BY and parameters of one query (each query binds its own). Candidates match score conditions by
   * a superset (settled in `settle`); the FINAL read exactly.
   */
  const plan = (exact = false) => {
    const p = new SqlParams();
    const { where, project } = runsFilterSql(projectId, filters, p, Date.now(), !exact);
    const order = runsSortSql(sort, query.cursor, p, project);
    if (query.external_ids) where.push(`external_id IN ${p.bind("Array(String)", [...query.external_ids])}`);
    return { p, where, project, order };
  };
  const n = limit + 1;
  const page = (rows: Listed[]): RunsPage<T> => {
    const order = plan().order;
    return {
      runs: rows.slice(0, limit).map((r) => decode(r.run)),
      next_cursor: rows.length > limit ? order.cursorOf(rows[limit - 1]!.candidate) : null,
    };
  };
  /** The first `m` runs of candidates read by `read`, settled; undefined past MAX_CANDIDATES. */
  const firstRuns = async (m: number, read: (want: number, window?: string) => Promise<{ rows: Candidate[]; complete: boolean }>, window?: string) => {
    for (let want = FIRST_CANDIDATES * m; want <= MAX_CANDIDATES; ) {
      const { rows, complete } = await read(want, window);
      const settled = await settle(ch, projectId, rows, scoreConditions);
      const listed = await latestRunsAmong(ch, projectId, settled, m, runSelect);
      // The listed runs are the list's first ones: everything outside the window ranks after every row inside it.
      if (listed.length >= m || (complete && window === undefined)) return listed;
      if (complete) window = undefined;
      else want *= GROWTH;
    }
    return undefined;
  };
  /** Candidates in the sort's order (not a score's): the first `want`. run_id (16 bytes a row) only to settle scores. */
  const ordered = async (want: number, window?: string) => {
    const { p, where, order } = plan();
    if (order.after) where.push(order.after);
    if (window !== undefined) where.push(`last_event_at >= ${p.time(window)} AND ${RUN_SORT_AT} >= ${p.time(window)}`);
    const rows = await ch.query<Candidate>(
      `SELECT user_id, external_id, version, ${scoreConditions.length > 0 ? "run_id, " : ""}${order.select} FROM agent_runs ${order.join}
        WHERE ${where.join(" AND ")} ORDER BY ${order.orderBy} LIMIT ${p.bind("UInt32", want)}`,
      p.values,
    );
    return { rows, complete: rows.length < want };
  };

  const score = scoreOfSort(sort);
  if (score !== undefined) {
    const listed = await scoreSorted(score, n);
    if (listed) return page(listed);
  } else {
    // Newest first, the last WINDOW_MS are read first: most pages are there, and the skip index on last_event_at leaves
    // the granules of older runs out (a run's start is never after its last event, and its last event never moves
    // back). Not when the filter has a costly subquery (free text): each read would build its set again. A score's
    // superset is a plain read of one name's rows (tens of ms at a million runs), less than the window saves. A model
    // reads the runs' `models`; its look-up of calls stored before that column (runs-filter-sql.ts) reads nothing on
    // an install that had none then, and less as retention removes them.
    const newestFirst = sort.field === "start_time" && sort.order === "desc";
    const subquery = filters.some((f) => f.text || f.text_not);
    const listed = await firstRuns(n, ordered, newestFirst && !subquery ? new Date(Date.now() - WINDOW_MS).toISOString() : undefined);
    if (listed) return page(listed);
  }
  // FINAL folds versions before WHERE sees them, so a filter on status matches only the latest version.
  const { p, where, order } = plan(true);
  if (order.after) where.push(order.after);
  const rows = await ch.query<Raw>(
    `SELECT ${runSelect}, ${order.select} FROM agent_runs FINAL ${order.join}
      WHERE ${where.join(" AND ")} ORDER BY ${order.orderBy} LIMIT ${p.bind("UInt32", n)}`,
    p.values,
  );
  return {
    runs: rows.slice(0, limit).map(decode),
    next_cursor: rows.length > limit ? order.cursorOf(rows[limit - 1]!) : null,
  };

  /** Sorted by a score: the runs with it (score-sort.ts), then the ones without, by id. */
  async function scoreSorted(name: string, m: number): Promise<Listed[] | undefined> {
    const desc = sort.order === "desc";
    const cursor = plan().order.cursor;
    let listed: Listed[] = [];
    if (cursor === undefined || cursor.value !== null) {
      const from = cursor === undefined ? undefined : { value: cursor.value as number, id: cursor.id };
      const scored = await firstRuns(m, (want) => scoredCandidates(ch, projectId, name, desc, from, want, async ({ runIds, externalIds }) => {
        const { p, where } = plan();
        return ch.query<Candidate>(
          `SELECT user_id, external_id, version, run_id FROM agent_runs
            WHERE ${where.join(" AND ")} AND external_id IN ${p.bind("Array(String)", externalIds)} AND run_id IN ${p.bind("Array(UUID)", runIds)}`,
          p.values,
        );
      }) as Promise<{ rows: Candidate[]; complete: boolean }>);
      if (scored === undefined) return undefined;
      listed = scored;
    }
    if (listed.length >= m) return listed;
    // The runs without the score, by id (sort_value 0), past the cursor's id when the cursor is among them.
    const rest = await firstRuns(m - listed.length, async (want) => {
      const { p, where, project } = plan();
      const dir = desc ? "DESC" : "ASC";
      if (cursor?.value === null) where.push(`external_id ${desc ? "<" : ">"} ${p.bind("String", cursor.id)}`);
      const rows = await ch.query<Candidate>(
        `SELECT user_id, external_id, version, run_id, 0 AS sort_value, 0 AS sort_has FROM agent_runs
          WHERE ${where.join(" AND ")} AND ${unscoredCondition(name, project, p)} ORDER BY external_id ${dir} LIMIT ${p.bind("UInt32", want)}`,
        p.values,
      );
      return { rows, complete: rows.length < want };
    });
    return rest && [...listed, ...rest];
  }
}

/**
 * The candidates whose run meets every score condition, in order: the candidates' query matched them by a superset
 * (runsFilterSql's scoreSuperset); here each of their runs' scores counts once (run-scores.ts).
 */
async function settle(ch: ClickHouse, projectId: number, candidates: Candidate[], conditions: readonly ScoreCondition[]): Promise<Candidate[]> {
  if (conditions.length === 0 || candidates.length === 0) return candidates;
  const scores = await latestScoresOf(ch, projectId, candidates.map((c) => String(c.run_id)));
  return candidates.filter((c) => conditions.every((s) => meetsScore(scores.get(String(c.run_id)), s)));
}

/** A listed run: its candidate row (the sort's key, for the cursor) and its row, whole. */
interface Listed { readonly candidate: Candidate; readonly run: Raw }

/**
 * The first `n` runs among the candidates whose candidate row is their run's latest version, once each, in candidate
 * order, with their rows whole. Runs are read by id (every version of each), the next ones as places remain.
 */
async function latestRunsAmong(ch: ClickHouse, projectId: number, candidates: readonly Candidate[], n: number, runSelect: string): Promise<Listed[]> {
  const listed: Listed[] = [];
  /** Per run read: its latest version's row (undefined when the run is gone). */
  const latest = new Map<string, Raw | undefined>();
  const taken = new Set<string>();
  for (let i = 0; i < candidates.length && listed.length < n; i++) {
    const c = candidates[i]!;
    const key = keyOf(c);
    if (!latest.has(key)) await readRuns(ch, projectId, nextRuns(candidates, i, n - listed.length, latest), runSelect, latest);
    const run = latest.get(key);
    if (run === undefined || String(run.version) !== String(c.version) || taken.has(key)) continue;
    taken.add(key);
    listed.push({ candidate: c, run });
  }
  return listed;
}

/** The ids of the next `count` runs not read yet, from candidate `from` on. */
function nextRuns(candidates: readonly Candidate[], from: number, count: number, read: ReadonlyMap<string, unknown>): Candidate[] {
  const next = new Map<string, Candidate>();
  for (let i = from; i < candidates.length && next.size < count; i++) {
    const key = keyOf(candidates[i]!);
    if (!read.has(key)) next.set(key, candidates[i]!);
  }
  return [...next.values()];
}

/** Every version of these runs, whole; keeps each run's latest in `latest` (undefined for a run not found). */
async function readRuns(ch: ClickHouse, projectId: number, runs: readonly Candidate[], runSelect: string, latest: Map<string, Raw | undefined>): Promise<void> {
  const rows = await ch.query<Raw>(
    `SELECT ${runSelect} FROM agent_runs WHERE project_id = {project:UInt64} AND external_id IN {ids:Array(String)}`,
    { project: projectId, ids: [...new Set(runs.map((c) => c.external_id))] },
  );
  for (const c of runs) latest.set(keyOf(c), undefined);
  for (const r of rows) {
    const key = keyOf(r);
    if (!latest.has(key)) continue; // another user's run of the same id
    const seen = latest.get(key);
    if (!seen || BigInt(String(r.version)) > BigInt(String(seen.version))) latest.set(key, r);
  }
}
