/** The prompts API's part of the OpenAPI document (web/prompts/prompts-api.ts; docs/PROMPTS.md). */
import { Schema } from "effect";
import { LABEL_NAME, MAX_PROMPT_NAME, MESSAGE_ROLES, PromptConfig, PromptVersionInput } from "../../stores/prompt-input.js";
import { MAX_FORCE_REASON } from "../../stores/experiment-gate.js";
import { MAX_VERSIONS } from "../../stores/prompts.js";
import { Experiment, GateViolation } from "../datasets/experiments-openapi.js";
import { Limit, q, type Param } from "../api/openapi/operation.js";
import type { Operations } from "../api/openapi/document.js";

const Iso = Schema.String.annotations({ format: "date-time" });
const VersionNumber = Schema.Int.pipe(Schema.between(1, MAX_VERSIONS));

const PromptSummary = Schema.Struct({
  name: Schema.String, latest_version: VersionNumber,
  labels: Schema.Record({ key: Schema.String, value: VersionNumber }).annotations({ description: "label → version" }),
  created_at: Iso, updated_at: Iso,
}).annotations({ identifier: "PromptSummary" });

const PromptVersion = Schema.Struct({
  name: Schema.String, version: VersionNumber, type: Schema.Literal("text", "chat"),
  prompt: Schema.Union(Schema.String, Schema.Array(Schema.Struct({ role: Schema.Literal(...MESSAGE_ROLES), content: Schema.String }))),
  config: PromptConfig, message: Schema.String,
  labels: Schema.Array(Schema.String).annotations({ description: "The labels pointing at it now; `latest` when it is the newest." }),
  variables: Schema.Array(Schema.String).annotations({ description: "The `{{variables}}` it names, in order of first appearance." }),
  created_by: Schema.NullOr(Schema.Number), author: Schema.NullOr(Schema.String), created_at: Iso,
}).annotations({ identifier: "PromptVersion" });

const DiffPart = Schema.Struct({ op: Schema.Literal("same", "add", "remove"), text: Schema.String }).annotations({ identifier: "PromptDiffPart" });
const SideDiff = Schema.Struct({
  parts: Schema.NullOr(Schema.Array(DiffPart)), changed: Schema.Boolean,
  too_large: Schema.Boolean.annotations({ description: "The sides differ too much to diff line by line: parts is null." }),
}).annotations({ identifier: "PromptSideDiff" });

const Name: Param = { name: "name", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_PROMPT_NAME)) };
const Label: Param = { name: "label", in: "path", required: true, schema: Schema.String.pipe(Schema.pattern(LABEL_NAME)) };
const One = Schema.Struct({ prompt: PromptVersion }).annotations({ identifier: "PromptAnswer" });
const GateRule = Schema.Struct({ score_name: Schema.String, max_drop: Schema.Number });
const PromptGateCheck = Schema.Struct({
  basis: Schema.String.annotations({ description: "What was compared, in words: the two experiments (ids, names, who made them), or why there was nothing to compare." }),
  production_version: Schema.NullOr(VersionNumber),
  active_experiment: Schema.NullOr(Experiment).annotations({ description: "The production version's latest experiment on the same dataset, made by a member or above; its scores are those the gate counts." }),
  candidate_experiment: Schema.NullOr(Experiment).annotations({ description: "The version's latest experiment made by a member or above; its scores are those the gate counts." }),
  rules: Schema.Array(GateRule),
  violations: Schema.Array(GateViolation),
}).annotations({ identifier: "PromptGateCheck", description: "The gate on production counts scores of evaluators, reviewers and members' read+ingest keys only (docs/PROMPTS.md)." });
const PromptGateRefusal = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String), violations: Schema.optional(Schema.Array(GateViolation)) }),
  gate: Schema.optional(PromptGateCheck),
}).annotations({ identifier: "PromptGateRefusal", description: "Every error; a 409 gate_refused adds the violations and the gate's check." });
const LabelMove = Schema.Struct({
  label: Schema.String, version: VersionNumber, previous: Schema.NullOr(VersionNumber), forced: Schema.Boolean,
  gate: Schema.NullOr(PromptGateCheck).annotations({ description: "What the gate compared: for production only." }),
}).annotations({ identifier: "PromptLabelMove" });
const PlaygroundRun = Schema.Struct({
  version: Schema.NullOr(VersionNumber).annotations({ description: "null for a draft" }),
  from: Schema.NullOr(VersionNumber).annotations({ description: "The version a draft was edited from, when known." }),
  messages: Schema.Array(Schema.Struct({ role: Schema.Literal("system", "developer", "user", "assistant"), content: Schema.String })).annotations({ description: "As sent: the variables filled, a text prompt as one user message." }),
  provider: Schema.String, model: Schema.String.annotations({ description: "As the provider answered it." }), answer: Schema.String,
  prompt_tokens: Schema.Int, completion_tokens: Schema.Int, cost_usd: Schema.NullOr(Schema.Number).annotations({ description: "null when the model has no known price" }),
  latency_ms: Schema.Int, attempts: Schema.Int,
}).annotations({ identifier: "PromptPlaygroundRun" });
const Score: Param = { name: "score", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)) };

