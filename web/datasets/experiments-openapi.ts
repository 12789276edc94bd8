/**
 * The experiments API's part of the OpenAPI document (web/datasets/experiments-api.ts; docs/EVALUATION.md), and the
 * activation of a config version through the gate that compares experiments (web/agents/agent-activation-api.ts).
 */
import { Schema } from "effect";
import { RUN_STATUSES } from "../../core/events/schema.js";
import { EXPERIMENT_STATUSES, ExperimentInput, MAX_EXPERIMENT_NAME } from "../../stores/datasets/experiments.js";
import { MAX_DATASET_NAME } from "../../stores/datasets/datasets.js";
import { MAX_FORCE_REASON } from "../../stores/activation-gate.js";
import { q, type Param } from "../api/openapi/operation.js";
import type { Operations } from "../api/openapi/document.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Count = Schema.Int.pipe(Schema.nonNegative());
const Ms = Schema.NullOr(Schema.Number);
const ScoreValue = Schema.Union(Schema.Number, Schema.Boolean, Schema.String);

export const Experiment = Schema.Struct({
  id: Schema.UUID, name: Schema.String, description: Schema.String, dataset: Schema.String, dataset_version: Count,
  metadata: Schema.Record({ key: Schema.String, value: Schema.Unknown }), agent_name: Schema.NullOr(Schema.String),
  config_version: Schema.NullOr(Count),
  prompt_name: Schema.NullOr(Schema.String).annotations({ description: "The prompt whose version the experiment ran (docs/PROMPTS.md)." }),
  prompt_version: Schema.NullOr(Count), repetitions: Count, item_count: Count.annotations({ description: "Active items of the dataset version." }),
  expected_count: Count.annotations({ description: "item_count × repetitions: the results the experiment expects." }),
  status: Schema.Literal(...EXPERIMENT_STATUSES).annotations({ description: "completed once its runner said so; results may still arrive." }),
  created_by: Schema.NullOr(Schema.String), created_at: Iso, completed_at: Schema.NullOr(Iso),
  completed_count: Count.annotations({ description: "Results whose run ended (success or error)." }), error_count: Count,
  scores: Schema.Record({ key: Schema.String, value: Schema.Struct({ mean: Schema.NullOr(Schema.Number), count: Count }) })
    .annotations({ description: "Per score name: the mean of its numeric and boolean values (true = 1), and how many results have it." }),
  cost_usd: Schema.Number, latency_ms: Schema.Struct({ p50: Ms, p95: Ms }),
}).annotations({ identifier: "Experiment" });

const ExperimentItem = Schema.Struct({
  item_id: Schema.String, repetition: Count, sdk_run_id: Schema.String, run_id: Schema.String, status: Schema.Literal(...RUN_STATUSES),
  output: Schema.Unknown, output_truncated: Schema.Boolean, error: Schema.NullOr(Schema.String),
  scores: Schema.Record({ key: Schema.String, value: ScoreValue }), cost_usd: Schema.Number, latency_ms: Ms, started_at: Schema.NullOr(Iso),
}).annotations({ identifier: "ExperimentItemResult", description: "The newest run of the item and repetition that names the experiment." });

const ExperimentId: Param = { name: "id", in: "path", required: true, schema: Schema.UUID };

export const GateViolation = Schema.Struct({
  score: Schema.String, active_mean: Schema.Number,
  candidate_mean: Schema.NullOr(Schema.Number).annotations({ description: "null: the version's experiment has no counted score of this name (a refusal too)." }),
  max_drop: Schema.Number,
}).annotations({ identifier: "GateViolation" });

const GateCheck = Schema.Struct({
  basis: Schema.String.annotations({ description: "What was compared, in words: the two experiments (ids, names, who made them), or why there was nothing to compare." }),
  active_version: Schema.NullOr(Count),
  active_experiment: Schema.NullOr(Experiment).annotations({ description: "The active version's latest experiment on the same dataset, made by a member or above; its scores are those the gate counts." }),
  candidate_experiment: Schema.NullOr(Experiment).annotations({ description: "The version's latest experiment made by a member or above; its scores are those the gate counts." }),
  rules: Schema.Array(Schema.Struct({ score_name: Schema.String, max_drop: Schema.Number })),
  violations: Schema.Array(GateViolation),
}).annotations({ identifier: "GateCheck", description: "The gate counts scores of evaluators, reviewers and members' read+ingest keys only (docs/EVALUATION.md)." });

const GateRefusal = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String),
    violations: Schema.optional(Schema.Array(GateViolation)),
  }),
  gate: Schema.optional(GateCheck),
}).annotations({ identifier: "GateRefusal", description: "Every error; a 409 gate_refused adds the violations and the gate's check." });

export const EXPERIMENT_OPERATIONS: Operations = {
  "/api/experiments": {
    post: {
      tag: "Experiments", summary: "Create an experiment on a dataset version",
      description: "Its runs name it in their run_start payload: `experiment_id`, `dataset_item_id` and `repetition`.",
      body: ExperimentInput.annotations({ identifier: "NewExperiment" }), ok: { 201: Schema.Struct({ experiment: Experiment }) },
      errors: [400, 401, 403, 404, 409, 413, 415, 422, 429],
    },
    get: {
      tag: "Experiments", summary: "A dataset's experiments, newest first, with their aggregates",
      params: [{ ...q("dataset", Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_DATASET_NAME))), required: true }, q("name", Schema.String.pipe(Schema.maxLength(MAX_EXPERIMENT_NAME)), "Only the experiment of this name.")],
      ok: { 200: Schema.Struct({ experiments: Schema.Array(Experiment) }) }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/experiments/{id}": {
    get: {
      tag: "Experiments", summary: "An experiment, its aggregates and its results per item and repetition", params: [ExperimentId],
      // 422: an empty id is the list's path (/api/experiments/), which needs its dataset.
      ok: { 200: Schema.Struct({ experiment: Experiment, items: Schema.Array(ExperimentItem) }) }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/agents/{name}/configs/{version}/activate": {
    post: {
      tag: "Agents", summary: "Activate a config version through the activation gate",
      description: "Compares the version's latest experiment with the active version's on the same dataset under the agent's gate rules; "
        + "409 gate_refused when a score dropped more than a rule allows (or has no counted value). `force` with a `reason` activates anyway, "
        + "for a key of an admin or the owner. Every activation is in the project's audit log.",
      params: [
        { name: "name", in: "path", required: true, schema: Schema.String },
        { name: "version", in: "path", required: true, schema: Schema.Int.pipe(Schema.between(1, 2 ** 31 - 1)) },
      ],
      body: Schema.Struct({
        force: Schema.optional(Schema.Boolean),
        reason: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_FORCE_REASON))).annotations({ description: "Required with force: kept in the audit log." }),
      }).annotations({ identifier: "ActivationRequest" }),
      ok: { 200: Schema.Struct({ agent: Schema.String, version: Count, forced: Schema.Boolean, gate: GateCheck }).annotations({ identifier: "Activation" }) },
      errors: [400, 401, 403, 404, 409, 413, 415, 422, 429], errorBody: GateRefusal,
    },
  },
  "/api/experiments/{id}/complete": {
    post: { tag: "Experiments", summary: "Mark an experiment completed (its runner finished)", params: [ExperimentId], ok: { 200: Schema.Struct({ experiment: Experiment }) }, errors: [401, 403, 404, 429] },
  },
};
