/** The OpenAPI paths of a prompt's experiments run by the server (prompt-experiments-api.ts; docs/PROMPTS.md). */
import { Schema } from "effect";
import { MAX_EXPERIMENT_NAME } from "../../stores/datasets/experiments.js";
import { LABEL_NAME, MAX_PROMPT_NAME } from "../../stores/prompt-input.js";
import { PROMPT_EXPERIMENT_STATUSES } from "../../stores/prompt-experiment-jobs.js";
import { MAX_VERSIONS } from "../../stores/prompts.js";
import { Experiment } from "../datasets/experiments-openapi.js";
import type { Param } from "../api/openapi/operation.js";
import type { Operations } from "../api/openapi/document.js";
import { MAX_EVALUATORS } from "./experiment-start.js";

const Name: Param = { name: "name", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_PROMPT_NAME)) };
const Id: Param = { name: "id", in: "path", required: true, schema: Schema.String.annotations({ format: "uuid" }) };
const VersionNumber = Schema.Int.pipe(Schema.between(1, MAX_VERSIONS));

const Job = Schema.Struct({
  experiment_id: Schema.String, experiment_name: Schema.String, dataset: Schema.String, prompt_name: Schema.String, prompt_version: VersionNumber,
  status: Schema.Literal(...PROMPT_EXPERIMENT_STATUSES).annotations({ description: "stopped: the project's daily evaluation budget was spent (message says so); failed: it could not go on (message says why)." }),
  total: Schema.Int.annotations({ description: "Item × repetition runs to make." }), done: Schema.Int, failed: Schema.Int.annotations({ description: "Runs that ended in an error (a missing variable, a provider failure)." }),
  message: Schema.String, created_at: Schema.String, updated_at: Schema.String,
  url: Schema.String.annotations({ description: "The experiment's page on the dashboard (relative to the project)." }),
}).annotations({ identifier: "PromptExperimentJob" });

export const PROMPT_EXPERIMENT_OPERATIONS: Operations = {
  "/api/prompts/{name}/experiments": {
    post: {
      tag: "Prompts", summary: "Run a dataset through a prompt version as an experiment, on the server",
      description: "Makes the experiment (naming the version, made by the key's member, so the gate on production counts it), attaches the evaluators "
        + "as rules that judge each run as it ends, and queues it: each item's input fills the version's variables and is completed with the project's "
        + "provider key (or the instance's, when the operator allows the project) within its judge caps. A missing variable or a provider failure is that "
        + "item's error result. Poll GET …/experiments/{id} for its progress.",
      params: [Name],
      body: Schema.Struct({
        dataset: Schema.String, version: Schema.optional(VersionNumber), label: Schema.optional(Schema.String.pipe(Schema.pattern(LABEL_NAME))),
        name: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_EXPERIMENT_NAME))).annotations({ description: "Default: the prompt, version and time." }),
        description: Schema.optional(Schema.String), repetitions: Schema.optional(Schema.Int),
        evaluators: Schema.optional(Schema.Array(Schema.String).pipe(Schema.maxItems(MAX_EVALUATORS))).annotations({ description: "The project's evaluators (names or ids) that score the runs." }),
      }).annotations({ identifier: "PromptExperimentInput" }),
      ok: { 202: Schema.Struct({ experiment: Experiment, job: Job }) }, errors: [400, 401, 403, 404, 409, 413, 415, 422, 429],
    },
  },
  "/api/prompts/{name}/experiments/{id}": {
    // 405: an empty id (`…/experiments/`) is the path that starts one, which takes POST only.
    get: { tag: "Prompts", summary: "The progress of an experiment the server runs", params: [Name, Id], ok: { 200: Schema.Struct({ job: Job }) }, errors: [401, 403, 404, 405, 429] },
  },
};
