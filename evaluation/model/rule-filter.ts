/**
 * Which runs (or spans) an online evaluation rule takes (docs/EVALUATION.md, Online rules), and which share of them.
 * The run fields (agent, config version, status, session, has error) are checked where the run ends, in the
 * pipeline; metadata and tags live in the run's run_start and are checked by the worker when it reads the run
 * (a job whose run does not match them is skipped). Sampling is a hash of the rule and the run (and span), so a
 * run is in or out of a rule's sample however often it is seen, and each run is in with the rule's probability.
 */
import { createHash } from "node:crypto";
import { ValidationError } from "../../core/errors.js";
import { isUuid } from "../../core/ids.js";
import type { RunRecord } from "../../core/events/run.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import type { RuleFilter } from "../../stores/evaluation/shapes.js";
export type { RuleFilter } from "../../stores/evaluation/shapes.js";


const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const fail = (field: string, message: string): never => {
  throw new ValidationError({ field, message: `${field} ${message}` });
};
const shortText = (field: string, v: unknown, max = 200): string => {
  if (typeof v !== "string" || v === "" || v.length > max || /[\u0000-\u001f]/.test(v)) return fail(field, `must be text of 1 to ${max} characters`);
  return v;
};

export function parseRuleFilter(raw: unknown, target: "run" | "span"): RuleFilter {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) return fail("filter", "must be an object like {\"agent_name\": \"support-bot\", \"status\": \"success\"}");
  const known = new Set(["agent_name", "config_version", "status", "session_id", "has_error", "experiment_id", "metadata", "tags", "span_kind", "span_name"]);
  for (const k of Object.keys(raw)) if (!known.has(k)) fail(`filter.${k}`, `is not a filter; use ${[...known].join(", ")}`);
  const f: { -readonly [K in keyof RuleFilter]: RuleFilter[K] } = {};
  if (raw.agent_name !== undefined) f.agent_name = shortText("filter.agent_name", raw.agent_name);
  if (raw.config_version !== undefined) {
    if (!Number.isInteger(raw.config_version) || (raw.config_version as number) < 1) fail("filter.config_version", "must be a version number (1, 2, …)");
    f.config_version = raw.config_version as number;
  }
  if (raw.status !== undefined) {
    if (raw.status !== "success" && raw.status !== "error") fail("filter.status", 'must be "success" or "error" (a run is judged once it has ended)');
    f.status = raw.status as "success" | "error";
  }
  if (raw.session_id !== undefined) f.session_id = shortText("filter.session_id", raw.session_id);
  if (raw.has_error !== undefined) {
    if (typeof raw.has_error !== "boolean") fail("filter.has_error", "must be true or false");
    f.has_error = raw.has_error as boolean;
  }
  if (raw.experiment_id !== undefined) {
    if (typeof raw.experiment_id !== "string" || !isUuid(raw.experiment_id)) fail("filter.experiment_id", "must be an experiment's id (a UUID)");
    f.experiment_id = (raw.experiment_id as string).toLowerCase();
  }
  if (raw.metadata !== undefined) {
    if (!isObject(raw.metadata) || Object.keys(raw.metadata).length > 20) fail("filter.metadata", "must be an object of at most 20 key: value pairs");
    for (const [k, v] of Object.entries(raw.metadata as Record<string, unknown>)) {
      shortText(`filter.metadata.${k}`, k, 100);
      if (!["string", "number", "boolean"].includes(typeof v)) fail(`filter.metadata.${k}`, "must be a string, a number or a boolean");
    }
    f.metadata = raw.metadata as Record<string, string | number | boolean>;
  }
  if (raw.tags !== undefined) {
    if (!Array.isArray(raw.tags) || raw.tags.length > 20) fail("filter.tags", "must be a list of at most 20 tags");
    f.tags = (raw.tags as unknown[]).map((t, i) => shortText(`filter.tags.${i}`, t, 100));
  }
  if (raw.span_kind !== undefined || raw.span_name !== undefined) {
    if (target !== "span") fail("filter.span_kind", 'applies to rules with target "span"');
    if (raw.span_kind !== undefined) f.span_kind = shortText("filter.span_kind", raw.span_kind, 50);
    if (raw.span_name !== undefined) f.span_name = shortText("filter.span_name", raw.span_name);
  }
  return f;
}

/** Whether an ended run passes the filter's run fields (metadata and tags aside: see runMetadataMatches). */
export function runMatches(f: RuleFilter, run: Readonly<RunRecord>): boolean {
  if (run.agent_name === JUDGE_AGENT) return false;
  if (f.agent_name !== undefined && run.agent_name !== f.agent_name) return false;
  if (f.config_version !== undefined && run.config_version !== f.config_version) return false;
  if (f.status !== undefined && run.status !== f.status) return false;
  if (f.session_id !== undefined && run.session_id !== f.session_id) return false;
  if (f.experiment_id !== undefined && run.experiment_id !== f.experiment_id) return false;
  if (f.has_error !== undefined && (run.error_count > 0 || run.status === "error") !== f.has_error) return false;
  return true;
}

/** Whether a run's run_start metadata (and tags) pass the filter's metadata and tags. */
export function runMetadataMatches(f: RuleFilter, metadata: Readonly<Record<string, unknown>>): boolean {
  for (const [k, v] of Object.entries(f.metadata ?? {})) if (metadata[k] !== v) return false;
  if (f.tags?.length) {
    const tags = Array.isArray(metadata.tags) ? metadata.tags : [];
    if (!f.tags.every((t) => tags.includes(t))) return false;
  }
  return true;
}

/** A span end event's kind ("tool" for a tool call, else the step's kind) and name. */
export const spanOf = (eventType: string, payload: Readonly<Record<string, unknown>>): { kind: string; name: string } => ({
  kind: eventType === "tool_call" ? "tool" : String(payload.kind ?? "step"),
  name: String(eventType === "tool_call" ? payload.tool_name : payload.node_name),
});

/** The filter without the run fields that only an ended run has: what a span that ends while its run goes on is held to. */
export const spanRunFilter = (f: RuleFilter): RuleFilter => {
  const { status: _s, has_error: _h, ...rest } = f;
  return rest;
};

/** Whether a span (its kind and name) passes the filter's span fields. */
export const spanMatches = (f: RuleFilter, span: { kind: string; name: string }): boolean =>
  (f.span_kind === undefined || span.kind === f.span_kind) && (f.span_name === undefined || span.name === f.span_name);

/** In the rule's sample: the hash of rule, run and span, read as a number in [0, 1), is below the sampling rate. */
export function sampled(ruleId: string, runId: string, spanId: string, rate: number): boolean {
  if (rate >= 1) return true;
  if (rate <= 0) return false;
  const h = createHash("sha256").update(`${ruleId}\u0000${runId}\u0000${spanId}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < rate;
}
