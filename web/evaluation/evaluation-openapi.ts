/** The evaluators, evaluation rules and annotation queues APIs' part of the OpenAPI document (docs/EVALUATION.md). */
import { Schema } from "effect";
import { PROVIDER_IDS } from "../../core/agents/contract.js";
import { q, type Param } from "../api/openapi/operation.js";
import type { Operations } from "../api/openapi/document.js";
import { CHECK_KINDS } from "../../evaluation/index.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const Count = Schema.Int.pipe(Schema.nonNegative());
const Json = Schema.Unknown;
const ScoreValue = Schema.Union(Schema.Number, Schema.Boolean, Schema.String);

const Output = Schema.Struct({
  type: Schema.Literal("numeric", "boolean", "categorical"),
  min: Schema.optional(Schema.Number), max: Schema.optional(Schema.Number), categories: Schema.optional(Schema.Array(Schema.String)),
}).annotations({ identifier: "EvaluatorOutput", description: "The score: a number in [min, max] (default 0..1), true/false, or one of 2-20 categories." });

const Check = Schema.Struct({
  kind: Schema.Literal(...CHECK_KINDS),
  expected: Schema.optional(Json), value: Schema.optional(Schema.String), case_sensitive: Schema.optional(Schema.Boolean),
  pattern: Schema.optional(Schema.String.annotations({ description: "RE2 syntax (no backreferences or lookaround)." })),
  schema: Schema.optional(Schema.Record({ key: Schema.String, value: Json })), tolerance: Schema.optional(Schema.Number),
  max_ms: Schema.optional(Schema.Number), max_usd: Schema.optional(Schema.Number),
}).annotations({ identifier: "EvaluatorCheck", description: "A built-in check: what it needs depends on its kind." });

const EvaluatorFields = {
  type: Schema.Literal("llm_judge", "builtin"),
  score_name: Schema.optional(Schema.String.annotations({ description: "Default: the evaluator's name." })),
  provider: Schema.optional(Schema.NullOr(Schema.Literal(...PROVIDER_IDS))), model: Schema.optional(Schema.NullOr(Schema.String)),
  temperature: Schema.optional(Schema.NullOr(Schema.Number)),
  prompt: Schema.optional(Schema.String.annotations({ description: "LLM judges: a template with {{input}}, {{output}}, {{expected_output}}, {{error}}, {{metadata.key}}, {{span:NAME.input}}, {{span:NAME.output}}." })),
  output: Schema.optional(Output), check: Schema.optional(Check), description: Schema.optional(Schema.String),
};
const NewEvaluator = Schema.Struct({ name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)), ...EvaluatorFields }).annotations({ identifier: "NewEvaluator" });
const EvaluatorChange = Schema.Struct({ ...EvaluatorFields, type: Schema.optional(Schema.Literal("llm_judge", "builtin")) }).annotations({ identifier: "EvaluatorChange" });
const Evaluator = Schema.Struct({
  ...EvaluatorFields, id: Schema.UUID, name: Schema.String, description: Schema.String, version: Count, created_at: Iso,
}).annotations({ identifier: "Evaluator" });
const Version = Schema.Struct({ version: Count, definition: Json, created_at: Iso });
const Totals = Schema.Struct({ pending: Count, retrying: Count, done: Count, failed: Count, skipped: Count, cost_usd: Schema.Number });

