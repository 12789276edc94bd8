/** The SLO API's part of the OpenAPI document (slos-api.ts). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";

const Tally = Schema.Struct({ runs: Schema.Number, bad: Schema.Number, rate: Schema.Number });
const Slo = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  agent_name: Schema.String,
  objective: Schema.Literal("success_rate", "latency", "score_mean"),
  target: Schema.Number,
  threshold_seconds: Schema.NullOr(Schema.Number),
  score_name: Schema.NullOr(Schema.String),
  window_days: Schema.Number,
  created_at: Schema.String,
  objective_text: Schema.String,
  status: Schema.Struct({
    sli: Schema.NullOr(Schema.Number),
    budget: Schema.Struct({ runs: Schema.Number, bad: Schema.Number, allowed_bad: Schema.Number, spent: Schema.Number, remaining: Schema.Number }),
    burn: Schema.Struct({ "1h": Tally, "5m": Tally, "6h": Tally, "30m": Tally }),
    alerts: Schema.Struct({ fast: Schema.Boolean, slow: Schema.Boolean }),
  }),
}).annotations({ identifier: "Slo" });
const SloInput = Schema.Struct({
  name: Schema.String,
  agent_name: Schema.String,
  objective: Schema.Literal("success_rate", "latency", "score_mean"),
  target: Schema.Number.annotations({ description: "The share of runs that must be good, between 0 and 1 (e.g. 0.99); score_mean: the least mean of the score (values clamped to 0 – 1)." }),
  threshold_seconds: Schema.optional(Schema.NullOr(Schema.Number)).annotations({ description: "latency only: a run is good when it ends within this many seconds." }),
  score_name: Schema.optional(Schema.NullOr(Schema.String)).annotations({ description: "score_mean only: the score whose mean must stay at or above the target." }),
  window_days: Schema.Number.annotations({ description: "1 – 90." }),
}).annotations({ identifier: "SloInput" });
const Id = { name: "id", in: "path" as const, required: true, schema: Schema.String };

export const SLOS_OPERATIONS: Operations = {
  "/api/slos": {
    get: { tag: "Alerts", summary: "The project's SLOs, each with its error budget and burn rates now", ok: { 200: Schema.Struct({ slos: Schema.Array(Slo) }) }, errors: [401, 403, 429] },
    post: { tag: "Alerts", summary: "Create an SLO", body: SloInput, ok: { 201: Schema.Struct({ slo: Slo }) }, errors: [400, 401, 403, 413, 415, 422, 429] },
  },
  "/api/slos/{id}": {
    get: { tag: "Alerts", summary: "An SLO with its error budget and burn rates now", params: [Id], ok: { 200: Schema.Struct({ slo: Slo }) }, errors: [401, 403, 404, 405, 422, 429] },
    delete: { tag: "Alerts", summary: "Delete an SLO", params: [Id], ok: { 204: null }, errors: [401, 403, 404, 405, 422, 429] },
  },
};
