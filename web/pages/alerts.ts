/**
 * GET /alerts: the user's alert rules (Postgres `alert_rules`). Read-only here; the alerts feature adds
 * create/edit/delete routes beside this one and reuses listAlertRules and alerts.njk.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { SessionUser, WebDeps } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { renderPage } from "./render.js";

export const MAX_RULES = 500;

export interface AlertRuleRow {
  id: number;
  name: string;
  trigger_type: string;
  channel: string;
  target: string;
  config: Record<string, unknown>;
  enabled: boolean;
  created_at: string | null;
}

export async function listAlertRules(deps: WebDeps, userId: number): Promise<AlertRuleRow[]> {
  const rows = await deps.ports.sql.query<Record<string, unknown>>(
    `SELECT * FROM alert_rules WHERE user_id = $1 ORDER BY name, id LIMIT $2`,
    [userId, MAX_RULES],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    name: String(r.name ?? ""),
    trigger_type: String(r.trigger_type ?? ""),
    channel: String(r.channel ?? ""),
    target: String(r.target ?? ""),
    config: (typeof r.config === "string" ? safeJson(r.config) : (r.config as Record<string, unknown>)) ?? {},
    enabled: Boolean(r.enabled),
    created_at: r.created_at ? new Date(r.created_at as string).toISOString() : null,
  }));
}

const safeJson = (s: string): Record<string, unknown> => {
  try { return JSON.parse(s); } catch { return {}; }
};

export function register(router: Router, deps: WebDeps): void {
  router.get("/alerts", requireUser, async (ctx: Context) => {
    const user = ctx.state.user as SessionUser;
    const rules = await listAlertRules(deps, user.id);
    renderPage(ctx, "alerts.njk", { title: "Alerts", rules, limit: MAX_RULES });
  });
}
