/**
 * The /query page (docs/DASHBOARD.md, Query) and its saved queries (stores/saved-queries.ts):
 *   GET  /query?saved={id}&sql=…&p.<name>=…&max_rows=…   the editor with the schema and the project's saved queries
 *        beside it; a saved query, the SQL of a shared link or both (the link's SQL over the saved one's), run on open
 *   POST /query/saved                the editor's SQL, parameters and a name: a new saved query → its page
 *   POST /query/saved/:id            the same over an existing one (its name, description, SQL and parameters)
 *   POST /query/saved/:id/rename     only its name
 *   POST /query/saved/:id/delete     → the empty editor
 * Running, the results and the downloads are the browser's (web/static/query.js, over POST /query/run of
 * query-api.ts and POST /query/export of query-export-api.ts). A refused save (a taken name, SQL past its bound) shows the page again with the editor as typed
 * and the message by the form.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import {
  checkQueryName, checkSavedQuery, deleteSavedQuery, getSavedQuery, insertSavedQuery, listSavedQueries, PARAM_NAME,
  updateSavedQuery, type SavedQuery,
} from "../../stores/saved-queries.js";
import { projectOfRequest } from "../auth/project.js";
import { renderPage } from "../common/render.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { formAction, readForm, redirectAfterPost, type Refusal } from "../forms.js";
import { mountPages } from "../route-table.js";
import { DEFAULT_MAX_ROWS, MAX_ROWS, MAX_SQL_CHARS, QUERY_TABLES } from "../../query/index.js";

/** What the editor holds: from the URL (a shared link, a saved query) or a posted form. */
interface EditorState {
  readonly sql: string;
  readonly params: readonly { name: string; value: string }[];
  readonly max_rows: number;
}

const EXAMPLE_SQL = "SELECT agent_name, count() AS run_count, sum(cost_usd) AS cost FROM runs GROUP BY agent_name ORDER BY cost DESC";

export function registerQueryPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /query": queryPage },
    edit_queries: {
      "POST /query/saved": saveAsNew,
      "POST /query/saved/:id": saveOver,
      "POST /query/saved/:id/rename": rename,
      "POST /query/saved/:id/delete": remove,
    },
  });
}

const maxRowsOf = (raw: string | undefined): number => {
  const n = Number(raw);
  return raw !== undefined && Number.isInteger(n) && n >= 1 && n <= MAX_ROWS ? n : DEFAULT_MAX_ROWS;
};

/** The parameters as the page's rows: a value that is not text (a number, an array) as its JSON. */
const paramList = (params: Readonly<Record<string, unknown>>) =>
  Object.entries(params).map(([name, value]) => ({ name, value: typeof value === "string" ? value : JSON.stringify(value) }));

/** GET /query: a saved query (404 when the project has none with the id), overridden by the link's own SQL and parameters. */
async function queryPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const one = (name: string) => { const v = ctx.query[name]; return Array.isArray(v) ? v[0] : v; };
  const savedId = one("saved");
  const saved = savedId ? await getSavedQuery(deps.ports.sql, project.id, savedId) : undefined;
  const linked = Object.entries(ctx.query).filter(([k]) => k.startsWith("p.") && PARAM_NAME.test(k.slice(2)))
    .map(([k, v]) => ({ name: k.slice(2), value: String(Array.isArray(v) ? v[0] : v ?? "") }));
  const sql = one("sql") ?? saved?.sql ?? "";
  const state: EditorState = {
    // A link's SQL past what a query may be is shown cut, and refused when it runs: nothing longer reaches the page.
    sql: sql.slice(0, MAX_SQL_CHARS + 1),
    params: linked.length ? linked : paramList(saved?.params ?? {}),
    max_rows: maxRowsOf(one("max_rows")),
  };
  await renderQueryPage(ctx, deps, state, saved, { autorun: state.sql.trim() !== "" });
}

/** The page, with `extra` (a refused save's message and field, the name and description as typed). */
async function renderQueryPage(ctx: Context, deps: WebDeps, state: EditorState, saved: SavedQuery | undefined, extra: Record<string, unknown> = {}, status = 200): Promise<void> {
  const project = projectOfRequest(ctx);
  const savedQueries = await listSavedQueries(deps.ports.sql, project.id);
  renderPage(ctx, "query.njk", {
    title: saved ? `${saved.name} · Query` : "Query",
    state: { ...state, params_json: JSON.stringify(Object.fromEntries(state.params.map((p) => [p.name, p.value]))) },
    saved,
    saved_queries: savedQueries,
    schema: { tables: QUERY_TABLES },
    autorun: false,
    save_name: saved?.name ?? "",
    save_description: saved?.description ?? "",
    max_sql: MAX_SQL_CHARS,
    max_rows_limit: MAX_ROWS,
    default_max_rows: DEFAULT_MAX_ROWS,
    example_sql: EXAMPLE_SQL,
    ...extra,
  }, status);
}

