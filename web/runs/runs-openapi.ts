/** The runs, sessions and scores APIs' part of the OpenAPI document (runs-api.ts, sessions-api.ts, scores-api.ts). */
import { Schema } from "effect";
import { MAX_SESSION_ID_CHARS, RUN_STATUSES } from "../../core/events/schema.js";
import { MAX_FILTER_CHARS, MAX_FILTER_TOKENS, MAX_VALUE_CHARS, RunsSort } from "../../core/runs-filter/index.js";
import { MAX_SCORE_NAME, ScoreInput } from "../../stores/scores.js";
import type { Operations } from "../api/openapi/document.js";
import { After, Cursor, Limit, q, SdkRunId, Since } from "../api/openapi/operation.js";
import * as R from "../api/openapi/schemas.js";

export const RUNS_OPERATIONS: Operations = {
  "/api/runs": {
    get: {
      tag: "Runs", summary: "List runs: filtered, sorted, a page at a time",
      description: "`q` is the filter in its string form (docs/EXPLORER.md), e.g. `status:error agent:refund env:production meta.customer:acme "
        + "cost>0.05 duration>10s since:24h \"timeout\"`; the answer's `filter` is the RunsFilter it was read as. The other filter parameters "
        + "narrow the list further (each is a RunsFilter field: status, agent, session, from, version, score). Runs of experiments and the LLM "
        + "judge's own runs are left out unless asked for (`is:experiment`, `is:judge`, or the judge's agent by name). A malformed `q` is a 422 "
        + "naming `q`, its message the token.",
      params: [
        q("q", Schema.String.pipe(Schema.maxLength(MAX_FILTER_CHARS)), `The filter's string form: at most ${MAX_FILTER_TOKENS} terms, values up to ${MAX_VALUE_CHARS} characters.`),
        q("sort", RunsSort.fields.field, "Default start_time. `score.<name>` orders by the run's latest value of that score; runs without a value come last."),
        q("order", RunsSort.fields.order, "Default desc. Ties are broken by the run's id; a cursor belongs to its sort and order."),
        q("status", Schema.Literal(...RUN_STATUSES)), q("agent_name", Schema.String), q("session_id", Schema.String), Since,
        q("config_version", Schema.Int.pipe(Schema.between(1, 2 ** 31 - 1))), q("score_name", Schema.String.pipe(Schema.maxLength(MAX_SCORE_NAME)), "Runs with a score of this name."),
        q("score_min", Schema.Number, "With score_name: numeric or boolean (1/0) scores at least this."), q("score_max", Schema.Number, "With score_name: at most this."),
        Cursor, q("limit", Limit(500, 50)),
      ],
      ok: { 200: R.RunList }, errors: [401, 403, 422, 429],
    },
  },
  "/api/runs/{sdk_run_id}": {
    get: { tag: "Runs", summary: "A run and its events", params: [SdkRunId, q("limit", Limit(5000, 1000)), After], ok: { 200: R.RunWithEvents }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/spans": {
    get: { tag: "Runs", summary: "A run's spans (tree via parent_span_id)", params: [SdkRunId, q("limit", Limit(5000, 1000)), After], ok: { 200: R.RunWithSpans }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/runs/{sdk_run_id}/graph": {
    get: {
      tag: "Runs", summary: "A run's agent graph: its nodes, agents, tools and models, and the calls and handoffs between them, with counts and durations",
      params: [SdkRunId], ok: { 200: R.RunWithGraph }, errors: [401, 403, 404, 429],
    },
  },
  "/api/runs/{sdk_run_id}/scores": {
    get: { tag: "Scores", summary: "A run's scores, oldest first, a page at a time", params: [SdkRunId, Cursor, q("limit", Limit(5000, 1000))], ok: { 200: R.ScoreList }, errors: [401, 403, 404, 422, 429] },
  },
  "/api/sessions": {
    get: { tag: "Sessions", summary: "List sessions, newest activity first", params: [q("agent_name", Schema.String), Since, Cursor, q("limit", Limit(500, 50))], ok: { 200: R.SessionList }, errors: [401, 403, 422, 429] },
  },
  "/api/sessions/{session_id}": {
    get: {
      tag: "Sessions", summary: "A session and its runs in start order",
      params: [{ name: "session_id", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SESSION_ID_CHARS)) }],
      ok: { 200: R.SessionWithRuns }, errors: [401, 403, 404, 422, 429],
    },
  },
  "/api/scores": {
    post: { tag: "Scores", summary: "Score a run or one of its spans", body: ScoreInput.annotations({ identifier: "ScoreInput" }), ok: { 201: R.ScoreCreated }, errors: [400, 401, 403, 404, 413, 415, 422, 429] },
  },
  "/api/scores/batch": {
    post: {
      tag: "Scores", summary: "Score many runs in one request (up to 1,000 scores)",
      description: "Each score is stored or refused on its own: 201 with its score_id, 404 for a run not (yet) stored, 422 naming the field.",
      body: Schema.Struct({ scores: Schema.Array(ScoreInput).pipe(Schema.minItems(1), Schema.maxItems(1_000)) }).annotations({ identifier: "ScoreBatch" }),
      ok: { 207: Schema.Struct({ results: Schema.Array(Schema.Struct({
        index: Schema.Int, status: Schema.Literal(201, 404, 422), score_id: Schema.optional(Schema.String),
        error: Schema.optional(Schema.Struct({ code: Schema.String, message: Schema.String, field: Schema.optional(Schema.String) })),
      })) }).annotations({ identifier: "ScoreBatchResults" }) },
      errors: [400, 401, 403, 413, 415, 422, 429],
    },
  },
};
