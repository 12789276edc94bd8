/**
 * Experiments (Postgres migration 107; docs/EVALUATION.md): an agent version run over a pinned version of a dataset.
 * This module keeps what an experiment is; its results are its runs, read from ClickHouse (experiment-results.ts).
 */
import { Either, Schema } from "effect";
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { displayTextProblem } from "../../core/display-text.js";
import { makeStorable } from "../../core/events/storable.js";
import { MAX_REPETITIONS, toValidationError } from "../../core/events/schema.js";
import { isUuid, uuidv7 } from "../../core/ids.js";
import { MAX_POSTGRES_INTEGER, type Sql } from "../../core/ports/sql.js";
import type { Role } from "../../core/access/roles.js";
import { PROMPT_NAME } from "../prompt-input.js";
import { MAX_DATASET_NAME, type Dataset } from "./datasets.js";

export const MAX_EXPERIMENT_NAME = 200;
export const MAX_EXPERIMENT_DESCRIPTION = 2_000;
const MAX_METADATA_BYTES = 64 * 1024;
/** Most experiments one dataset may hold. */
export const MAX_EXPERIMENTS_PER_DATASET = 10_000;

export const EXPERIMENT_STATUSES = ["running", "completed"] as const;
export type ExperimentStatus = (typeof EXPERIMENT_STATUSES)[number];

export interface Experiment {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly dataset: string;
  readonly dataset_id: number;
  readonly dataset_version: number;
  readonly metadata: Record<string, unknown>;
  readonly agent_name: string | null;
  readonly config_version: number | null;
  /** The prompt version the experiment ran (both or neither; docs/PROMPTS.md). */
  readonly prompt_name: string | null;
  readonly prompt_version: number | null;
  readonly repetitions: number;
  /** Active items of the dataset version; the experiment expects item_count × repetitions results. */
  readonly item_count: number;
  readonly status: ExperimentStatus;
  readonly created_by: string | null;
  readonly created_at: string;
  readonly completed_at: string | null;
}

const displayText = (max: number) =>
  Schema.String.pipe(
    Schema.filter((s) => (s.trim().length >= 1 && s.length <= max) || `must be a string of 1 to ${max} characters`),
    Schema.filter((s) => displayTextProblem(s) === undefined || "must not contain control characters"),
  );

/** The body of POST /api/experiments. */
export const ExperimentInput = Schema.Struct({
  dataset: displayText(MAX_DATASET_NAME),
  name: displayText(MAX_EXPERIMENT_NAME),
  description: Schema.optional(Schema.String.pipe(Schema.filter((s) => s.length <= MAX_EXPERIMENT_DESCRIPTION || `must be at most ${MAX_EXPERIMENT_DESCRIPTION} characters`))),
  dataset_version: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_POSTGRES_INTEGER, { message: () => "must be a version of the dataset (a whole number from 1)" }))),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  agent_name: Schema.optional(displayText(200)),
  config_version: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_POSTGRES_INTEGER, { message: () => "must be a whole number from 1" }))),
  prompt_name: Schema.optional(Schema.String.pipe(Schema.filter((s) => PROMPT_NAME.test(s) || "must be a prompt's name (1 to 100 letters, digits, '.', '_' or '-')"))),
  prompt_version: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_POSTGRES_INTEGER, { message: () => "must be a version of the prompt (a whole number from 1)" }))),
  repetitions: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_REPETITIONS, { message: () => `must be a whole number from 1 to ${MAX_REPETITIONS}` }))),
});
export type ExperimentInput = Schema.Schema.Type<typeof ExperimentInput>;

const decode = Schema.decodeUnknownEither(ExperimentInput, { errors: "first", onExcessProperty: "ignore" });
const IDENTIFIERS: ReadonlySet<string> = new Set(["dataset", "name", "agent_name"]);

/** Validates a POST /api/experiments body; the error names the field. */
export function parseExperimentInput(body: unknown): ExperimentInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"dataset": "support questions", "name": "gpt-4o, prompt v3"}' });
  }
  const storable = makeStorable(body, { identifiers: IDENTIFIERS });
  const v = decode(storable);
  if (Either.isLeft(v)) throw toValidationError(v.left);
  if (v.right.metadata && Buffer.byteLength(JSON.stringify(v.right.metadata)) > MAX_METADATA_BYTES) {
    throw new ValidationError({ field: "metadata", message: `metadata may hold at most ${MAX_METADATA_BYTES} bytes of JSON` });
  }
  if ((v.right.prompt_name === undefined) !== (v.right.prompt_version === undefined)) {
    const field = v.right.prompt_name === undefined ? "prompt_name" : "prompt_version";
    throw new ValidationError({ field, message: `${field}: an experiment names both prompt_name and prompt_version, or neither` });
  }
  return { ...v.right, name: v.right.name.trim() };
}

