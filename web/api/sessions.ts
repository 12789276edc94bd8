/**
 * Sessions API (Bearer key, the read API's rate-limit bucket; docs/API.md, Sessions):
 *   GET /api/sessions?agent_name&since&cursor&limit → {sessions: [{session_id, run_count, first_started_at,
 *       last_activity_at, total_tokens, total_cost_usd, last_status, agent_names}], next_cursor}
 *   GET /api/sessions/{session_id} → {session: {…}, runs: [… in start order]}; 404 when the key's owner has none.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { getSession, listSessions, type SessionFilter } from "../../core/clickhouse/agent-sessions.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { enforceRateLimit } from "../middleware/rate-limit.js";
import { runJson } from "./run-json.js";

function param(ctx: Context, name: string): string | undefined {
  const raw = ctx.query[name];
  if (raw === undefined || raw === "") return undefined;
  if (typeof raw !== "string") throw new ValidationError({ message: `${name} may be given once`, field: name });
  return raw;
}

function parseSessionFilter(ctx: Context): SessionFilter {
  const since = param(ctx, "since");
  if (since !== undefined && Number.isNaN(Date.parse(since))) {
    throw new ValidationError({ message: "since must be an ISO 8601 timestamp, e.g. 2026-11-23T00:00:00Z", field: "since" });
  }
  const limitRaw = param(ctx, "limit");
  const limit = limitRaw === undefined ? undefined : Number(limitRaw);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > 500)) {
    throw new ValidationError({ message: "limit must be an integer from 1 to 500", field: "limit" });
  }
  const filter = { agent_name: param(ctx, "agent_name"), since: since === undefined ? undefined : new Date(since).toISOString(), cursor: param(ctx, "cursor"), limit };
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as SessionFilter;
}

export function registerSessionsApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = async (ctx: Context) => {
    const p = await auth.authenticate(ctx.req.headers.authorization, ctx.ip);
    await enforceRateLimit(ctx, deps.ports.limiter, `read:${p.keyId}`, deps.logger);
    return p;
  };

  router.get("/api/sessions", async (ctx) => {
    const p = await authorize(ctx);
    ctx.set("Cache-Control", "no-store");
    ctx.body = await listSessions(deps.ports.clickhouse, p.userId, parseSessionFilter(ctx));
  });

  router.get("/api/sessions/:session_id", async (ctx) => {
    const p = await authorize(ctx);
    const id = ctx.params.session_id!;
    const found = await getSession(deps.ports.clickhouse, p.userId, id);
    if (!found) throw new NotFound({ resource: "session", message: `session ${JSON.stringify(id)} not found` });
    ctx.set("Cache-Control", "no-store");
    ctx.body = { session: found.session, runs: found.runs.map(runJson) };
  });
}
