/**
 * Saved queries of the /query page (docs/DASHBOARD.md, Query; docs/API.md, Saved queries): a project's named
 * read-only SQL, its parameters and a description, shared by every member of the project. What a saved query may
 * hold is checked here (an effect Schema naming the field it refuses); the SQL itself is checked only when it runs,
 * by the query sandbox, since a draft that does not run yet is still worth keeping. Every change is written to the
 * project's audit log in the transaction that makes it.
 */
import { randomUUID } from "node:crypto";
import { Either, Schema } from "effect";
import { Conflict, NotFound, ValidationError } from "../core/errors.js";
import { toValidationError } from "../core/events/schema.js";
import { isUuid } from "../core/ids.js";
import type { Sql } from "../core/ports/sql.js";
import { audit } from "./accounts/projects.js";

export const MAX_QUERIES_PER_PROJECT = 200;
export const MAX_QUERY_NAME = 100;
export const MAX_QUERY_DESCRIPTION = 1000;
export const MAX_SAVED_SQL = 20_000;
export const MAX_QUERY_PARAMS = 50;
export const MAX_PARAM_VALUE = 2000;
export const MAX_PARAM_ITEMS = 1000;
/** A parameter's name as ClickHouse's `{name:Type}` placeholders spell it. */
export const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** Control characters a field refuses: none in a name; tabs and newlines in a description and in SQL. */
const CONTROLS = /[\u0000-\u001f\u007f]/;
const CONTROLS_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const clean = (s: string, controls: RegExp) => !controls.test(s) && s.isWellFormed();

const Name = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length >= 1 && s.length <= MAX_QUERY_NAME && clean(s, CONTROLS)) ||
    `must be 1 to ${MAX_QUERY_NAME} characters without control characters`),
);
const Description = Schema.String.pipe(
  Schema.filter((s) => (s.length <= MAX_QUERY_DESCRIPTION && clean(s, CONTROLS_BUT_LINES)) ||
    `must be at most ${MAX_QUERY_DESCRIPTION} characters, without control characters but newlines and tabs`),
);
const SqlText = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length >= 1 && s.length <= MAX_SAVED_SQL && clean(s, CONTROLS_BUT_LINES)) ||
    `must be 1 to ${MAX_SAVED_SQL.toLocaleString("en")} characters without control characters but newlines and tabs`),
);
const Scalar = Schema.Union(
  Schema.String.pipe(Schema.filter((s) => (s.length <= MAX_PARAM_VALUE && !s.includes("\u0000") && s.isWellFormed()) || `must be at most ${MAX_PARAM_VALUE} characters without U+0000`)),
  Schema.Number.pipe(Schema.filter((n) => Number.isFinite(n) || "must be a finite number")),
  Schema.Boolean,
);
/** What POST /api/query takes for a placeholder: a string, number or boolean, or an array of them (an Array(T) one). */
const ParamValue = Schema.Union(Scalar, Schema.Array(Scalar).pipe(Schema.maxItems(MAX_PARAM_ITEMS)));
const Params = Schema.Record({ key: Schema.String, value: ParamValue }).pipe(Schema.filter((p) => {
  const names = Object.keys(p);
  if (names.length > MAX_QUERY_PARAMS) return `at most ${MAX_QUERY_PARAMS} parameters`;
  const bad = names.find((n) => !PARAM_NAME.test(n));
  return bad === undefined || { path: [bad], message: "a parameter's name is a letter or _ then letters, digits or _ (at most 64 characters)" };
}));

/** The body of POST /api/queries and PUT /api/queries/{id}. */
export const SavedQueryInput = Schema.Struct({
  name: Name,
  sql: SqlText,
  params: Schema.optional(Params.annotations({ description: "Values of the query's {name:Type} placeholders, by name." })),
  description: Schema.optional(Description),
}).annotations({ identifier: "SavedQueryInput" });

type ParamScalar = string | number | boolean;
export type QueryParams = Readonly<Record<string, ParamScalar | readonly ParamScalar[]>>;

