/**
 * Alert rules in Postgres (alert_rules, with their cooldown state alert_rule_state): their rows, read and written
 * as they are. What a rule may say (its trigger's config, its channel's target) is checked before it gets here
 * (alerts/rules.ts), and its signing secret is made there too.
 */
import type { Sql } from "../../core/ports/sql.js";

/** Rules a project may have; /alerts lists them all. */
export const MAX_RULES = 500;

/** A rule as the /alerts form gives it (alert_rules columns a user sets). */
export interface RuleInput {
  name: string;
  trigger_type: string;
  channel: string;
  target: string;
  config: Record<string, unknown>;
  enabled: boolean;
}

/** A rule row with its cooldown state, as /alerts shows it. */
export interface StoredRule extends RuleInput {
  id: number;
  project_id: number;
  secret: string;
  created_at: string;
  updated_at: string;
  last_sent_at: string | null;
  suppressed: number;
  suppressed_total: number;
}

/** What names a rule and where its notifications go. */
export interface RuleHeader {
  readonly id: number;
  readonly project_id: number;
  readonly name: string;
  readonly trigger_type: string;
  readonly channel: string;
  readonly target: string;
}

/** An enabled rule as the alert engine loads it: its config still raw JSON, decoded by its trigger's schema. */
export interface EnabledRuleRow extends RuleHeader {
  readonly config: unknown;
}

const json = (v: unknown): unknown => (typeof v === "string" ? JSON.parse(v) : v);

const decode = (r: Record<string, unknown>): StoredRule => ({
  id: Number(r.id),
  project_id: Number(r.project_id),
  name: String(r.name),
  trigger_type: String(r.trigger_type),
  channel: String(r.channel),
  target: String(r.target),
  config: json(r.config) as Record<string, unknown>,
  enabled: Boolean(r.enabled),
  secret: String(r.secret ?? ""),
  created_at: new Date(r.created_at as string).toISOString(),
  updated_at: new Date(r.updated_at as string).toISOString(),
  last_sent_at: r.last_sent_at ? new Date(r.last_sent_at as string).toISOString() : null,
  suppressed: Number(r.suppressed ?? 0),
  suppressed_total: Number(r.suppressed_total ?? 0),
});

const SELECT = `SELECT r.*, s.last_sent_at, s.suppressed, s.suppressed_total
  FROM alert_rules r LEFT JOIN alert_rule_state s ON s.rule_id = r.id`;

export async function listRules(sql: Sql, projectId: number): Promise<StoredRule[]> {
  const rows = await sql.query<Record<string, unknown>>(`${SELECT} WHERE r.project_id = $1 ORDER BY r.name, r.id LIMIT $2`, [projectId, MAX_RULES]);
  return rows.map(decode);
}

export async function getRule(sql: Sql, projectId: number, id: number): Promise<StoredRule | undefined> {
  const [row] = await sql.query<Record<string, unknown>>(`${SELECT} WHERE r.project_id = $1 AND r.id = $2`, [projectId, id]);
  return row ? decode(row) : undefined;
}

/** Inserts a rule with its signing secret; "limit" when the project already has MAX_RULES. */
export async function insertRule(sql: Sql, projectId: number, input: RuleInput, secret: string): Promise<number | "limit"> {
  const [count] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_rules WHERE project_id = $1`, [projectId]);
  if (Number(count?.n ?? 0) >= MAX_RULES) return "limit";
  const [row] = await sql.query<{ id: number }>(
    `INSERT INTO alert_rules (project_id, name, trigger_type, channel, target, config, enabled, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [projectId, input.name, input.trigger_type, input.channel, input.target, JSON.stringify(input.config), input.enabled, secret],
  );
  return Number(row!.id);
}

/** Rewrites a rule; `secretIfNone` becomes its secret only when it has none (rules made before secrets existed). */
export async function updateRuleRow(sql: Sql, projectId: number, id: number, input: RuleInput, secretIfNone: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE alert_rules SET name = $3, trigger_type = $4, channel = $5, target = $6, config = $7, enabled = $8, updated_at = now(),
            secret = CASE WHEN secret = '' THEN $9 ELSE secret END
     WHERE project_id = $1 AND id = $2 RETURNING id`,
    [projectId, id, input.name, input.trigger_type, input.channel, input.target, JSON.stringify(input.config), input.enabled, secretIfNone],
  );
  return rows.length > 0;
}

export async function setRuleEnabled(sql: Sql, projectId: number, id: number, enabled: boolean): Promise<boolean> {
  const rows = await sql.query(`UPDATE alert_rules SET enabled = $3, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id, enabled]);
  return rows.length > 0;
}

export async function setRuleSecret(sql: Sql, projectId: number, id: number, secret: string): Promise<boolean> {
  const rows = await sql.query(`UPDATE alert_rules SET secret = $3, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id, secret]);
  return rows.length > 0;
}

export async function deleteRule(sql: Sql, projectId: number, id: number): Promise<boolean> {
  const rows = await sql.query(`DELETE FROM alert_rules WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id]);
  return rows.length > 0;
}

const RULE_COLUMNS = "id, project_id, name, trigger_type, channel, target, config";

type RawRule = Omit<EnabledRuleRow, "id" | "project_id"> & { id: string | number; project_id: string | number };

const toEnabledRule = (r: RawRule): EnabledRuleRow => ({
  id: Number(r.id), project_id: Number(r.project_id), name: r.name, trigger_type: r.trigger_type, channel: r.channel, target: r.target, config: json(r.config),
});

/** The enabled rules of these projects and trigger types, by id (the alert engine's cache fill, on the hot path). */
export async function enabledRulesOf(sql: Sql, projectIds: readonly number[], types: readonly string[]): Promise<EnabledRuleRow[]> {
  const rows = await sql.query<RawRule>(
    `SELECT ${RULE_COLUMNS} FROM alert_rules
         WHERE enabled AND project_id = ANY($1::bigint[]) AND trigger_type = ANY($2::text[])
         ORDER BY id`,
    [projectIds, types],
  );
  return rows.map(toEnabledRule);
}

/** Every project's enabled rules of these trigger types, by id (the periodic sweep). */
export async function enabledRulesOfTypes(sql: Sql, types: readonly string[]): Promise<EnabledRuleRow[]> {
  const rows = await sql.query<RawRule>(
    `SELECT ${RULE_COLUMNS} FROM alert_rules WHERE enabled AND trigger_type = ANY($1::text[]) ORDER BY id`,
    [types],
  );
  return rows.map(toEnabledRule);
}