const Filter = Schema.Struct({
  agent_name: Schema.optional(Schema.String), config_version: Schema.optional(Schema.Int), status: Schema.optional(Schema.Literal("success", "error")),
  session_id: Schema.optional(Schema.String), has_error: Schema.optional(Schema.Boolean), experiment_id: Schema.optional(Schema.UUID),
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })),
  tags: Schema.optional(Schema.Array(Schema.String)), span_kind: Schema.optional(Schema.String), span_name: Schema.optional(Schema.String),
}).annotations({ identifier: "EvaluationFilter" });
const QueueAction = Schema.Struct({
  queue_id: Schema.UUID, score_name: Schema.optional(Schema.String), below: Schema.optional(Schema.Number), equals: Schema.optional(ScoreValue),
}).annotations({ identifier: "QueueAction", description: "With an evaluator: add runs its score puts below `below` or equal to `equals`. Without one: add every matching run as it ends, or, with `score_name`, every matching run given such a score (thumbs down: user_feedback equals false)." });
const NewRule = Schema.Struct({
  evaluator_id: Schema.optional(Schema.NullOr(Schema.UUID)), name: Schema.optional(Schema.String), target: Schema.optional(Schema.Literal("run", "span")), filter: Schema.optional(Filter),
  sampling: Schema.Number.pipe(Schema.between(0, 1)), delay_s: Schema.optional(Schema.Int.pipe(Schema.between(0, 86_400))), queue_action: Schema.optional(Schema.NullOr(QueueAction)),
}).annotations({ identifier: "NewEvaluationRule" });
const Rule = Schema.Struct({
  id: Schema.UUID, name: Schema.String, evaluator_id: Schema.NullOr(Schema.UUID), target: Schema.Literal("run", "span"), filter: Filter, sampling: Schema.Number,
  delay_s: Count, queue_action: Schema.NullOr(QueueAction), enabled: Schema.Boolean, created_at: Iso,
}).annotations({ identifier: "EvaluationRule" });
const Estimate = Schema.Struct({
  from: Iso, to: Iso, matching_runs: Count, sampled_runs: Count, estimated_cost_usd: Schema.NullOr(Schema.Number), basis: Schema.String,
}).annotations({ identifier: "BackfillEstimate" });
const Limits = Schema.Struct({ daily_budget_usd: Schema.NullOr(Schema.Number), calls_per_minute: Count, spent_today_usd: Schema.Number }).annotations({ identifier: "EvaluationSettings" });
const TryResult = Schema.Struct({
  prompt: Schema.NullOr(Schema.String), raw_answer: Schema.NullOr(Schema.String),
  score: Schema.NullOr(Schema.Struct({ name: Schema.String, value: ScoreValue, comment: Schema.String })),
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })),
  provider: Schema.NullOr(Schema.String), model: Schema.NullOr(Schema.String), prompt_tokens: Count, completion_tokens: Count, cost_usd: Schema.Number, duration_ms: Count,
}).annotations({ identifier: "EvaluatorTry" });

const ScoreConfig = Schema.Struct({ name: Schema.String, description: Schema.optional(Schema.String), ...Output.fields }).annotations({ identifier: "ScoreConfig" });
const NewQueue = Schema.Struct({
  name: Schema.String, description: Schema.optional(Schema.String), score_configs: Schema.Array(ScoreConfig),
  members: Schema.optional(Schema.Array(Schema.String).annotations({ description: "E-mail addresses of project members; none: every member reviews." })),
}).annotations({ identifier: "NewAnnotationQueue" });
const Queue = Schema.Struct({ id: Schema.UUID, name: Schema.String, description: Schema.String, score_configs: Schema.Array(ScoreConfig), members: Schema.Array(Schema.Int), created_at: Iso }).annotations({ identifier: "AnnotationQueue" });
const Progress = Schema.Struct({ pending: Count, completed: Count, skipped: Count, reviewers: Schema.Array(Schema.Struct({ user_id: Count, email: Schema.String, completed: Count, skipped: Count })) });
const Item = Schema.Struct({
  id: Schema.UUID, sdk_run_id: Schema.String, run_id: Schema.UUID, span_id: Schema.NullOr(Schema.String), source: Schema.Literal("manual", "rule", "api"),
  status: Schema.Literal("pending", "completed", "skipped"), locked_by: Schema.NullOr(Count), locked_until: Schema.NullOr(Iso),
  done_by: Schema.NullOr(Count), done_at: Schema.NullOr(Iso), comment: Schema.String, created_at: Iso,
}).annotations({ identifier: "AnnotationQueueItem" });
const Complete = Schema.Struct({
  scores: Schema.Array(Schema.Struct({ name: Schema.String, value: ScoreValue, comment: Schema.optional(Schema.String) })), comment: Schema.optional(Schema.String),
  add_to_dataset: Schema.optional(Schema.Struct({ dataset: Schema.String, expected_output: Schema.optional(Json) })),
}).annotations({ identifier: "CompleteReview" });

