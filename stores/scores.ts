/**
 * Scores (docs/API.md, Scores): what a score is (an effect Schema naming the field it refuses) and where it is kept
 * (ClickHouse `scores`, the same SQL on both transports). A score belongs to a run the key's owner has, and
 * optionally to one of its spans; its value is a number, a boolean or a short string.
 */
import { Either, Schema } from "effect";
import { toChTime } from "./runs/event-store.js";
import { decodeTimeIdCursor, timeIdCursor } from "./time-id-cursor.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { ValidationError } from "../core/errors.js";
import { makeStorable } from "../core/events/storable.js";
import { MAX_SDK_RUN_ID_CHARS, MAX_SPAN_ID_CHARS, toValidationError } from "../core/events/schema.js";
import { uuidv7 } from "../core/ids.js";

export const SCORE_SOURCES = ["api", "human", "llm_judge", "check", "otel"] as const;
export type ScoreSource = (typeof SCORE_SOURCES)[number];

/**
 * Who gave a score, as the server saw it (the `given_by` column; `source` is the sender's own word and proves
 * nothing): `evaluator` — one of the project's evaluators (a judge or a check) run by the server; `reviewer` — a
 * member on the dashboard (a run's thumbs) or in an annotation queue; `member_key` — the scores API with a key of
 * scope read+ingest whose creator was a member, admin or owner of the project when it sent them; `key` — the scores
 * API with any other key (scope ingest, or a viewer's); `event` — inside an ingest event or an OpenTelemetry span,
 * which any key of the project may send. The activation gate counts the first three only (GATE_GIVERS).
 */
export const SCORE_GIVERS = ["evaluator", "reviewer", "member_key", "key", "event"] as const;
export type ScoreGiver = (typeof SCORE_GIVERS)[number];
/** The givers whose scores the activation gate counts (docs/EVALUATION.md, The activation gate). */
export const GATE_GIVERS: readonly ScoreGiver[] = ["evaluator", "reviewer", "member_key"];
export const MAX_SCORE_NAME = 100;
/** Scores taken from one event's `payload.scores`; more are left out (and logged). */
export const MAX_SCORES_PER_EVENT = 100;
export const MAX_SCORE_STRING = 200;
export const MAX_SCORE_COMMENT = 2000;

const text = (max: number, what: string) =>
  Schema.String.pipe(Schema.filter((s) => (s.length >= 1 && s.length <= max) || `must be ${what} of 1 to ${max} characters`));

/** The body of POST /api/scores. */
export const ScoreInput = Schema.Struct({
  // As long as an event's ids may be: every run and span can be scored.
  sdk_run_id: text(MAX_SDK_RUN_ID_CHARS, "a string"),
  span_id: Schema.optional(text(MAX_SPAN_ID_CHARS, "a string")),
  name: text(MAX_SCORE_NAME, "a string"),
  value: Schema.Union(
    Schema.Number.pipe(Schema.filter((n) => Number.isFinite(n) || "must be a finite number")),
    Schema.Boolean,
    Schema.String.pipe(Schema.filter((s) => s.length <= MAX_SCORE_STRING || `must be at most ${MAX_SCORE_STRING} characters`)),
  ).annotations({ message: () => ({ message: `must be a number, a boolean or a string of at most ${MAX_SCORE_STRING} characters`, override: true }) }),
  comment: Schema.optional(Schema.String.pipe(Schema.filter((s) => s.length <= MAX_SCORE_COMMENT || `must be at most ${MAX_SCORE_COMMENT} characters`))),
  source: Schema.optional(Schema.Literal(...SCORE_SOURCES).annotations({ message: () => ({ message: `must be one of ${SCORE_SOURCES.join(", ")}`, override: true }) })),
});
export type ScoreInput = Schema.Schema.Type<typeof ScoreInput>;

/** A stored score, as GET /api/runs/{sdk_run_id}/scores answers it. */
export interface Score {
  readonly score_id: string;
  readonly name: string;
  readonly value: number | boolean | string;
  readonly comment: string;
  readonly source: ScoreSource;
  readonly span_id: string | null;
  readonly created_at: string;
  /** The evaluator (and its version) that gave the score; null for scores from elsewhere. */
  readonly evaluator: { readonly id: string; readonly version: number } | null;
  /** The sdk_run_id of the judge call's own run (its tokens and cost), for LLM-judge scores; null otherwise. */
  readonly judge_run: string | null;
  /** Who gave it, as the server saw it (SCORE_GIVERS); null for a score stored before the server kept it. */
  readonly given_by: ScoreGiver | null;
}