export const PROMPT_OPERATIONS: Operations = {
  "/api/prompts": {
    get: { tag: "Prompts", summary: "The project's prompts, by name", ok: { 200: Schema.Struct({ prompts: Schema.Array(PromptSummary) }) }, errors: [401, 403, 429] },
  },
  "/api/prompts/{name}": {
    get: {
      tag: "Prompts", summary: "One version of a prompt: a label's, a number, or the newest",
      description: "Answers with an ETag; send it back as If-None-Match for a 304 while the answer is the same (the label has not moved).",
      params: [Name, q("label", Schema.String.pipe(Schema.pattern(LABEL_NAME)), "A label, e.g. production; `latest` is the newest version."), q("version", VersionNumber)],
      ok: { 200: One, 304: null }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/prompts/{name}/versions": {
    get: {
      tag: "Prompts", summary: "A prompt's versions, newest first", params: [Name, q("limit", Limit(500, 100)), q("before", Schema.Int, "Versions below this number (paging).")],
      ok: { 200: Schema.Struct({ versions: Schema.Array(PromptVersion) }).annotations({ identifier: "PromptVersions" }) }, errors: [401, 403, 404, 422, 429],
    },
    post: {
      tag: "Prompts", summary: "Push a new version (creating the prompt), optionally moving labels to it",
      description: "Versions are immutable and numbered from 1. A text prompt or chat messages, each at most 100,000 characters, at most 200 messages; the config at most 64 KiB as JSON.",
      params: [Name], body: PromptVersionInput, ok: { 201: One }, errors: [400, 401, 403, 404, 413, 415, 422, 429],
    },
  },
  "/api/prompts/{name}/labels/{label}": {
    put: {
      tag: "Prompts", summary: "Point a label at a version (a rollback is a move to an older one)", params: [Name, Label],
      description: "Moving production goes through the gate: 409 gate_refused when the version's latest experiment regresses against production's on the same dataset beyond a rule, unless an admin forces it with a reason.",
      body: Schema.Struct({
        version: VersionNumber, force: Schema.optional(Schema.Boolean),
        reason: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_FORCE_REASON))).annotations({ description: "Required with force: kept in the audit log." }),
      }).annotations({ identifier: "PromptLabelTarget" }), ok: { 200: LabelMove },
      errors: [400, 401, 403, 404, 409, 413, 415, 422, 429], errorBody: PromptGateRefusal,
    },
    delete: { tag: "Prompts", summary: "Remove a label", params: [Name, Label], ok: { 204: null }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/prompts/{name}/gate": {
    get: {
      tag: "Prompts", summary: "The gate on production: its rules, and with ?version= what moving production there would compare",
      params: [Name, q("version", VersionNumber)],
      ok: { 200: Schema.Struct({ rules: Schema.Array(GateRule), gate: Schema.NullOr(PromptGateCheck) }).annotations({ identifier: "PromptGate" }) },
      errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/prompts/{name}/gate/rules/{score}": {
    put: {
      tag: "Prompts", summary: "Add or change a gate rule: the score's mean may drop by at most max_drop", params: [Name, Score],
      body: Schema.Struct({ max_drop: Schema.Number.pipe(Schema.between(0, 1e9)) }).annotations({ identifier: "PromptGateRuleInput" }),
      ok: { 200: Schema.Struct({ rule: GateRule }) }, errors: [400, 401, 403, 404, 409, 413, 415, 422, 429],
    },
    delete: { tag: "Prompts", summary: "Remove a gate rule", params: [Name, Score], ok: { 204: null }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/prompts/{name}/playground": {
    post: {
      tag: "Prompts", summary: "Run a version (or a draft) once against its provider: the playground",
      description: "The project's own provider key when it has one, else the instance's only when the operator allows the project (RUNWATCH_OPERATOR_JUDGE_KEY), within the project's judge calls per minute and daily budget. "
        + "Of the parameters, temperature, top_p and max_tokens reach the provider; without max_tokens the answer is limited to 2,048 tokens. "
        + "422 naming the field: a missing variable (variables.x), an unknown version or label, a config the provider refuses or a provider that did not answer in time; 403/409/429 when the key rules or the caps refuse the call; 503 when the provider is busy.",
      params: [Name],
      body: Schema.Struct({
        version: Schema.optional(VersionNumber), label: Schema.optional(Schema.String.pipe(Schema.pattern(LABEL_NAME))),
        prompt: Schema.optional(PromptVersionInput.fields.prompt).annotations({ description: "A draft to run instead of a version." }),
        config: Schema.optional(PromptConfig).annotations({ description: "The draft's model config." }),
        variables: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
      }).annotations({ identifier: "PromptPlaygroundInput" }),
      ok: { 200: Schema.Struct({ run: PlaygroundRun }) }, errors: [400, 401, 403, 404, 409, 413, 415, 422, 429, 503],
    },
  },
  "/api/prompts/{name}/diff": {
    get: {
      tag: "Prompts", summary: "The line diff of two versions' prompts and model configs", params: [Name, { ...q("from", VersionNumber), required: true }, { ...q("to", VersionNumber), required: true }],
      ok: { 200: Schema.Struct({ from: VersionNumber, to: VersionNumber, diff: Schema.Struct({ prompt: SideDiff, config: SideDiff }) }).annotations({ identifier: "PromptDiff" }) },
      errors: [401, 403, 404, 422, 429],
    },
  },
};
