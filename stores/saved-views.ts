/**
 * Saved views of the runs list (docs/DASHBOARD.md, Saved views): a project's named filter in its string form
 * (core/runs-filter), the runs table's columns and the order, shared by every member of the project. What a view
 * may hold is checked here (an effect Schema naming the field it refuses); the filter is kept in its canonical form
 * (formatRunsFilter of what it parses to), so two spellings of one filter are one view's URL.
 */
import { randomUUID } from "node:crypto";
import { Either, Schema } from "effect";
import { Conflict, NotFound, ValidationError } from "../core/errors.js";
import { toValidationError } from "../core/events/schema.js";
import { isUuid } from "../core/ids.js";
import type { Sql } from "../core/ports/sql.js";
import { formatRunsFilter, MAX_FILTER_CHARS, parseRunsFilter, parseRunsSort, type RunsSort } from "../core/runs-filter/index.js";

export const MAX_VIEWS_PER_PROJECT = 200;
export const MAX_VIEW_NAME = 100;

/**
 * The runs table's columns a view may choose, in the order the table shows them (status and the run's id always
 * show). `scores` shows the run's score chips, `models` its LLM calls' models as chips, `input` and `output` the previews, `version` the config version.
 */
export const RUN_COLUMNS = [
  "agent", "input", "output", "tags", "started", "duration", "tokens", "cost", "scores",
  "model", "models", "events", "error", "environment", "release", "user", "session", "version",
] as const;
export type RunColumn = (typeof RUN_COLUMNS)[number];
export const DEFAULT_COLUMNS: readonly RunColumn[] = ["agent", "input", "output", "tags", "started", "duration", "tokens", "cost", "scores"];

const Name = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length >= 1 && s.length <= MAX_VIEW_NAME && !/[\u0000-\u001f\u007f]/.test(s) && s.isWellFormed()) ||
    `must be 1 to ${MAX_VIEW_NAME} characters without control characters`),
);
const Column = Schema.Literal(...RUN_COLUMNS).annotations({ message: () => ({ message: `must be one of ${RUN_COLUMNS.join(", ")}`, override: true }) });

/** The body of POST /api/views. */
export const SavedViewInput = Schema.Struct({
  name: Name,
  /** The filter's string form (docs/EXPLORER.md); "" lists every run. */
  filter: Schema.optional(Schema.String.pipe(Schema.maxLength(MAX_FILTER_CHARS))),
  columns: Schema.optional(Schema.Array(Column).pipe(Schema.minItems(1), Schema.maxItems(RUN_COLUMNS.length))),
  sort: Schema.optional(Schema.String.annotations({ description: "start_time, duration, cost, tokens or score.<name>" })),
  order: Schema.optional(Schema.Literal("asc", "desc")),
}).annotations({ identifier: "SavedViewInput" });

export interface SavedView {
  readonly id: string;
  readonly name: string;
  /** The canonical string form of the filter. */
  readonly filter: string;
  readonly columns: readonly RunColumn[];
  readonly sort: RunsSort["field"];
  readonly order: RunsSort["order"];
  /** The member who saved it; null once their account is gone. */
  readonly created_by: number | null;
  readonly created_at: string;
}

/** What a new view holds once checked. */
export type NewSavedView = Omit<SavedView, "id" | "created_by" | "created_at">;

const decode = Schema.decodeUnknownEither(SavedViewInput, { errors: "first", onExcessProperty: "error" });

/** Checks a view as sent (a JSON body or the dashboard's form); a ValidationError names the field. */
export function checkSavedView(body: unknown): NewSavedView {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: 'the body must be a JSON object like {"name": "Failed refunds", "filter": "status:error agent:refund"}' });
  }
  const input = decode(body);
  if (Either.isLeft(input)) throw toValidationError(input.left);
  const v = input.right;
  const filter = formatRunsFilter(parseRunsFilter(v.filter ?? ""));
  const sort = parseRunsSort(v.sort, v.order);
  const columns = RUN_COLUMNS.filter((c) => (v.columns ?? DEFAULT_COLUMNS).includes(c));
  return { name: v.name.trim(), filter, columns, sort: sort.field, order: sort.order };
}

const toView = (r: Record<string, unknown>): SavedView => ({
  id: String(r.id),
  name: String(r.name),
  filter: String(r.filter),
  columns: (r.columns as string[]).filter((c): c is RunColumn => (RUN_COLUMNS as readonly string[]).includes(c)),
  sort: String(r.sort) as RunsSort["field"],
  order: r.sort_order === "asc" ? "asc" : "desc",
  created_by: r.created_by === null ? null : Number(r.created_by),
  created_at: new Date(r.created_at as string).toISOString(),
});

const COLUMNS = "id, name, filter, columns, sort, sort_order, created_by, created_at";

/**
 * Saves a view of the project; 409 `view_exists` naming `name` when the project has a view of that name, 422 past
 * MAX_VIEWS_PER_PROJECT. The project's row lock orders concurrent saves, so none passes a count another changes.
 */
export async function insertSavedView(sql: Sql, projectId: number, userId: number, view: NewSavedView): Promise<SavedView> {
  const id = randomUUID();
  return sql.transaction(async (tx) => {
    await tx.query("SELECT id FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM saved_views WHERE project_id = $1", [projectId]);
    if (Number(count?.n ?? 0) >= MAX_VIEWS_PER_PROJECT) {
      throw new ValidationError({ message: `a project may have at most ${MAX_VIEWS_PER_PROJECT} saved views: delete one first` });
    }
    const [taken] = await tx.query("SELECT 1 FROM saved_views WHERE project_id = $1 AND name = $2", [projectId, view.name]);
    if (taken) throw new Conflict({ code: "view_exists", field: "name", message: `a view named ${JSON.stringify(view.name)} exists: pick another name or delete it first` });
    const [row] = await tx.query<Record<string, unknown>>(
      `INSERT INTO saved_views (id, project_id, name, filter, columns, sort, sort_order, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [id, projectId, view.name, view.filter, view.columns, view.sort, view.order, userId],
    );
    return toView(row!);
  });
}

/** The project's views by name (at most MAX_VIEWS_PER_PROJECT). */
export async function listSavedViews(sql: Sql, projectId: number): Promise<SavedView[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${COLUMNS} FROM saved_views WHERE project_id = $1 ORDER BY lower(name), name LIMIT ${MAX_VIEWS_PER_PROJECT}`, [projectId]);
  return rows.map(toView);
}

/** Deletes one of the project's views; 404 when the project has none with this id. */
export async function deleteSavedView(sql: Sql, projectId: number, id: string): Promise<void> {
  const gone = isUuid(id) ? await sql.query("DELETE FROM saved_views WHERE id = $1 AND project_id = $2 RETURNING id", [id.toLowerCase(), projectId]) : [];
  if (gone.length === 0) throw new NotFound({ resource: "view", message: `no saved view ${JSON.stringify(id)} in this project` });
}

export const savedViewJson = (v: SavedView) => ({
  id: v.id, name: v.name, filter: v.filter, columns: v.columns, sort: v.sort, order: v.order, created_by: v.created_by, created_at: v.created_at,
});