const Id: Param = { name: "id", in: "path", required: true, schema: Schema.UUID };
const ItemId: Param = { name: "item_id", in: "path", required: true, schema: Schema.UUID };
const W = [400, 401, 403, 404, 413, 415, 422, 429];
const Provider: Param = { name: "provider", in: "path", required: true, schema: Schema.Literal(...PROVIDER_IDS) };
const ProviderKey = Schema.Struct({
  provider: Schema.Literal(...PROVIDER_IDS), key_hint: Schema.String, base_url: Schema.NullOr(Schema.String), default_model: Schema.NullOr(Schema.String), updated_at: Iso,
}).annotations({ identifier: "ProviderKey" });
const tag = "Evaluation";

export const EVALUATION_OPERATIONS: Operations = {
  "/api/evaluator-templates": { get: { tag, summary: "Five ready LLM-judge evaluators to copy", ok: { 200: Schema.Struct({ templates: Schema.Array(Json) }) }, errors: [401, 403, 429] } },
  "/api/evaluators": {
    post: { tag, summary: "Create an evaluator (an LLM judge or a built-in check) at version 1", body: NewEvaluator, ok: { 201: Schema.Struct({ evaluator: Evaluator }) }, errors: [...W, 409] },
    get: { tag, summary: "The project's evaluators at their latest versions", ok: { 200: Schema.Struct({ evaluators: Schema.Array(Evaluator) }) }, errors: [401, 403, 429] },
  },
  "/api/evaluators/{id}": {
    get: {
      tag, summary: "An evaluator (at `version`), its versions, rules and job totals", params: [Id, q("version", Schema.Int.pipe(Schema.positive()))],
      ok: { 200: Schema.Struct({ evaluator: Evaluator, versions: Schema.Array(Version), rules: Schema.Array(Rule), totals: Totals }) }, errors: [401, 403, 404, 422, 429],
    },
    patch: { tag, summary: "Change an evaluator: a new version", params: [Id], body: EvaluatorChange, ok: { 200: Schema.Struct({ evaluator: Evaluator }) }, errors: [...W, 405] },
  },
  "/api/evaluators/{id}/try": {
    post: {
      tag, summary: "Try an evaluator on a run (or span) or a dataset item: the rendered prompt, the raw answer, the score, the cost; stores nothing",
      params: [Id], body: Schema.Struct({ sdk_run_id: Schema.optional(Schema.String), span_id: Schema.optional(Schema.String), dataset: Schema.optional(Schema.String), item_id: Schema.optional(Schema.String), output: Schema.optional(Json), version: Schema.optional(Schema.Int), draft: Schema.optional(EvaluatorChange) }),
      ok: { 200: TryResult }, errors: [...W, 409],
    },
  },
  "/api/provider-keys": {
    get: { tag, summary: "The project's own LLM provider keys for its judges (never the key: its last four characters)", ok: { 200: Schema.Struct({ provider_keys: Schema.Array(ProviderKey) }) }, errors: [401, 403, 429] },
  },
  "/api/provider-keys/{provider}": {
    put: {
      tag, summary: "Set the project's key (and server, default model) for a provider; the key's owner must be an admin of the project. Without api_key the saved key is kept for a change of default_model only (the same base_url)",
      params: [Provider], body: Schema.Struct({ api_key: Schema.optional(Schema.NullOr(Schema.String)), base_url: Schema.optional(Schema.NullOr(Schema.String)), default_model: Schema.optional(Schema.NullOr(Schema.String)) }),
      // 405: an empty provider is the list's path (/api/provider-keys/), which takes GET only.
      ok: { 200: Schema.Struct({ provider_key: ProviderKey }) }, errors: [...W, 405],
    },
    delete: { tag, summary: "Remove the project's key for a provider: its judges use the service's again", params: [Provider], ok: { 204: null }, errors: [401, 403, 404, 405, 422, 429] },
  },
  "/api/evaluation-settings": {
    get: { tag, summary: "The project's evaluation caps and today's spend", ok: { 200: Limits }, errors: [401, 403, 429] },
    put: { tag, summary: "Set the project's evaluation caps (null: the instance default)", body: Schema.Struct({ daily_budget_usd: Schema.optional(Schema.NullOr(Schema.Number)), calls_per_minute: Schema.optional(Schema.NullOr(Schema.Int)) }), ok: { 200: Limits }, errors: W },
  },
  "/api/evaluation-rules": {
    post: { tag, summary: "Create an online rule: it judges (evaluator_id), adds to a queue (queue_action), or both", body: NewRule, ok: { 201: Schema.Struct({ rule: Rule }) }, errors: [...W, 409] },
    get: { tag, summary: "The project's rules (of one evaluator; adding to one queue)", params: [q("evaluator_id", Schema.String), q("queue_id", Schema.String)], ok: { 200: Schema.Struct({ rules: Schema.Array(Rule) }) }, errors: [401, 403, 422, 429] },
  },
  "/api/evaluation-rules/{id}": {
    get: { tag, summary: "A rule", params: [Id], ok: { 200: Schema.Struct({ rule: Rule }) }, errors: [401, 403, 404, 429] },
    // 405: an empty id is the list's path (/api/evaluation-rules/), which takes GET and POST.
    patch: { tag, summary: "Turn a rule on or off", params: [Id], body: Schema.Struct({ enabled: Schema.Boolean }), ok: { 200: Schema.Struct({ rule: Rule }) }, errors: [...W, 405] },
    delete: { tag, summary: "Delete a rule (and its waiting jobs)", params: [Id], ok: { 204: null }, errors: [401, 403, 404, 405, 429] },
  },
  "/api/evaluation-rules/{id}/backfill": {
    post: {
      tag, summary: "Apply a rule to the runs (or spans) of a past time range: the estimate, or with confirm the jobs (or the queue's items)",
      params: [Id], body: Schema.Struct({ from: Iso, to: Iso, confirm: Schema.optional(Schema.Boolean) }),
      ok: { 200: Schema.Struct({ estimate: Estimate }), 202: Schema.Struct({ queued: Count, estimate: Estimate }) }, errors: W,
    },
  },
  "/api/annotation-queues": {
    post: { tag, summary: "Create an annotation queue with its score configs", body: NewQueue, ok: { 201: Schema.Struct({ queue: Queue }) }, errors: [...W, 409] },
    get: { tag, summary: "The project's annotation queues with their progress", ok: { 200: Schema.Struct({ queues: Schema.Array(Json) }) }, errors: [401, 403, 429] },
  },
  "/api/annotation-queues/{id}": {
    get: {
      tag, summary: "A queue, its progress per reviewer, and its latest items", params: [Id, q("status", Schema.Literal("pending", "completed", "skipped"))],
      ok: { 200: Schema.Struct({ queue: Queue, progress: Progress, items: Schema.Array(Item) }) }, errors: [401, 403, 404, 422, 429],
    },
    // 405: an empty id is the list's path (/api/annotation-queues/), which takes GET and POST.
    delete: {
      tag, summary: "Delete a queue and its items; the rules that fill it are deleted, judging rules keep judging without it. The key's owner must be allowed to edit evaluators",
      params: [Id], ok: { 204: null }, errors: [401, 403, 404, 405, 429],
    },
  },
  "/api/annotation-queues/{id}/items": {
    post: { tag, summary: "Add runs (or spans) to a queue", params: [Id], body: Schema.Struct({ items: Schema.Array(Schema.Struct({ sdk_run_id: Schema.String, span_id: Schema.optional(Schema.String) })) }), ok: { 201: Schema.Struct({ added: Count }) }, errors: W },
  },
  "/api/annotation-queues/{id}/next": {
    post: { tag, summary: "The next item, locked to the caller for 30 minutes", params: [Id], ok: { 200: Schema.Struct({ item: Item }), 204: null }, errors: [401, 403, 404, 429] },
  },
  "/api/annotation-queues/{id}/items/{item_id}/complete": {
    post: {
      tag, summary: "Complete a held item with scores (and a corrected expected output into a dataset)", params: [Id, ItemId], body: Complete,
      ok: { 200: Schema.Struct({ item: Item, score_ids: Schema.Array(Schema.UUID), dataset_item: Schema.optional(Schema.Struct({ dataset: Schema.String, version: Count, id: Schema.String })) }) },
      errors: [...W, 409],
    },
  },
  "/api/annotation-queues/{id}/items/{item_id}/skip": {
    post: { tag, summary: "Skip a held item", params: [Id, ItemId], ok: { 200: Schema.Struct({ item: Item }) }, errors: [401, 403, 404, 409, 429] },
  },
};
