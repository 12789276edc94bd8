/**
 * What a prompt version may hold (docs/PROMPTS.md): the body of POST /api/prompts/{name}/versions, checked by an effect
 * Schema that names the field it refuses, and the names a prompt and a label may have. Every string is bounded so a
 * version stays a few hundred KiB at most: versions are kept for ever and read by every agent's SDK.
 */
import { Either, Schema } from "effect";
import { ValidationError } from "../core/errors.js";
import { toValidationError } from "../core/events/schema.js";
import { refuseUnstorableSetting } from "../core/storable-setting.js";

export const MAX_PROMPT_NAME = 100;
export const MAX_LABEL = 50;
export const MAX_PROMPT_TEXT = 100_000;
export const MAX_MESSAGES = 200;
export const MAX_COMMIT_MESSAGE = 1000;
/** The model config as JSON: parameters, tools and a response format fit well within it. */
export const MAX_CONFIG_BYTES = 64 * 1024;
export const MESSAGE_ROLES = ["system", "developer", "user", "assistant", "tool"] as const;

/** Names go in URLs and CLI arguments: letters, digits, `.`, `_` and `-`, starting with a letter or digit. */
export const PROMPT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const LABEL_NAME = /^[a-z0-9][a-z0-9._-]{0,49}$/;
/** `latest` always names the newest version; it is read, never moved. */
export const LATEST = "latest";

const Text = (max: number) => Schema.String.pipe(Schema.filter((s) => s.length <= max || `must be at most ${max.toLocaleString("en")} characters`));
const Label = Schema.String.pipe(Schema.filter((s) => (LABEL_NAME.test(s) && s !== LATEST) ||
  `a label is 1 to ${MAX_LABEL} lowercase letters, digits, '.', '_' or '-' (not "${LATEST}", which always names the newest version)`));

export const PromptMessage = Schema.Struct({
  role: Schema.Literal(...MESSAGE_ROLES),
  content: Text(MAX_PROMPT_TEXT),
}).annotations({ identifier: "PromptMessage" });

const PromptText = Text(MAX_PROMPT_TEXT).pipe(Schema.filter((s) => s.trim().length > 0 || "must not be empty"));

export const PromptConfig = Schema.Struct({
  provider: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(50))),
  model: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  parameters: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }).annotations({ description: "temperature, max_tokens, … as the provider names them." })),
  tools: Schema.optional(Schema.Array(Schema.Unknown).pipe(Schema.maxItems(128)).annotations({ description: "Tool definitions as the provider takes them." })),
  response_format: Schema.optional(Schema.Unknown.annotations({ description: "A response format (e.g. a JSON Schema) as the provider takes it." })),
}).annotations({ identifier: "PromptConfig", description: `The model config; at most ${MAX_CONFIG_BYTES / 1024} KiB as JSON.` });

/** The body of POST /api/prompts/{name}/versions. */
export const PromptVersionInput = Schema.Struct({
  prompt: Schema.Union(PromptText, Schema.Array(PromptMessage).pipe(Schema.minItems(1), Schema.maxItems(MAX_MESSAGES)))
    .annotations({ description: "A text prompt, or chat messages with roles; `{{variable}}` marks a place compile() fills." }),
  config: Schema.optional(PromptConfig),
  message: Schema.optional(Text(MAX_COMMIT_MESSAGE).annotations({ description: "What changed, like a commit message." })),
  labels: Schema.optional(Schema.Array(Label).pipe(Schema.maxItems(20)).annotations({ description: "Labels moved to the new version." })),
}).annotations({ identifier: "PromptVersionInput" });

export type PromptMessageValue = { readonly role: (typeof MESSAGE_ROLES)[number]; readonly content: string };
export type PromptContent = string | readonly PromptMessageValue[];
export type PromptConfigValue = Schema.Schema.Type<typeof PromptConfig>;

export interface NewPromptVersion {
  readonly type: "text" | "chat";
  readonly content: PromptContent;
  readonly config: PromptConfigValue;
  readonly message: string;
  readonly labels: readonly string[];
}

const decode = Schema.decodeUnknownEither(PromptVersionInput, { errors: "first", onExcessProperty: "error" });

/** Checks a new version as sent (a JSON body, the page's form, the CLI's file); a ValidationError names the field. */
export function checkPromptVersion(body: unknown): NewPromptVersion {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"prompt": "Answer {{question}} briefly", "config": {"model": "gpt-4o-mini"}}' });
  }
  // First: a value nested too deep would overflow the stack when a refusal's message shows it.
  refuseUnstorableSetting(body);
  const input = decode(body);
  if (Either.isLeft(input)) throw toValidationError(input.left);
  const v = input.right;
  const config = v.config ?? {};
  if (Buffer.byteLength(JSON.stringify(config)) > MAX_CONFIG_BYTES) {
    throw new ValidationError({ field: "config", message: `config must be at most ${MAX_CONFIG_BYTES / 1024} KiB as JSON` });
  }
  return {
    type: typeof v.prompt === "string" ? "text" : "chat",
    content: v.prompt,
    config,
    message: (v.message ?? "").trim(),
    labels: [...new Set(v.labels ?? [])],
  };
}

/** Checks a prompt's name from a URL or a form. */
export function checkPromptName(name: unknown): string {
  if (typeof name !== "string" || !PROMPT_NAME.test(name)) {
    throw new ValidationError({ field: "name", message: `a prompt's name is 1 to ${MAX_PROMPT_NAME} letters, digits, '.', '_' or '-', starting with a letter or digit` });
  }
  return name;
}

/** Checks a label to move; `latest` is refused since it always names the newest version. */
export function checkLabel(label: unknown, field = "label"): string {
  const decoded = Schema.decodeUnknownEither(Label)(label);
  if (Either.isLeft(decoded)) throw toValidationError(decoded.left, field);
  return decoded.right;
}