export interface SavedQuery {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly sql: string;
  readonly params: QueryParams;
  /** The member who saved it first, and their name; null once their account is gone. */
  readonly created_by: number | null;
  readonly author: string | null;
  /** The member who changed it last; null once their account is gone. */
  readonly updated_by: number | null;
  readonly created_at: string;
  readonly updated_at: string;
}

/** What a saved query holds once checked. */
export interface NewSavedQuery {
  readonly name: string;
  readonly description: string;
  readonly sql: string;
  readonly params: QueryParams;
}

const decode = Schema.decodeUnknownEither(SavedQueryInput, { errors: "first", onExcessProperty: "error" });

/** Checks a saved query as sent (a JSON body or the page's form); a ValidationError names the field. */
export function checkSavedQuery(body: unknown): NewSavedQuery {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"name": "Cost per agent", "sql": "SELECT agent_name, sum(cost_usd) FROM runs GROUP BY agent_name"}' });
  }
  const input = decode(body);
  if (Either.isLeft(input)) throw toValidationError(input.left);
  const q = input.right;
  return { name: q.name.trim(), description: (q.description ?? "").trim(), sql: q.sql, params: { ...(q.params ?? {}) } };
}

/** Checks a new name alone (renaming from the page). */
export function checkQueryName(name: unknown): string {
  const decoded = Schema.decodeUnknownEither(Name)(name);
  if (Either.isLeft(decoded)) throw toValidationError(decoded.left, "name");
  return decoded.right.trim();
}

const paramsOf = (v: unknown): QueryParams => {
  const p = typeof v === "string" ? JSON.parse(v) : v;
  return p && typeof p === "object" && !Array.isArray(p) ? (p as QueryParams) : {};
};
const idOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v));

const toQuery = (r: Record<string, unknown>): SavedQuery => ({
  id: String(r.id),
  name: String(r.name),
  description: String(r.description),
  sql: String(r.sql_text),
  params: paramsOf(r.params),
  created_by: idOrNull(r.created_by),
  author: r.author === null || r.author === undefined ? null : String(r.author),
  updated_by: idOrNull(r.updated_by),
  created_at: new Date(r.created_at as string).toISOString(),
  updated_at: new Date(r.updated_at as string).toISOString(),
});

const SELECT = `SELECT q.id, q.name, q.description, q.sql_text, q.params, q.created_by, u.name AS author, q.updated_by, q.created_at, q.updated_at
  FROM saved_queries q LEFT JOIN users u ON u.id = q.created_by`;

const taken = (name: string) =>
  new Conflict({ code: "query_exists", field: "name", message: `a saved query named ${JSON.stringify(name)} exists: pick another name or open that one` });
const notFound = (id: string) => new NotFound({ resource: "query", message: `no saved query ${JSON.stringify(id)} in this project` });

async function byId(tx: Sql, projectId: number, id: string): Promise<SavedQuery | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await tx.query<Record<string, unknown>>(`${SELECT} WHERE q.id = $1 AND q.project_id = $2`, [id.toLowerCase(), projectId]);
  return row ? toQuery(row) : undefined;
}

/**
 * Saves a new query of the project; 409 `query_exists` naming `name` when the project has one of that name, 422 past
 * MAX_QUERIES_PER_PROJECT. The project's row lock orders concurrent saves, so none passes a count another changes.
 */
export async function insertSavedQuery(sql: Sql, projectId: number, userId: number, q: NewSavedQuery): Promise<SavedQuery> {
  const id = randomUUID();
  return sql.transaction(async (tx) => {
    await tx.query("SELECT id FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM saved_queries WHERE project_id = $1", [projectId]);
    if (Number(count?.n ?? 0) >= MAX_QUERIES_PER_PROJECT) {
      throw new ValidationError({ message: `a project may have at most ${MAX_QUERIES_PER_PROJECT} saved queries: delete one first` });
    }
    if ((await tx.query("SELECT 1 FROM saved_queries WHERE project_id = $1 AND name = $2", [projectId, q.name])).length) throw taken(q.name);
    await tx.query(
      "INSERT INTO saved_queries (id, project_id, name, description, sql_text, params, created_by, updated_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $7)",
      [id, projectId, q.name, q.description, q.sql, JSON.stringify(q.params), userId],
    );
    await audit(tx, projectId, userId, "saved_query.create", q.name, { query_id: id });
    return (await byId(tx, projectId, id))!;
  });
}

