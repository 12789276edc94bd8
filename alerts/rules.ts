/**
 * Alert rules: validation of the /alerts form, and the writes behind it (the rows live in stores/alerts/rules.ts).
 * Every change is announced with publishRulesChanged so pipelines reload the user's rules at once.
 */
import { Either } from "effect";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { insertRule, setRuleSecret, updateRuleRow, type RuleInput } from "../stores/alerts/rules.js";
import { channelByName, CHANNELS } from "./delivery/channels/index.js";
import type { TriggerRegistry } from "./registry.js";
import type { NotificationSettings } from "./settings.js";
import { newRuleSecret } from "./signature.js";
import { decodeTriggerConfig } from "./triggers/define.js";

/** PubSub channel on which /alerts announces rule changes (message: the user id). */
export const RULES_CHANGED_CHANNEL = "alerts.rules";

/** Tells every pipeline process to reload this user's rules now (best effort; the cache TTL is the fallback). */
export const publishRulesChanged = (pubsub: PubSub, projectId: number): Promise<void> =>
  pubsub.publish(RULES_CHANGED_CHANNEL, String(projectId));

export { MAX_RULES, deleteRule, getRule, listRules, setRuleEnabled, type RuleInput, type StoredRule } from "../stores/alerts/rules.js";

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

/** A new rule, with a fresh signing secret; "limit" when the project already has MAX_RULES. */
export const createRule = (sql: Sql, projectId: number, input: RuleInput): Promise<number | "limit"> =>
  insertRule(sql, projectId, input, newRuleSecret());

/** Rewrites a rule; one made before rules had secrets is given one. */
export const updateRule = (sql: Sql, projectId: number, id: number, input: RuleInput): Promise<boolean> =>
  updateRuleRow(sql, projectId, id, input, newRuleSecret());

/** A new signing secret: webhooks signed with the old one stop verifying. */
export const rotateRuleSecret = (sql: Sql, projectId: number, id: number): Promise<boolean> =>
  setRuleSecret(sql, projectId, id, newRuleSecret());
