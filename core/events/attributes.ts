/**
 * What a client may say about a run on any of its events (docs/API.md, "Tags, metadata, end user, environment,
 * release"): the envelope fields, their bounds, and their effect Schemas (core/events/schema.ts Envelope). An event
 * over a bound is refused, naming the field; the run keeps the union of every event's tags and the latest value of
 * each metadata key, up to its own bounds (core/events/run-attributes.ts).
 */
import { Schema } from "effect";

/** One event's bounds. */
export const MAX_TAGS_PER_EVENT = 50;
export const MAX_TAG_CHARS = 200;
export const MAX_METADATA_KEYS_PER_EVENT = 64;
export const MAX_METADATA_KEY_CHARS = 200;
export const MAX_METADATA_VALUE_CHARS = 1024;
export const MAX_END_USER_CHARS = 200;
export const MAX_ENVIRONMENT_CHARS = 100;
export const MAX_RELEASE_CHARS = 200;
/** A run's bounds: past them, further tags and further new metadata keys are dropped (a documented cut). */
export const MAX_RUN_TAGS = 50;
export const MAX_RUN_METADATA_KEYS = 64;

/** A metadata value as the client sent it: JSON scalars only (the run stores it as JSON text, so the type survives). */
export type MetadataValue = string | number | boolean;

/** The envelope fields of this file, as an event carries them. */
export interface RunAttributes {
  readonly tags?: readonly string[];
  readonly metadata?: Readonly<Record<string, MetadataValue>>;
  readonly end_user?: string;
  readonly environment?: string;
  readonly release?: string;
}

export const isMetadataValue = (v: unknown): v is MetadataValue =>
  typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v)) || (typeof v === "string" && v.length <= MAX_METADATA_VALUE_CHARS);

const text = (max: number) =>
  Schema.String.annotations({ message: () => "must be a string" }).pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
  );

const Tags = Schema.Array(text(MAX_TAG_CHARS))
  .annotations({ message: () => ({ message: "must be an array of strings", override: false }) })
  .pipe(Schema.maxItems(MAX_TAGS_PER_EVENT, { message: () => `must hold at most ${MAX_TAGS_PER_EVENT} tags` }));

const METADATA_VALUE_RULE = `must be a string of at most ${MAX_METADATA_VALUE_CHARS} characters, a finite number or a boolean (not an object, array or null)`;
const MetadataValue = Schema.declare((u: unknown): u is MetadataValue => isMetadataValue(u), {
  message: () => METADATA_VALUE_RULE,
  jsonSchema: { oneOf: [{ type: "string", maxLength: MAX_METADATA_VALUE_CHARS }, { type: "number" }, { type: "boolean" }] },
});

/** Why a metadata key cannot be taken, or undefined when it can. */
const keyRule = (k: string): string | undefined =>
  k.length === 0 ? "a metadata key must not be empty" : k.length > MAX_METADATA_KEY_CHARS ? `a metadata key must be at most ${MAX_METADATA_KEY_CHARS} characters` : undefined;

/** Values are checked key by key, so an error names `metadata.<key>`; then the keys and how many. */
const Metadata = Schema.Record({ key: Schema.String, value: MetadataValue })
  .annotations({ message: () => ({ message: "must be a JSON object", override: false }) })
  .pipe(
    Schema.filter(
      (m) => {
        let n = 0;
        for (const k in m) {
          const why = keyRule(k);
          if (why !== undefined) return { path: [k], message: why };
          n++;
        }
        return n <= MAX_METADATA_KEYS_PER_EVENT || { path: [], message: `must hold at most ${MAX_METADATA_KEYS_PER_EVENT} keys` };
      },
      { jsonSchema: { maxProperties: MAX_METADATA_KEYS_PER_EVENT, propertyNames: { minLength: 1, maxLength: MAX_METADATA_KEY_CHARS } } },
    ),
  );

/** The envelope's fields of this file (spread into core/events/schema.ts Envelope). */
export const RUN_ATTRIBUTE_FIELDS = {
  /** Labels of the run; it keeps the union of every event's. */
  tags: Schema.optional(Tags),
  /** Flat key → string | number | boolean; the run keeps the latest value of each key. */
  metadata: Schema.optional(Metadata),
  /** The agent's own user (not the Runwatch user whose key sent the event). */
  end_user: Schema.optional(text(MAX_END_USER_CHARS)),
  /** production, staging, … */
  environment: Schema.optional(text(MAX_ENVIRONMENT_CHARS)),
  release: Schema.optional(text(MAX_RELEASE_CHARS)),
};

/** Copies the run attributes `from` carries onto `to` (assigned, not spread: no throw-away object per event). */
export function copyRunAttributes(from: RunAttributes, to: { -readonly [K in keyof RunAttributes]: RunAttributes[K] }): void {
  if (from.tags !== undefined) to.tags = from.tags;
  if (from.metadata !== undefined) to.metadata = from.metadata;
  if (from.end_user !== undefined) to.end_user = from.end_user;
  if (from.environment !== undefined) to.environment = from.environment;
  if (from.release !== undefined) to.release = from.release;
}