const decode = Schema.decodeUnknownEither(ScoreInput, { errors: "first", onExcessProperty: "ignore" });
/** The identifiers a bad character is refused in (elsewhere it is repaired, as in events). */
const IDENTIFIERS: ReadonlySet<string> = new Set(["sdk_run_id", "span_id", "name", "source"]);

/** Validates a POST /api/scores body; the error names the field. */
export function parseScore(body: unknown): Either.Either<ScoreInput, ValidationError> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return Either.left(new ValidationError({ message: 'the body must be a JSON object like {"sdk_run_id": "…", "name": "helpful", "value": true}' }));
  }
  try {
    body = makeStorable(body, { identifiers: IDENTIFIERS });
  } catch (err) {
    if (err instanceof ValidationError) return Either.left(err);
    throw err;
  }
  return Either.mapLeft(decode(body), (err) => toValidationError(err));
}

interface ScoreRow {
  score_id: string;
  span_id: string;
  name: string;
  value_type: string;
  value_number: number | string;
  value_string: string;
  comment: string;
  source: string;
  created_at: string;
  evaluator_id: string;
  evaluator_version: number | string;
  judge_run: string;
  given_by: string;
}

/** The run a score belongs to (its project's), and the user whose key sent the score. */
export interface ScoredRun {
  readonly project_id: number;
  readonly user_id: number;
  readonly run_id: string;
  readonly external_id: string;
}

/** Who gave a score, when an evaluator did (docs/EVALUATION.md). */
export interface ScoreOrigin {
  readonly evaluator_id: string;
  readonly evaluator_version: number;
  /** The judge call's own run, "" for a built-in check. */
  readonly judge_run: string;
}

/** The `scores` row of a validated score, given by `from`: an evaluator (its origin) or who else sent it. */
export function scoreRow(run: ScoredRun, s: ScoreInput, scoreId: string, createdAtIso: string, from: ScoreOrigin | Exclude<ScoreGiver, "evaluator"> = "event"): Record<string, unknown> {
  const origin = typeof from === "object" ? from : undefined;
  const kind = typeof s.value;
  return {
    score_id: scoreId,
    project_id: run.project_id,
    user_id: run.user_id,
    run_id: run.run_id,
    sdk_run_id: run.external_id,
    span_id: s.span_id ?? "",
    name: s.name,
    value_type: kind,
    value_number: kind === "number" ? s.value : kind === "boolean" ? Number(s.value) : 0,
    value_string: kind === "string" ? s.value : "",
    comment: s.comment ?? "",
    source: s.source ?? "api",
    given_by: origin ? "evaluator" : from,
    ...(origin ? { evaluator_id: origin.evaluator_id, evaluator_version: origin.evaluator_version, judge_run: origin.judge_run } : {}),
    created_at: toChTime(createdAtIso),
  };
}

/** Stores score rows made by scoreRow. */
export const insertScoreRows = (ch: ClickHouse, rows: Record<string, unknown>[]): Promise<void> => ch.insert("scores", rows);

/** Stores a score of the run `run`, given by `givenBy`; returns its id. */
export async function insertScore(ch: ClickHouse, run: ScoredRun, s: ScoreInput, givenBy: Exclude<ScoreGiver, "evaluator">): Promise<string> {
  const scoreId = uuidv7();
  await insertScoreRows(ch, [scoreRow(run, s, scoreId, new Date().toISOString(), givenBy)]);
  return scoreId;
}


/** A page of a run's scores and the cursor after it (null on the last page). */
export interface ScorePage { readonly scores: Score[]; readonly next_cursor: string | null }

export const scoreCursor = (s: Score): string => timeIdCursor(s.created_at, s.score_id);

/**
 * The scores of a run (each once, however often its row was written), a page at a time: oldest first, or newest
 * first with `newestFirst`; `cursor` is the previous page's next_cursor. A run may hold any number of scores.
 */
