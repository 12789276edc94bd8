/**
 * What an evaluator's score is (docs/EVALUATION.md, Evaluators): a number in a range, a boolean, or one of a few
 * categories. From the definition come the JSON Schema the judge must answer in (an explanation first, so the model
 * reasons before it scores, then the score) and the strict check of that answer: anything else — extra keys, a
 * number out of range, a category not listed, text around the JSON — is an evaluation error, never a score.
 */
import { Either } from "effect";
import type { OutputDefinition } from "../../stores/evaluation/shapes.js";
export type { OutputDefinition } from "../../stores/evaluation/shapes.js";


export const MAX_CATEGORIES = 20;
export const MAX_CATEGORY_CHARS = 100;

/** A judge's verdict once checked: the score's value and the judge's explanation. */
export interface Verdict {
  readonly value: number | boolean | string;
  readonly explanation: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Reads `output` of a POST /api/evaluators body; the error names the field under `output`. */
export function parseOutputDefinition(raw: unknown): Either.Either<OutputDefinition, { field: string; message: string }> {
  const fail = (field: string, message: string) => Either.left({ field: `output${field}`, message: `output${field} ${message}` });
  if (!isObject(raw)) return fail("", 'must be an object like {"type": "numeric", "min": 0, "max": 1}');
  if (raw.type === "boolean") return Either.right({ type: "boolean" });
  if (raw.type === "numeric") {
    const min = raw.min ?? 0;
    const max = raw.max ?? 1;
    if (typeof min !== "number" || !Number.isFinite(min)) return fail(".min", "must be a finite number");
    if (typeof max !== "number" || !Number.isFinite(max) || max <= min) return fail(".max", "must be a finite number above min");
    return Either.right({ type: "numeric", min, max });
  }
  if (raw.type === "categorical") {
    const c = raw.categories;
    if (!Array.isArray(c) || c.length < 2 || c.length > MAX_CATEGORIES) return fail(".categories", `must list 2 to ${MAX_CATEGORIES} categories`);
    for (const [i, x] of c.entries()) {
      if (typeof x !== "string" || x.trim() === "" || x.length > MAX_CATEGORY_CHARS || /[\u0000-\u001f]/.test(x)) {
        return fail(`.categories.${i}`, `must be a name of 1 to ${MAX_CATEGORY_CHARS} characters`);
      }
    }
    if (new Set(c).size !== c.length) return fail(".categories", "must not repeat a category");
    return Either.right({ type: "categorical", categories: c as string[] });
  }
  return fail(".type", 'must be "numeric", "boolean" or "categorical"');
}

/** The answer's JSON Schema, in the strict form the providers' structured output takes. */
export function verdictSchema(def: OutputDefinition): Record<string, unknown> {
  const score =
    def.type === "numeric" ? { type: "number", description: `The score, from ${def.min} to ${def.max}.` }
    : def.type === "boolean" ? { type: "boolean", description: "The verdict: true or false." }
    : { type: "string", enum: [...def.categories], description: "The category that fits best." };
  return {
    type: "object",
    additionalProperties: false,
    required: ["explanation", "score"],
    properties: {
      explanation: { type: "string", description: "One to three sentences: why this score." },
      score,
    },
  };
}

export const MAX_EXPLANATION_CHARS = 2_000;

/** Checks a judge's answer (the JSON the provider returned) against the definition; the error says what is wrong. */
export function checkVerdict(answer: unknown, def: OutputDefinition): Either.Either<Verdict, string> {
  if (!isObject(answer)) return Either.left("the answer is not a JSON object");
  const extra = Object.keys(answer).filter((k) => k !== "explanation" && k !== "score");
  if (extra.length) return Either.left(`the answer has keys the schema does not allow: ${extra.slice(0, 5).join(", ")}`);
  const { explanation, score } = answer;
  if (typeof explanation !== "string") return Either.left("the answer's explanation is not a string");
  if (def.type === "numeric") {
    if (typeof score !== "number" || !Number.isFinite(score)) return Either.left("the answer's score is not a number");
    if (score < def.min || score > def.max) return Either.left(`the answer's score ${score} is outside ${def.min}..${def.max}`);
  } else if (def.type === "boolean") {
    if (typeof score !== "boolean") return Either.left("the answer's score is not true or false");
  } else if (typeof score !== "string" || !def.categories.includes(score)) {
    return Either.left(`the answer's score is not one of ${def.categories.join(", ")}`);
  }
  const cut = explanation.length > MAX_EXPLANATION_CHARS ? `${explanation.slice(0, MAX_EXPLANATION_CHARS - 1)}…` : explanation;
  return Either.right({ value: score as number | boolean | string, explanation: cut });
}

/** How the definition reads on a page: "0 to 1", "true / false", "good, bad". */
export const describeOutput = (def: OutputDefinition): string =>
  def.type === "numeric" ? `${def.min} to ${def.max}` : def.type === "boolean" ? "true / false" : def.categories.join(", ");