/** Whether `s` can be an experiment's id (a UUID, any case). */
export const isExperimentId = isUuid;

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

const SELECT = `e.id::text AS id, e.name, e.description, d.name AS dataset, e.dataset_id, e.dataset_version, e.metadata,
  e.agent_name, e.config_version, e.prompt_name, e.prompt_version, e.repetitions, e.item_count, e.status, u.email AS created_by, e.created_at, e.completed_at
  FROM experiments e JOIN datasets d ON d.id = e.dataset_id LEFT JOIN users u ON u.id = e.created_by`;

const toExperiment = (r: Record<string, unknown>): Experiment => ({
  id: String(r.id),
  name: String(r.name),
  description: String(r.description),
  dataset: String(r.dataset),
  dataset_id: Number(r.dataset_id),
  dataset_version: Number(r.dataset_version),
  metadata: (r.metadata ?? {}) as Record<string, unknown>,
  agent_name: r.agent_name === null ? null : String(r.agent_name),
  config_version: r.config_version === null ? null : Number(r.config_version),
  prompt_name: r.prompt_name === null || r.prompt_name === undefined ? null : String(r.prompt_name),
  prompt_version: r.prompt_version === null || r.prompt_version === undefined ? null : Number(r.prompt_version),
  repetitions: Number(r.repetitions),
  item_count: Number(r.item_count),
  status: r.status as ExperimentStatus,
  created_by: r.created_by === null ? null : String(r.created_by),
  created_at: iso(r.created_at)!,
  completed_at: iso(r.completed_at),
});

/**
 * Creates an experiment of `dataset` on its version `input.dataset_version` (default: the current one). 409
 * `name_taken` when the dataset has an experiment of that name, 409 `empty_dataset` when the dataset has no version.
 */
export async function createExperiment(sql: Sql, projectId: number, dataset: Dataset, input: ExperimentInput, createdBy: number | null): Promise<Experiment> {
  const version = input.dataset_version ?? dataset.version;
  if (dataset.version === 0) {
    throw new Conflict({ code: "empty_dataset", field: "dataset", message: `dataset ${JSON.stringify(dataset.name)} has no items yet: add some before running an experiment on it` });
  }
  if (version > dataset.version) {
    throw new ValidationError({ field: "dataset_version", message: `dataset_version: dataset ${JSON.stringify(dataset.name)} has versions 1 to ${dataset.version}` });
  }
  return sql.transaction(async (tx) => {
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM experiments WHERE dataset_id = $1", [dataset.id]);
    if (Number(count?.n ?? 0) >= MAX_EXPERIMENTS_PER_DATASET) {
      throw new Conflict({ code: "limit", field: "name", message: `a dataset may hold at most ${MAX_EXPERIMENTS_PER_DATASET} experiments` });
    }
    if (input.prompt_name !== undefined && input.prompt_version !== undefined) await checkPromptVersion(tx, projectId, input.prompt_name, input.prompt_version);
    const [v] = await tx.query<{ item_count: number }>("SELECT item_count FROM dataset_versions WHERE dataset_id = $1 AND version = $2", [dataset.id, version]);
    const id = uuidv7();
    const rows = await tx.query(
      `INSERT INTO experiments (id, project_id, dataset_id, dataset_version, name, description, metadata, agent_name, config_version,
                                repetitions, item_count, created_by, prompt_name, prompt_version)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT (dataset_id, name) DO NOTHING RETURNING id`,
      [id, projectId, dataset.id, version, input.name, input.description ?? "", JSON.stringify(input.metadata ?? {}), input.agent_name ?? null,
        input.config_version ?? null, input.repetitions ?? 1, Number(v?.item_count ?? 0), createdBy, input.prompt_name ?? null, input.prompt_version ?? null],
    );
    if (!rows[0]) {
      throw new Conflict({ code: "name_taken", field: "name", message: `dataset ${JSON.stringify(dataset.name)} already has an experiment named ${JSON.stringify(input.name)}` });
    }
    return (await findExperiment(tx, projectId, id))!;
  });
}