/** The project's saved queries by name (at most MAX_QUERIES_PER_PROJECT). */
export async function listSavedQueries(sql: Sql, projectId: number): Promise<SavedQuery[]> {
  const rows = await sql.query<Record<string, unknown>>(`${SELECT} WHERE q.project_id = $1 ORDER BY lower(q.name), q.name LIMIT ${MAX_QUERIES_PER_PROJECT}`, [projectId]);
  return rows.map(toQuery);
}

/** One of the project's saved queries; 404 when the project has none with this id (another project's included). */
export async function getSavedQuery(sql: Sql, projectId: number, id: string): Promise<SavedQuery> {
  const found = await byId(sql, projectId, id);
  if (!found) throw notFound(id);
  return found;
}

/**
 * Changes one of the project's saved queries: what `change` names, the rest kept (a rename names only `name`).
 * 404 when the project has none with this id; 409 `query_exists` when another of its queries has the new name.
 */
export async function updateSavedQuery(sql: Sql, projectId: number, userId: number, id: string, change: Partial<NewSavedQuery>): Promise<SavedQuery> {
  return sql.transaction(async (tx) => {
    if (!isUuid(id)) throw notFound(id);
    const [locked] = await tx.query<{ name: string }>("SELECT name FROM saved_queries WHERE id = $1 AND project_id = $2 FOR UPDATE", [id.toLowerCase(), projectId]);
    if (!locked) throw notFound(id);
    const before = (await byId(tx, projectId, id))!;
    const next = { name: change.name ?? before.name, description: change.description ?? before.description, sql: change.sql ?? before.sql, params: change.params ?? before.params };
    if (next.name !== before.name && (await tx.query("SELECT 1 FROM saved_queries WHERE project_id = $1 AND name = $2", [projectId, next.name])).length) throw taken(next.name);
    await tx.query(
      "UPDATE saved_queries SET name = $3, description = $4, sql_text = $5, params = $6, updated_by = $7, updated_at = now() WHERE id = $1 AND project_id = $2",
      [before.id, projectId, next.name, next.description, next.sql, JSON.stringify(next.params), userId],
    );
    const renamed = next.name !== before.name;
    const onlyName = Object.keys(change).every((k) => k === "name");
    await audit(tx, projectId, userId, onlyName && renamed ? "saved_query.rename" : "saved_query.update", next.name,
      { query_id: before.id, ...(renamed ? { from: before.name } : {}) });
    return (await byId(tx, projectId, id))!;
  });
}

/** Deletes one of the project's saved queries; 404 when the project has none with this id. */
export async function deleteSavedQuery(sql: Sql, projectId: number, userId: number, id: string): Promise<void> {
  await sql.transaction(async (tx) => {
    const gone = isUuid(id)
      ? await tx.query<{ name: string }>("DELETE FROM saved_queries WHERE id = $1 AND project_id = $2 RETURNING name", [id.toLowerCase(), projectId])
      : [];
    if (gone.length === 0) throw notFound(id);
    await audit(tx, projectId, userId, "saved_query.delete", gone[0]!.name, { query_id: id.toLowerCase() });
  });
}

export const savedQueryJson = (q: SavedQuery) => ({
  id: q.id, name: q.name, description: q.description, sql: q.sql, params: q.params,
  created_by: q.created_by, author: q.author, updated_by: q.updated_by, created_at: q.created_at, updated_at: q.updated_at,
});