export async function listRunScores(
  ch: ClickHouse, projectId: number, runId: string, opts: { limit: number; cursor?: string; newestFirst?: boolean; spanId?: string },
): Promise<ScorePage> {
  const [at, id] = opts.cursor ? decodeTimeIdCursor(opts.cursor) : [undefined, undefined];
  const order = opts.newestFirst ? "DESC" : "ASC";
  const rows = await ch.query<ScoreRow>(
    // score_id is its text here (the alias applies in WHERE and ORDER BY too): the cursor compares that text.
    `SELECT toString(score_id) AS score_id, span_id, name, value_type, value_number, value_string, comment, source, created_at,
            evaluator_id, evaluator_version, judge_run, given_by
     FROM scores FINAL
     WHERE project_id = {project:UInt64} AND run_id = {run:UUID} ${opts.spanId !== undefined ? "AND span_id = {span:String}" : ""}
       ${at ? `AND (created_at, score_id) ${opts.newestFirst ? "<" : ">"} ({at:DateTime64(3, 'UTC')}, {id:String})` : ""}
     ORDER BY created_at ${order}, score_id ${order}
     LIMIT {limit:UInt32}`,
    { project: projectId, run: runId, limit: opts.limit + 1, ...(at ? { at, id } : {}), ...(opts.spanId !== undefined ? { span: opts.spanId } : {}) },
  );
  const scores = rows.slice(0, opts.limit).map((r): Score => ({
    score_id: r.score_id,
    name: r.name,
    value: scoreValue(r.value_type, r.value_number, r.value_string),
    comment: r.comment,
    source: r.source as ScoreSource,
    span_id: r.span_id || null,
    created_at: r.created_at,
    evaluator: r.evaluator_id ? { id: r.evaluator_id, version: Number(r.evaluator_version) } : null,
    judge_run: r.judge_run || null,
    given_by: (SCORE_GIVERS as readonly string[]).includes(r.given_by) ? (r.given_by as ScoreGiver) : null,
  }));
  return { scores, next_cursor: rows.length > opts.limit ? scoreCursor(scores[scores.length - 1]!) : null };
}

const scoreValue = (type: string, n: number | string, str: string): number | boolean | string =>
  type === "string" ? str : type === "boolean" ? Number(n) === 1 : Number(n);

/**
 * The latest value of each score name given to each span of a run (a trace's rows show them), at most `limit` pairs:
 * span id → its scores by name.
 */
export async function spanScoreValues(ch: ClickHouse, projectId: number, runId: string, limit = 20_000): Promise<Map<string, { name: string; value: number | boolean | string }[]>> {
  const rows = await ch.query<{ s: string; name: string; t: string; n: number | string; v: string }>(
    `SELECT span_id AS s, name, argMax(value_type, created_at) AS t, argMax(value_number, created_at) AS n, argMax(value_string, created_at) AS v
     FROM scores FINAL
     WHERE project_id = {project:UInt64} AND run_id = {run:UUID} AND span_id != ''
     GROUP BY span_id, name ORDER BY span_id, name LIMIT {limit:UInt32}`,
    { project: projectId, run: runId, limit },
  );
  const out = new Map<string, { name: string; value: number | boolean | string }[]>();
  for (const r of rows) {
    const list = out.get(r.s) ?? [];
    list.push({ name: r.name, value: scoreValue(r.t, r.n, r.v) });
    out.set(r.s, list);
  }
  return out;
}

/** How many of a run's boolean scores named `name` are true and false. */
export async function tallyBooleanScore(ch: ClickHouse, projectId: number, runId: string, name: string): Promise<{ up: number; down: number }> {
  const rows = await ch.query<{ up: unknown; down: unknown }>(
    `SELECT countIf(value_number = 1) AS up, countIf(value_number = 0) AS down
     FROM scores FINAL
     WHERE project_id = {project:UInt64} AND run_id = {run:UUID} AND name = {name:String} AND value_type = 'boolean'`,
    { project: projectId, run: runId, name },
  );
  return { up: Number(rows[0]?.up ?? 0), down: Number(rows[0]?.down ?? 0) };
}

/** The average of one numeric or boolean (true = 1) score over an agent's runs, or over those on one config version. */
export interface ScoreAverage {
  readonly agent_name: string;
  /** null: runs sent without a config_version, or (byVersion false) every version together. */
  readonly config_version: number | null;
  readonly name: string;
  readonly average: number;
  readonly count: number;
}

/**
 * Average scores per agent (and per config version with `byVersion`), string scores left out; each run's agent and
 * version from its latest row. Bounded: at most `limit` rows, the most-given scores first.
 */
