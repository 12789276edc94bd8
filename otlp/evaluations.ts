/**
 * A `gen_ai.evaluation.result` (GenAI conventions) as a score (source "otel"), whether it came as a span event
 * (mapping.ts) or as a log record (logs-mapping.ts): the score's value is gen_ai.evaluation.score.value, else its
 * label; with both, the label leads the comment (the explanation). Cut to the lengths POST /api/scores takes;
 * undefined without a name or any score.
 */
import { MAX_SCORE_COMMENT, MAX_SCORE_NAME, MAX_SCORE_STRING } from "../stores/scores.js";
import { EVALUATION_ATTRIBUTES } from "./conventions.js";
import { attrText, first, type Attributes } from "./trace-model.js";

const firstText = (attrs: Attributes, keys: readonly string[]): string | undefined => {
  const v = first(attrs, keys);
  return v === undefined ? undefined : attrText(v);
};

export function evaluationScore(attrs: Attributes): Record<string, unknown> | undefined {
  const name = firstText(attrs, EVALUATION_ATTRIBUTES.name)?.slice(0, MAX_SCORE_NAME);
  const raw = first(attrs, EVALUATION_ATTRIBUTES.value);
  const number = typeof raw === "number" ? raw : typeof raw === "string" && raw.trim() !== "" ? Number(raw) : undefined;
  const value = number !== undefined && Number.isFinite(number) ? number : undefined;
  const label = firstText(attrs, EVALUATION_ATTRIBUTES.label);
  if (!name || (value === undefined && label === undefined)) return undefined;
  const explanation = firstText(attrs, EVALUATION_ATTRIBUTES.explanation);
  const comment = value !== undefined && label !== undefined ? `${label}${explanation ? `: ${explanation}` : ""}` : explanation;
  return {
    name,
    value: value ?? label!.slice(0, MAX_SCORE_STRING),
    ...(comment ? { comment: comment.slice(0, MAX_SCORE_COMMENT) } : {}),
    source: "otel",
  };
}