/** The editor as posted: its SQL, its parameters (the JSON the page's script keeps in `params`), max rows. */
function postedState(form: Record<string, string>): EditorState & { paramsObject: Record<string, string> } {
  let parsed: unknown = {};
  if (form.params?.trim()) {
    try {
      parsed = JSON.parse(form.params);
    } catch {
      throw new ValidationError({ field: "params", message: "params must be a JSON object of names and values" });
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ValidationError({ field: "params", message: "params must be a JSON object of names and values" });
  // A value is what a query parameter can be (query/params.ts): a string, number or boolean, or a list of them; so
  // writing it back as text is bounded (a value nested past what JSON.stringify survives never reaches it).
  const scalar = (v: unknown) => typeof v === "string" || typeof v === "number" || typeof v === "boolean";
  for (const [k, v] of Object.entries(parsed)) {
    if (!scalar(v) && !(Array.isArray(v) && v.every(scalar))) {
      throw new ValidationError({ field: "params", message: `params: ${k.slice(0, 64)} must be a string, a number, a boolean or a list of them` });
    }
  }
  const paramsObject = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
  return { sql: form.sql ?? "", params: paramList(paramsObject), max_rows: maxRowsOf(form.max_rows), paramsObject };
}

/** Runs a save from the form: `act` on success redirects; a refusal shows the page again as typed. */
async function saveFrom(ctx: Context, deps: WebDeps, saved: SavedQuery | undefined, act: (form: Record<string, string>, state: ReturnType<typeof postedState>) => Promise<SavedQuery>): Promise<void> {
  const form = await readForm(ctx);
  const project = projectOfRequest(ctx);
  let state: EditorState = { sql: form.sql ?? "", params: [], max_rows: maxRowsOf(form.max_rows) };
  await formAction({
    refuses: ["ValidationError", "Conflict"],
    field: "name",
    run: async () => {
      const posted = postedState(form);
      state = posted;
      const done = await act(form, posted);
      redirectAfterPost(ctx, `/p/${project.slug}/query?saved=${done.id}${posted.max_rows === DEFAULT_MAX_ROWS ? "" : `&max_rows=${posted.max_rows}`}`);
    },
    refused: (r: Refusal) => renderQueryPage(ctx, deps, state, saved,
      { save_error: r.message, save_field: r.field, save_name: form.name ?? "", save_description: form.description ?? "" }, r.status),
  });
}

const userOf = (ctx: Context) => (ctx.state.user as SessionUser).id;

/** POST /query/saved: a new saved query of the editor's SQL and parameters. */
async function saveAsNew(ctx: Context, deps: WebDeps): Promise<void> {
  await saveFrom(ctx, deps, undefined, (form, s) => {
    const q = checkSavedQuery({ name: form.name ?? "", description: form.description ?? "", sql: s.sql, params: s.paramsObject });
    return insertSavedQuery(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), q);
  });
}

/** POST /query/saved/:id: the editor over an existing saved query (404 when the project has none with the id). */
async function saveOver(ctx: Context, deps: WebDeps): Promise<void> {
  const before = await getSavedQuery(deps.ports.sql, projectOfRequest(ctx).id, ctx.params.id!);
  await saveFrom(ctx, deps, before, (form, s) => {
    const q = checkSavedQuery({ name: form.name ?? "", description: form.description ?? "", sql: s.sql, params: s.paramsObject });
    return updateSavedQuery(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), before.id, q);
  });
}

/** POST /query/saved/:id/rename: only the name; the SQL as saved. */
async function rename(ctx: Context, deps: WebDeps): Promise<void> {
  const before = await getSavedQuery(deps.ports.sql, projectOfRequest(ctx).id, ctx.params.id!);
  await saveFrom(ctx, deps, before, (form) =>
    updateSavedQuery(deps.ports.sql, projectOfRequest(ctx).id, userOf(ctx), before.id, { name: checkQueryName(form.name ?? "") }));
}

/** POST /query/saved/:id/delete → the empty editor. */
async function remove(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  await deleteSavedQuery(deps.ports.sql, project.id, userOf(ctx), ctx.params.id!);
  redirectAfterPost(ctx, `/p/${project.slug}/query`);
}