/** 422 naming the field when the project has no such prompt version: an experiment names one that was run. */
async function checkPromptVersion(sql: Sql, projectId: number, name: string, version: number): Promise<void> {
  const rows = await sql.query<{ latest: number }>("SELECT latest_version AS latest FROM prompts WHERE project_id = $1 AND name = $2", [projectId, name]);
  if (!rows[0]) throw new ValidationError({ field: "prompt_name", message: `prompt_name: no prompt named ${JSON.stringify(name)} in this project` });
  if (version > Number(rows[0].latest)) {
    throw new ValidationError({ field: "prompt_version", message: `prompt_version: prompt ${JSON.stringify(name)} has versions 1 to ${Number(rows[0].latest)}` });
  }
}

/**
 * The experiments that ran versions of a prompt, newest first; with `madeBy`, only those whose creator holds one of
 * these roles in the project now (what the gate on the `production` label compares).
 */
export async function experimentsOfPrompt(sql: Sql, projectId: number, promptName: string, opts: { madeBy?: readonly Role[] } = {}): Promise<Experiment[]> {
  const rows = await sql.query(
    `SELECT ${SELECT} WHERE e.project_id = $1 AND e.prompt_name = $2
       AND ($3::text[] IS NULL OR e.created_by IN (SELECT m.user_id FROM project_members m WHERE m.project_id = $1 AND m.role = ANY($3::text[])))
     ORDER BY e.created_at DESC, e.id DESC`,
    [projectId, promptName, opts.madeBy ? [...opts.madeBy] : null],
  );
  return rows.map(toExperiment);
}

export async function findExperiment(sql: Sql, projectId: number, id: string): Promise<Experiment | undefined> {
  if (!isExperimentId(id)) return undefined;
  const rows = await sql.query(`SELECT ${SELECT} WHERE e.project_id = $1 AND e.id = $2::uuid`, [projectId, id.toLowerCase()]);
  return rows[0] ? toExperiment(rows[0]) : undefined;
}

/** The project's experiment `id`; NotFound (404) for another project's, a malformed id or none. */
export async function experimentWithId(sql: Sql, projectId: number, id: string): Promise<Experiment> {
  const found = await findExperiment(sql, projectId, id);
  if (!found) throw new NotFound({ resource: "experiment", message: `no experiment ${JSON.stringify(id)} in this project` });
  return found;
}

/** The project's experiment of `dataset` named `name`, if any (what an SDK resumes by name). */
export async function experimentNamed(sql: Sql, projectId: number, dataset: Dataset, name: string): Promise<Experiment | undefined> {
  const rows = await sql.query(`SELECT ${SELECT} WHERE e.project_id = $1 AND e.dataset_id = $2 AND e.name = $3`, [projectId, dataset.id, name]);
  return rows[0] ? toExperiment(rows[0]) : undefined;
}

/** A dataset's experiments, newest first. */
export async function listExperiments(sql: Sql, projectId: number, datasetId: number): Promise<Experiment[]> {
  const rows = await sql.query(`SELECT ${SELECT} WHERE e.project_id = $1 AND e.dataset_id = $2 ORDER BY e.created_at DESC, e.id DESC`, [projectId, datasetId]);
  return rows.map(toExperiment);
}

/**
 * The experiments that ran the config versions of an agent, newest first; with `madeBy`, only those whose creator
 * holds one of these roles in the project now (the activation gate's: made by someone allowed to run them).
 */
export async function experimentsOfAgent(sql: Sql, projectId: number, agentName: string, opts: { madeBy?: readonly Role[] } = {}): Promise<Experiment[]> {
  const rows = await sql.query(
    `SELECT ${SELECT} WHERE e.project_id = $1 AND e.agent_name = $2 AND e.config_version IS NOT NULL
       AND ($3::text[] IS NULL OR e.created_by IN (SELECT m.user_id FROM project_members m WHERE m.project_id = $1 AND m.role = ANY($3::text[])))
     ORDER BY e.created_at DESC, e.id DESC`,
    [projectId, agentName, opts.madeBy ? [...opts.madeBy] : null],
  );
  return rows.map(toExperiment);
}

/** Marks an experiment completed (its runner finished); idempotent. */
export async function completeExperiment(sql: Sql, projectId: number, id: string): Promise<Experiment> {
  const found = await experimentWithId(sql, projectId, id);
  await sql.query("UPDATE experiments SET status = 'completed', completed_at = coalesce(completed_at, now()) WHERE id = $1::uuid", [found.id]);
  return (await findExperiment(sql, projectId, found.id))!;
}
