/**
 * Alert rules (Postgres alert_rules): validation of the /alerts form and the queries behind it. Every
 * change is announced with publishRulesChanged so pipelines reload the user's rules at once.
 */
import { Either } from "effect";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { channelByName, CHANNELS } from "./delivery/channels/index.js";
import type { RuleInput } from "./model.js";
import type { TriggerRegistry } from "./registry.js";
import type { NotificationSettings } from "./settings.js";
import { newRuleSecret } from "./signature.js";
import { decodeTriggerConfig } from "./triggers/define.js";

/** PubSub channel on which /alerts announces rule changes (message: the user id). */
export const RULES_CHANGED_CHANNEL = "alerts.rules";

/** Tells every pipeline process to reload this user's rules now (best effort; the cache TTL is the fallback). */
export const publishRulesChanged = (pubsub: PubSub, projectId: number): Promise<void> =>
  pubsub.publish(RULES_CHANGED_CHANNEL, String(projectId));

export type { RuleInput };

export const MAX_RULES = 500;


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

export type FieldErrors = Record<string, string>;

/** The form values as the user typed them, to re-render the form after an error. */
export type FormValues = Record<string, string>;

/** Parses and validates the rule form (`config.<field>` inputs for the chosen trigger). */
export async function parseRuleForm(
  form: Record<string, string | undefined>,
  settings: NotificationSettings,
  triggers: TriggerRegistry,
): Promise<{ ok: true; value: RuleInput } | { ok: false; errors: FieldErrors }> {
  const errors: FieldErrors = {};
  const name = (form.name ?? "").trim();
  if (!name) errors.name = "Give the rule a name.";
  else if (name.length > 100) errors.name = "Keep the name under 100 characters.";

  const trigger = triggers.get(form.trigger_type ?? "");
  if (!trigger) errors.trigger_type = `Choose a trigger: ${triggers.types().join(", ")}.`;
  const channel = channelByName(form.channel ?? "");
  if (!channel) errors.channel = `Choose a channel: ${CHANNELS.map((c) => c.name).join(", ")}.`;

  let target = "";
  if (channel) {
    try {
      target = await channel.validateTarget(form.target ?? "", settings);
    } catch (err) {
      errors.target = `${channel.label} target ${(err as Error).message}.`.replace(/\.\.$/, ".");
    }
  }

  const config: Record<string, unknown> = {};
  if (trigger) {
    for (const f of [...trigger.fields]) {
      const raw = (form[`config.${f.name}`] ?? "").trim();
      if (raw === "") continue;
      if (f.kind === "number") {
        const n = Number(raw);
        if (!Number.isFinite(n)) {
          errors[`config.${f.name}`] = `${f.label} must be a number.`;
          continue;
        }
        config[f.name] = n;
      } else {
        config[f.name] = raw;
      }
    }
    const decoded = decodeTriggerConfig(trigger, config);
    if (Either.isLeft(decoded) && !errors[decoded.left.field]) errors[decoded.left.field] = `${decoded.left.message}.`;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, value: { name, trigger_type: trigger!.type, channel: channel!.name, target, config, enabled: form.enabled === "on" || form.enabled === "true" } };
}

const decode = (r: Record<string, unknown>): StoredRule => ({
  id: Number(r.id),
  project_id: Number(r.project_id),
  name: String(r.name),
  trigger_type: String(r.trigger_type),
  channel: String(r.channel),
  target: String(r.target),
  config: (typeof r.config === "string" ? JSON.parse(r.config) : r.config) as Record<string, unknown>,
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

export async function createRule(sql: Sql, projectId: number, input: RuleInput): Promise<number | "limit"> {
  const [count] = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_rules WHERE project_id = $1`, [projectId]);
  if (Number(count?.n ?? 0) >= MAX_RULES) return "limit";
  const [row] = await sql.query<{ id: number }>(
    `INSERT INTO alert_rules (project_id, name, trigger_type, channel, target, config, enabled, secret)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [projectId, input.name, input.trigger_type, input.channel, input.target, JSON.stringify(input.config), input.enabled, newRuleSecret()],
  );
  return Number(row!.id);
}

export async function updateRule(sql: Sql, projectId: number, id: number, input: RuleInput): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE alert_rules SET name = $3, trigger_type = $4, channel = $5, target = $6, config = $7, enabled = $8, updated_at = now(),
            secret = CASE WHEN secret = '' THEN $9 ELSE secret END
     WHERE project_id = $1 AND id = $2 RETURNING id`,
    [projectId, id, input.name, input.trigger_type, input.channel, input.target, JSON.stringify(input.config), input.enabled, newRuleSecret()],
  );
  return rows.length > 0;
}

export async function setRuleEnabled(sql: Sql, projectId: number, id: number, enabled: boolean): Promise<boolean> {
  const rows = await sql.query(`UPDATE alert_rules SET enabled = $3, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id, enabled]);
  return rows.length > 0;
}

export async function rotateRuleSecret(sql: Sql, projectId: number, id: number): Promise<boolean> {
  const rows = await sql.query(`UPDATE alert_rules SET secret = $3, updated_at = now() WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id, newRuleSecret()]);
  return rows.length > 0;
}

export async function deleteRule(sql: Sql, projectId: number, id: number): Promise<boolean> {
  const rows = await sql.query(`DELETE FROM alert_rules WHERE project_id = $1 AND id = $2 RETURNING id`, [projectId, id]);
  return rows.length > 0;
}
