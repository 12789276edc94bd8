/** The /improve request body, validated with effect Schema; errors name the field. */
import { Either, ParseResult, Schema } from "effect";
import { badRequest, ServiceError } from "./errors.js";
import { PROVIDER_IDS, type AgentsSettings, type ProviderId } from "./settings.js";

export interface ImproveRequest {
  readonly code: string;
  readonly language?: string;
  readonly provider?: ProviderId;
  readonly model?: string;
  readonly temperature?: number;
  readonly instructions?: string;
}

const MODEL_NAME = /^[A-Za-z0-9][\w.:/@+-]*$/;
const LANGUAGE_NAME = /^[A-Za-z0-9][\w+#.-]*$/;

export function improveRequestSchema(s: Pick<AgentsSettings, "maxCodeChars" | "maxInstructionsChars">) {
  return Schema.Struct({
    code: Schema.String.pipe(
      Schema.filter((c) => c.trim().length > 0 || "must not be empty"),
      Schema.maxLength(s.maxCodeChars, { message: () => `must be at most ${s.maxCodeChars} characters` }),
    ),
    language: Schema.optional(
      Schema.String.pipe(
        Schema.maxLength(40, { message: () => "must be at most 40 characters" }),
        Schema.pattern(LANGUAGE_NAME, { message: () => "must be a language name such as python, typescript or c++" }),
      ),
    ),
    provider: Schema.optional(
      Schema.String.pipe(
        Schema.filter((p): p is ProviderId => (PROVIDER_IDS as readonly string[]).includes(p), {
          message: () => `must be one of ${PROVIDER_IDS.join(", ")}`,
        }),
      ),
    ),
    model: Schema.optional(
      Schema.String.pipe(
        Schema.maxLength(200, { message: () => "must be at most 200 characters" }),
        Schema.pattern(MODEL_NAME, { message: () => "must be a model name such as gpt-4.1-mini" }),
      ),
    ),
    temperature: Schema.optional(
      Schema.Number.pipe(
        Schema.finite({ message: () => "must be a finite number" }),
        Schema.between(0, 2, { message: () => "must be between 0 and 2" }),
      ),
    ),
    instructions: Schema.optional(
      Schema.String.pipe(
        Schema.maxLength(s.maxInstructionsChars, { message: () => `must be at most ${s.maxInstructionsChars} characters` }),
      ),
    ),
  });
}

export function makeRequestParser(s: Pick<AgentsSettings, "maxCodeChars" | "maxInstructionsChars">) {
  const decode = Schema.decodeUnknownEither(improveRequestSchema(s), { errors: "first", onExcessProperty: "error" });
  return (body: unknown): Either.Either<ImproveRequest, ServiceError> => {
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return Either.left(badRequest("invalid_body", "the body must be a JSON object"));
    }
    return Either.mapLeft(decode(body), (err) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(err)[0];
      const field = issue?.path.map(String).join(".") || undefined;
      const message =
        issue?._tag === "Missing" ? `${field} is required`
        : issue?._tag === "Unexpected" ? `${field} is not a known field (expected code, language, provider, model, temperature, instructions)`
        : `${field ?? "body"}: ${issue?.message ?? "invalid"}`;
      return new ServiceError({ status: 422, code: "validation_failed", message, field });
    });
  };
}
