/**
 * Sessions API (Bearer key, the read API's rate-limit bucket; docs/API.md, Sessions):
 *   GET /api/sessions?agent_name&since&cursor&limit → {sessions: [{session_id, run_count, first_started_at,
 *       last_activity_at, total_tokens, total_cost_usd, last_status, agent_names}], next_cursor}
 *   GET /api/sessions/{session_id} → {session: {…}, runs: [… in start order]}; 404 when the key's owner has none.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound } from "../../core/errors.js";
import { runJson } from "../../core/events/run-json.js";
import { getSession, listSessions, type SessionFilter } from "../../stores/runs/agent-sessions.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer, sinceParam, stringParam } from "../api/read-api.js";
import { mountApi } from "../route-table.js";

function parseSessionFilter(ctx: Context): SessionFilter {
  const filter = { agent_name: stringParam(ctx, "agent_name"), since: sinceParam(ctx), cursor: stringParam(ctx, "cursor"), limit: intParam(ctx, "limit", 1, 500) };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as SessionFilter;
}

export function registerSessionsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  mountApi(router, deps, authorize, {
    read: { "GET /api/sessions": getSessions, "GET /api/sessions/:session_id": getOneSession },
  });
}

async function getSessions(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  ctx.set("Cache-Control", "no-store");
  ctx.body = await listSessions(deps.ports.clickhouse, p.projectId, parseSessionFilter(ctx));
}

async function getOneSession(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const id = ctx.params.session_id!;
  const found = await getSession(deps.ports.clickhouse, p.projectId, id);
  if (!found) throw new NotFound({ resource: "session", message: `session ${JSON.stringify(id)} not found` });
  ctx.set("Cache-Control", "no-store");
  ctx.body = { session: found.session, runs: found.runs.map(runJson) };
}
