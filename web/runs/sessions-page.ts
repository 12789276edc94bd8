/**
 * The sessions pages (docs/DASHBOARD.md, Sessions):
 *   GET /sessions?agent&cursor        the user's sessions, most recently active first
 *   GET /sessions/:id                 one session: each turn (run) in start order with what it was asked and
 *                                     answered, linked to its run; `?fragment=live` returns the turns only, which
 *                                     web/static/session.js re-fetches when a run of this session changes.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { ValidationError } from "../../core/errors.js";
import { getSession, listSessions, turnContents } from "../../stores/runs/agent-sessions.js";
import { queryParam, renderFragment, renderPage } from "../common/render.js";
import { agentNames } from "../../stores/runs/run-stats.js";
import { mountPages } from "../route-table.js";

export function registerSessionsPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /sessions": sessionsPage, "GET /sessions/:id": sessionPage },
  });
}

/** GET /sessions: a stale or hand-edited cursor starts again from the first page. */
async function sessionsPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const agent = queryParam(ctx, "agent")?.slice(0, 200) || undefined;
  const cursor = queryParam(ctx, "cursor");
  let page;
  try {
    page = await listSessions(deps.ports.clickhouse, project.id, { ...(agent ? { agent_name: agent } : {}), ...(cursor ? { cursor } : {}) });
  } catch (err) {
    if (err instanceof ValidationError && cursor) return ctx.redirect(agent ? `/sessions?agent=${encodeURIComponent(agent)}` : "/sessions");
    throw err;
  }
  const next = page.next_cursor ? `/sessions?${new URLSearchParams({ ...(agent ? { agent } : {}), cursor: page.next_cursor })}` : null;
  renderPage(ctx, "sessions.njk", {
    title: "Sessions", sessions: page.sessions, agent, agent_names: await agentNames(deps.ports.clickhouse, project.id), next_url: next, older: Boolean(cursor),
  });
}

/** GET /sessions/:id, or its turns alone (`?fragment=live`). */
async function sessionPage(ctx: Context, deps: WebDeps): Promise<void> {
  const project = projectOfRequest(ctx);
  const id = String(ctx.params.id ?? "");
  const found = await getSession(deps.ports.clickhouse, project.id, id);
  if (!found) {
    return renderPage(ctx, "error.njk", { title: "Session not found", heading: "Session not found", message: `There is no session “${id}” in your account.` }, 404);
  }
  const contents = await turnContents(deps.ports.clickhouse, project.id, found.runs.map((r) => r.run_id));
  const turns = found.runs.map((run) => ({ run, ...(contents.get(run.run_id.toLowerCase()) ?? { input: undefined, output: undefined }) }));
  const vars = { title: `Session ${id}`, session: found.session, turns };
  if (ctx.query.fragment === "live") return renderFragment(ctx, "_session_turns.njk", vars);
  renderPage(ctx, "session.njk", vars);
}
