/** How web/api/openapi/document.ts describes one operation: its parameters, bodies and statuses, as effect Schemas. */
import { Schema } from "effect";
import { MAX_SDK_RUN_ID_CHARS } from "../../../core/events/schema.js";

export type Body = Schema.Schema.Any;

export interface Param {
  readonly name: string;
  readonly in: "query" | "path" | "header";
  readonly schema: Body;
  readonly description?: string;
  readonly required?: boolean;
}

export interface Operation {
  readonly summary: string;
  readonly description?: string;
  readonly tag: string;
  readonly params?: readonly Param[];
  readonly body?: Body;
  /** Extra request content types (OTLP takes protobuf too). */
  readonly bodyTypes?: readonly string[];
  /** status → a Schema (JSON body), or null (no body, or a body of `okTypes`) */
  readonly ok: Readonly<Record<number, Body | null>>;
  /** The content types of an ok answer that is not JSON (an export's file), for its statuses whose Schema is null. */
  readonly okTypes?: readonly string[];
  /** Error statuses, answered with `errorBody` (default: the Error body). */
  readonly errors: readonly number[];
  readonly errorBody?: Body;
  /** true: the dashboard's login session instead of the bearer key. */
  readonly sessionAuth?: boolean;
}

export const Limit = (max: number, dflt: number) => Schema.Int.pipe(Schema.between(1, max)).annotations({ description: `Default ${dflt}.` });
export const q = (name: string, schema: Body, description?: string): Param => ({ name, in: "query", schema, description });

/** Parameters many paths share. */
export const SdkRunId: Param = { name: "sdk_run_id", in: "path", required: true, schema: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MAX_SDK_RUN_ID_CHARS)), description: "The run's id as the client named it." };
export const Since = q("since", Schema.String.annotations({ format: "date-time" }), "ISO 8601: activity at or after it.");
export const Cursor = q("cursor", Schema.String, "`next_cursor` of the previous page.");
export const After = q("after", Schema.String, "`next_after` of the previous page.");
