/**
 * What we ask the model for, as a JSON Schema (sent to each provider's structured-output feature) and as an
 * effect Schema (to validate what comes back: providers' structured output is best-effort, and
 * OpenAI-compatible local servers may ignore it entirely).
 */
import { Either, ParseResult, Schema } from "effect";

import { SEVERITIES, type Severity } from "../core/agents/contract.js";

export { SEVERITIES, type Severity };

export const MAX_SUGGESTIONS = 50;

export const ModelAnswer = Schema.Struct({
  suggestions: Schema.Array(
    Schema.Struct({
      title: Schema.String.pipe(Schema.minLength(1)),
      explanation: Schema.String,
      severity: Schema.Literal(...SEVERITIES),
    }),
  ).pipe(Schema.maxItems(MAX_SUGGESTIONS)),
  improved_code: Schema.String,
});
export type ModelAnswer = typeof ModelAnswer.Type;

/** The JSON Schema of ModelAnswer, in the strict form OpenAI requires (every property required, no extras). */
export const ANSWER_JSON_SCHEMA = {
  type: "object",
  additionalProperties: false,
  required: ["suggestions", "improved_code"],
  properties: {
    suggestions: {
      type: "array",
      description: "Concrete improvements, most important first.",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["title", "explanation", "severity"],
        properties: {
          title: { type: "string", description: "One short line naming the change." },
          explanation: { type: "string", description: "Why it matters and what was changed." },
          severity: { type: "string", enum: [...SEVERITIES], description: "high: a bug or security issue; medium: robustness or clarity; low: style." },
        },
      },
    },
    improved_code: { type: "string", description: "The complete improved code, in the same language, ready to replace the input." },
  },
} as const;

export const ANSWER_NAME = "code_improvements";

const decode = Schema.decodeUnknownEither(ModelAnswer, { errors: "first", onExcessProperty: "ignore" });

/** Parses a model's text answer as JSON: tolerates a ```json fence around it (common without structured output). */
export function parseJsonText(text: string): Either.Either<unknown, string> {
  const unfenced = text.trim().replace(/^```(?:json)?\s*\n([\s\S]*?)\n?```$/, "$1");
  try {
    return Either.right(JSON.parse(unfenced) as unknown);
  } catch (e) {
    return Either.left(`the answer is not valid JSON (${(e as Error).message}): ${JSON.stringify(text.slice(0, 120))}`);
  }
}

export const ANSWER_OUTPUT = {
  name: ANSWER_NAME,
  description: "Submit the review: the suggestions and the complete improved code.",
  schema: ANSWER_JSON_SCHEMA,
} as const;

export function validateAnswer(json: unknown): Either.Either<ModelAnswer, string> {
  return Either.mapLeft(decode(json), (err) => {
    const issue = ParseResult.ArrayFormatter.formatErrorSync(err)[0];
    const at = issue?.path.length ? issue.path.join(".") : "answer";
    return `the answer does not match the expected shape at ${at}: ${issue?.message ?? "invalid"}`;
  });
}
