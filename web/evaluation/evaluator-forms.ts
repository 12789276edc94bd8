/**
 * The dashboard's evaluator and rule forms, read into the bodies the API takes (web/evaluation/evaluators-api.ts,
 * web/evaluation/rules-api.ts), so a page and a script are refused by the same checks with the same field names.
 */
import { ValidationError } from "../../core/errors.js";
import { FEEDBACK_SCORE } from "../runs/scores-page.js";

const blank = (v: string | undefined) => v === undefined || v.trim() === "";
const num = (v: string | undefined) => (blank(v) ? undefined : Number(v));

/** An evaluator form (new, or a new version) as a POST /api/evaluators body. */
export function evaluatorBody(form: Record<string, string>): Record<string, unknown> {
  const body: Record<string, unknown> = { name: form.name, type: form.type, description: form.description ?? "" };
  if (!blank(form.score_name)) body.score_name = form.score_name;
  if (form.type === "builtin") {
    let check: unknown = form.check;
    try {
      check = JSON.parse(form.check ?? "");
    } catch {
      throw new ValidationError({ field: "check", message: 'check must be JSON like {"kind": "contains", "value": "refund"}' });
    }
    return { ...body, check };
  }
  const output: Record<string, unknown> = { type: form.output_type };
  if (form.output_type === "numeric") Object.assign(output, { min: num(form.output_min) ?? 0, max: num(form.output_max) ?? 1 });
  if (form.output_type === "categorical") output.categories = (form.output_categories ?? "").split(",").map((c) => c.trim()).filter(Boolean);
  return {
    ...body, provider: blank(form.provider) ? null : form.provider, model: blank(form.model) ? null : form.model.trim(),
    temperature: num(form.temperature) ?? null, prompt: form.prompt ?? "", output,
  };
}

function samplingOf(form: Record<string, string>): number {
  const pct = num(form.sampling_pct);
  if (pct === undefined || !Number.isFinite(pct)) throw new ValidationError({ field: "sampling", message: "sampling must be a percentage from 0 to 100" });
  return pct / 100;
}

/** When a queue page's "fill automatically" rule adds a run. */
export const ROUTING_WHEN = { error: "a run ends with an error", thumbs_down: "a run is given thumbs down", score_below: "a run is given a score below a threshold", every: "any run ends" } as const;

/** A queue page's "fill automatically" form as a POST /api/evaluation-rules body: a rule without an evaluator. */
export function routingRuleBody(queueId: string, form: Record<string, string>): Record<string, unknown> {
  const filter: Record<string, unknown> = blank(form.agent_name) ? {} : { agent_name: form.agent_name!.trim() };
  const action: Record<string, unknown> = { queue_id: queueId };
  if (form.when === "error") filter.has_error = true;
  else if (form.when === "thumbs_down") Object.assign(action, { score_name: FEEDBACK_SCORE, equals: false });
  else if (form.when === "score_below") {
    const below = num(form.below);
    if (below === undefined || !Number.isFinite(below)) throw new ValidationError({ field: "below", message: "below must be a number: runs given a lower score are added" });
    Object.assign(action, { score_name: form.score_name ?? "", below });
  } else if (form.when !== "every") throw new ValidationError({ field: "when", message: `when must be one of ${Object.keys(ROUTING_WHEN).join(", ")}` });
  return { target: "run", filter, sampling: samplingOf(form), queue_action: action, ...(blank(form.name) ? {} : { name: form.name }) };
}

/** A rule form as a POST /api/evaluation-rules body. */
export function ruleBody(evaluatorId: string, form: Record<string, string>): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  for (const k of ["agent_name", "status", "session_id", "span_kind", "span_name"]) if (!blank(form[k])) filter[k] = form[k]!.trim();
  if (!blank(form.config_version)) filter.config_version = Number(form.config_version);
  if (form.has_error === "true" || form.has_error === "false") filter.has_error = form.has_error === "true";
  const body: Record<string, unknown> = {
    evaluator_id: evaluatorId, target: form.target || "run", filter, sampling: samplingOf(form), delay_s: num(form.delay_s) ?? 0,
    ...(blank(form.name) ? {} : { name: form.name }),
  };
  if (!blank(form.queue_id)) {
    const equals = form.queue_equals?.trim();
    body.queue_action = {
      queue_id: form.queue_id,
      ...(blank(form.queue_below) ? {} : { below: Number(form.queue_below) }),
      ...(blank(equals) ? {} : { equals: equals === "true" ? true : equals === "false" ? false : Number.isFinite(Number(equals)) ? Number(equals) : equals }),
    };
  }
  return body;
}