export async function averageScores(
  ch: ClickHouse,
  projectId: number,
  options: { agentName?: string; byVersion?: boolean; limit?: number } = {},
): Promise<ScoreAverage[]> {
  const version = options.byVersion ? "r.config_version" : "CAST(NULL AS Nullable(UInt32))";
  const rows = await ch.query<{ agent_name: string; config_version: number | string | null; name: string; average: number | string; n: number | string }>(
    `SELECT r.agent_name AS agent_name, ${version} AS config_version, s.name AS name, avg(s.value_number) AS average, count() AS n
       FROM (SELECT run_id, name, value_number FROM scores FINAL
              WHERE project_id = {pid:UInt64} AND value_type IN ('number', 'boolean')) AS s
       JOIN (SELECT run_id, argMax(agent_name, version) AS agent_name, argMax(config_version, version) AS config_version
               FROM agent_runs WHERE project_id = {pid:UInt64} GROUP BY run_id) AS r ON r.run_id = s.run_id
      WHERE {agent:String} = '' OR r.agent_name = {agent:String}
      GROUP BY agent_name, config_version, name
      ORDER BY n DESC, agent_name, name
      LIMIT {limit:UInt32}`,
    { pid: projectId, agent: options.agentName ?? "", limit: options.limit ?? 1000 },
  );
  return rows.map((r) => ({
    agent_name: r.agent_name,
    config_version: r.config_version === null ? null : Number(r.config_version),
    name: r.name,
    average: Number(r.average),
    count: Number(r.n),
  }));
}

/** The names of a user's scores, alphabetically (the dashboard's filter suggests them); at most `limit`. */
export async function scoreNames(ch: ClickHouse, projectId: number, limit = 100): Promise<string[]> {
  const rows = await ch.query<{ name: string }>(
    `SELECT DISTINCT name FROM scores WHERE project_id = {pid:UInt64} ORDER BY name LIMIT {limit:UInt32}`,
    { pid: projectId, limit },
  );
  return rows.map((r) => r.name);
}

/** The scores `ids` of the project (an evaluator's latest jobs' scores), by id; the ones not stored are left out. */
export async function scoresWithIds(ch: ClickHouse, projectId: number, ids: readonly string[]): Promise<Map<string, { value: number | boolean | string; comment: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await ch.query<Pick<ScoreRow, "score_id" | "value_type" | "value_number" | "value_string" | "comment">>(
    `SELECT toString(score_id) AS score_id, value_type, value_number, value_string, comment FROM scores FINAL
      WHERE project_id = {pid:UInt64} AND toString(score_id) IN {ids:Array(String)}`,
    { pid: projectId, ids: [...ids] },
  );
  return new Map(rows.map((r) => [r.score_id, {
    value: scoreValue(r.value_type, r.value_number, r.value_string),
    comment: r.comment,
  }]));
}

/** A run's latest value of one score, as the runs table's chip shows it. */
export interface ScoreChip { readonly name: string; readonly value: number | boolean | string }

/**
 * The score chips of the runs `runIds` (a page of the runs list): each run's latest value of each score name given
 * to it or its spans, by name, at most `perRun` names a run; with `name`, of that score only.
 */
export async function scoreChips(ch: ClickHouse, projectId: number, runIds: readonly string[], perRun = 6, name?: string): Promise<Map<string, ScoreChip[]>> {
  if (runIds.length === 0) return new Map();
  // The run's id as text under a name of its own: an alias `run_id` would stand for the column in WHERE, and a String
  // is never IN an Array(UUID).
  const rows = await ch.query<{ run: string; name: string; t: string; n: number | string; s: string }>(
    `SELECT toString(run_id) AS run, name, argMax(value_type, created_at) AS t, argMax(value_number, created_at) AS n, argMax(value_string, created_at) AS s
       FROM scores FINAL WHERE project_id = {pid:UInt64} AND run_id IN {ids:Array(UUID)}${name === undefined ? "" : " AND name = {name:String}"}
      GROUP BY run, name ORDER BY run, name LIMIT {perRun:UInt32} BY run`,
    { pid: projectId, ids: [...runIds], perRun, ...(name === undefined ? {} : { name }) },
  );
  const out = new Map<string, ScoreChip[]>();
  for (const r of rows) {
    const value = r.t === "string" ? r.s : r.t === "boolean" ? Number(r.n) === 1 : Number(r.n);
    const list = out.get(r.run) ?? [];
    list.push({ name: r.name, value });
    out.set(r.run, list);
  }
  return out;
}
