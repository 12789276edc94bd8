/**
 * The OpenAPI 3.1 document of the public API (GET /api/openapi.json), generated: every request and response body is
 * an effect Schema (the request ones are those the handlers decode with) turned into JSON Schema by effect's
 * JSONSchema.fromAST; this file only says which path, method, parameters and statuses use which Schema.
 */
import { JSONSchema } from "effect";
import { EVENT_TYPES, PayloadSchemas } from "../../../core/events/schema.js";
import type { Body, Operation } from "./operation.js";
import * as R from "./schemas.js";

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: "The body could not be read (not JSON, not protobuf).",
  401: "No API key, or one that is unknown, revoked or expired.",
  403: "`insufficient_scope`: the key's scope is `ingest`, and this route reads; `forbidden`: the role of the key's creator in its project (as it is now) does not allow this (docs/TEAMS.md).",
  404: "Not found in this key's project (another project's run or dataset is not found either).",
  409: "Conflict: no open question, a newer question, or already answered; a dataset name already taken.",
  413: "The body is over the size limit.",
  415: "Unsupported content type.",
  422: "A field is invalid: `error.field` names it.",
  429: "Rate limited: see the Retry-After header.",
  503: "Temporarily unavailable (the event log is full or unreachable): retry after Retry-After.",
};

export type Operations = Readonly<Record<string, Readonly<Record<string, Operation>>>>;

/** Builds the document; its component schemas are collected from every Schema the operations name. */
/** `operations`: every feature's paths (web/features.ts collects them from the features' indexes). */
export function buildOpenApi(opts: { serverUrl?: string; version: string; operations: Operations }): Json {
  const defs: Record<string, JSONSchema.JsonSchema7> = {};
  const schemaOf = (s: Body): Json =>
    JSONSchema.fromAST(s.ast, { definitions: defs, definitionPath: "#/components/schemas/", target: "openApi3.1", additionalPropertiesStrategy: "allow" }) as unknown as Json;
  const json = (s: Body) => ({ "application/json": { schema: schemaOf(s) } });

  const paths: Json = {};
  for (const [path, methods] of Object.entries(opts.operations)) {
    const item: Json = {};
    for (const [method, op] of Object.entries(methods)) {
      const responses: Json = {};
      for (const [status, body] of Object.entries(op.ok)) {
        responses[status] = body ? { description: body.ast.annotations[Symbol.for("effect/annotation/Description")] ?? "OK", content: json(body) }
          : op.okTypes && status.startsWith("2") && status !== "204" ? { description: "OK", content: Object.fromEntries(op.okTypes.map((t) => [t, { schema: { type: "string" } }])) }
          : { description: status === "304" ? "Not modified" : "No content" };
      }
      for (const status of op.errors) {
        responses[String(status)] = { description: ERROR_TEXT[status] ?? "Error", content: json(op.errorBody ?? R.ErrorBody) };
      }
      item[method] = {
        tags: [op.tag],
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        operationId: `${method}${path.replace(/[{}]/g, "").replace(/[/_-](\w)/g, (_, c: string) => c.toUpperCase())}`,
        ...(op.params ? { parameters: op.params.map((p) => ({ name: p.name, in: p.in, required: p.required ?? p.in === "path", ...(p.description ? { description: p.description } : {}), schema: schemaOf(p.schema) })) } : {}),
        ...(op.body
          ? { requestBody: { required: true, content: Object.fromEntries((op.bodyTypes ?? ["application/json"]).map((t) => [t, t === "application/json" ? { schema: schemaOf(op.body!) } : { schema: { type: "string", contentMediaType: t } }])) } }
          : {}),
        responses,
        ...(op.sessionAuth ? { security: [{ session: [] }] } : {}),
      };
    }
    paths[path] = item;
  }

  // An event's payload depends on its event_type: each type's payload Schema is a component, the envelope lists them.
  const payloads = Object.entries(PayloadSchemas).map(([type, s]) => schemaOf(s.annotations({ identifier: `${type.replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase())}Payload` })));
  const event = defs.Event as unknown as Json;
  (event.properties as Json).payload = { description: `Fields by event_type (${EVENT_TYPES.join(", ")}).`, anyOf: payloads };

  return tidy({
    openapi: "3.1.0",
    info: {
      title: "Runwatch API",
      version: opts.version,
      description: "Observability for AI agent runs: ingest events or OpenTelemetry traces, read runs, spans, sessions and scores. docs/API.md explains every field. Objects may gain fields in later versions; unknown request fields are ignored.",
      license: { name: "MIT", identifier: "MIT" },
    },
    ...(opts.serverUrl ? { servers: [{ url: opts.serverUrl }] } : {}),
    security: [{ bearer: [] }],
    paths,
    components: {
      schemas: defs,
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "An API key (Settings → API keys): `Authorization: Bearer <64 hex>`." },
        session: { type: "apiKey", in: "cookie", name: "runwatch.sid", description: "The dashboard's login session." },
      },
    },
  }) as Json;
}

/**
 * effect marks `unknown` and `{}` with `$id: "/schemas/unknown"` (and the like) wherever they occur; repeated `$id`s
 * make one document several schema resources of the same id, which validators refuse. The titles stay.
 * `additionalProperties: true` is JSON Schema's default (bodies may gain fields; requests' unknown fields are
 * ignored): said once here rather than on every object, where reference pages invent "additionalProp1" examples.
 */
function tidy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(tidy);
  if (v === null || typeof v !== "object") return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([k, x]) => k !== "$id" && !(k === "additionalProperties" && x === true))
      .map(([k, x]) => [k, tidy(x)]),
  );
}
