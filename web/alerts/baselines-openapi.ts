/** The baselines API's part of the OpenAPI document (baselines-api.ts). */
import { Schema } from "effect";
import type { Operations } from "../api/openapi/document.js";
import { BASELINE_METRIC_NAMES } from "../../alerts/index.js";

const Num = Schema.NullOr(Schema.Number);
const Side = Schema.Struct({ hours: Schema.Number, runs: Schema.Number, value: Num });
const Band = Schema.Union(
  Schema.Struct({ state: Schema.Literal("learning"), hours: Schema.Number, needed: Schema.Number }),
  Schema.Struct({
    state: Schema.Literal("ready"), basis: Schema.Literal("slot", "all"), hours: Schema.Number,
    median: Schema.Number, mad: Schema.Number, spread: Schema.Number, upper: Schema.Number, lower: Schema.Number,
  }),
);
const Bands = Schema.Struct({ low: Band, medium: Band, high: Band });
const latestHour = Schema.String.annotations({ description: "The latest hour with enough runs the band was learned from." });
const Versions = Schema.Struct({
  from_version: Schema.NullOr(Schema.Number).annotations({ description: "The version active before: the previous activation, else the newest lower version with history; null: none known." }),
  to_version: Schema.Number,
  before: Schema.NullOr(Band).annotations({ description: "from_version's own band (medium); null: no hour with enough runs in the history." }),
  after: Schema.NullOr(Band),
}).annotations({ description: "A config activation as its two versions' own baselines." });
const Baseline = Schema.Struct({
  agent: Schema.String,
  metric: Schema.Literal(...BASELINE_METRIC_NAMES),
  score: Schema.optional(Schema.String),
  label: Schema.String,
  at: Schema.String,
  hour_of_week: Schema.String.annotations({ description: 'The slot the band is for, e.g. "Tuesdays 14:00" (UTC).' }),
  bands: Bands,
  learned_from: Schema.Array(Schema.Struct({ hour: Schema.String, runs: Schema.Number, value: Schema.Number })),
  window: Schema.Struct({ minutes: Schema.Number, runs: Schema.Number, value: Num }),
  changes: Schema.Array(Schema.Struct({
    kind: Schema.Literal("config_activation", "release", "prompt_label"), label: Schema.String, at: Schema.String,
    version: Schema.optional(Schema.Number), release: Schema.optional(Schema.String),
    prompt: Schema.optional(Schema.String), from_version: Schema.optional(Schema.NullOr(Schema.Number)),
    before: Side, after: Side, shift_in_spreads: Num, versions: Schema.optional(Versions),
  })),
  environments: Schema.Array(Schema.Struct({ environment: Schema.String, latest_hour: latestHour, bands: Bands }))
    .annotations({ description: "The band of each environment the agent's runs named, learned from that environment's hours only." }),
  config_versions: Schema.Array(Schema.Struct({ version: Schema.Number, latest_hour: latestHour, bands: Bands }))
    .annotations({ description: "The band of each of the agent's 5 most recent config versions with history, newest version first; a young version is learning." }),
}).annotations({ identifier: "Baseline" });

export const BASELINES_OPERATIONS: Operations = {
  "/api/baselines": {
    get: {
      tag: "Alerts", summary: "An agent's learned baseline of a metric, and the numbers it came from",
      description: "The band per sensitivity (or learning), the hourly values it was learned from, the live window, each change point (config activation, new release, prompt label move) in the last 28 days with the metric 24 h before and after it (a config activation also as its two versions' own bands), and the band of each environment and recent config version. docs/ALERTS.md, Anomaly alerts.",
      params: [
        { name: "agent", in: "query", required: true, schema: Schema.String },
        { name: "metric", in: "query", required: true, schema: Schema.Literal(...BASELINE_METRIC_NAMES) },
        { name: "score", in: "query", schema: Schema.String, description: "The score's name; required with metric=score_mean." },
        { name: "window_minutes", in: "query", schema: Schema.Number, description: "The live window (1 – 1440, 30 by default)." },
      ],
      ok: { 200: Baseline }, errors: [401, 403, 422, 429],
    },
  },
};
