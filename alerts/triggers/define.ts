/**
 * What an alert trigger is, and `defineTrigger` to write one: its trigger_type, the effect Schema of its config
 * (alert_rules.config jsonb, decoded with defaults applied), the form fields /alerts renders for it, and how it
 * is evaluated — per changed run (`evaluate`), per batch (`evaluateBatch`, when it needs a query) and/or on a
 * timer (`sweep`, for the absence of an event or a window). Built-ins live next to this file; a team's own
 * trigger is a module exporting one of these, listed in RUNWATCH_ALERT_TRIGGERS (see alerts/registry.ts).
 */
import { Either, ParseResult, Schema } from "effect";
import type { AlertContext, AlertEvaluator, AlertFiring, AlertRule } from "../model.js";
import type { RunRecord } from "../../core/events/run.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";

export interface ConfigField {
  /** Key in the config object (the form field is `config.<name>`). */
  readonly name: string;
  readonly label: string;
  readonly kind: "number" | "text" | "select";
  readonly help?: string;
  readonly placeholder?: string;
  readonly options?: readonly { value: string; label: string }[];
  readonly step?: string;
  readonly required?: boolean;
}

export interface TriggerDefinition extends AlertEvaluator {
  /** alert_rules.trigger_type: lower case, digits and underscores, e.g. "run_error". */
  readonly type: string;
  /** Short name shown in the UI, e.g. "Run failed". */
  readonly label: string;
  readonly description: string;
  /** Decodes the stored config (unknown JSON) into the evaluator's config, defaults applied. */
  readonly schema: Schema.Schema<any, any>;
  readonly fields: readonly ConfigField[];
  /** Cooldown used when the rule does not set cooldown_seconds. */
  readonly defaultCooldownSeconds: number;
}

const TRIGGER_TYPE = /^[a-z][a-z0-9_]{0,63}$/;

/** Checks a trigger's shape once, where it is written, so a mistake fails at start-up and not on the hot path. */
export function defineTrigger(def: TriggerDefinition): TriggerDefinition {
  if (!TRIGGER_TYPE.test(def.type)) throw new Error(`alert trigger type ${JSON.stringify(def.type)}: use lower case letters, digits and _ (at most 64)`);
  if (!def.evaluate && !def.evaluateBatch && !def.sweep) throw new Error(`alert trigger ${def.type}: give it evaluate, evaluateBatch or sweep`);
  if (!Schema.isSchema(def.schema)) throw new Error(`alert trigger ${def.type}: schema must be an effect Schema`);
  return def;
}

/** Config fields every trigger accepts. */
export const MAX_COOLDOWN_SECONDS = 7 * 86_400;
export const cooldownField = Schema.optional(
  Schema.Number.pipe(
    Schema.int({ message: () => "must be a whole number of seconds" }),
    Schema.between(0, MAX_COOLDOWN_SECONDS, { message: () => `must be between 0 and ${MAX_COOLDOWN_SECONDS} seconds (7 days)` }),
  ),
);
export const agentNameField = Schema.optional(
  Schema.String.pipe(Schema.trimmed({ message: () => "must not start or end with spaces" }), Schema.maxLength(200)),
);

/** A sliding window in whole minutes, `dflt` when the rule sets none. */
export const windowMinutesField = (dflt: number, max: number, maxInWords = `${max} minutes`) => Schema.optionalWith(
  Schema.Number.pipe(Schema.int({ message: () => "must be whole minutes" }), Schema.between(1, max, { message: () => `must be between 1 and ${maxInWords}` })),
  { default: () => dflt },
);
/** A share in percent, e.g. an error rate to fire at. */
export const percentThresholdField = Schema.Number.pipe(Schema.between(0.01, 100, { message: () => "must be a percentage between 0.01 and 100" }));
/** The form field of windowMinutesField. */
export const windowFormField = (dflt: number): ConfigField => ({ name: "window_minutes", label: "Window (minutes)", kind: "number", step: "1", placeholder: String(dflt) });
/** The fewest runs, jobs or scores a window needs before its rate or mean is judged. */
export const minimumCountField = (dflt: number) => Schema.optionalWith(
  Schema.Number.pipe(Schema.int({ message: () => "must be a whole number" }), Schema.between(1, 1_000_000, { message: () => "must be at least 1" })),
  { default: () => dflt },
);

/** A sweep that checks each rule on its own: `check` reads the rule's window and says whether it fires. */
export const sweepEachRule = (check: (rule: AlertRule, ctx: AlertContext, now: Date) => Promise<AlertFiring | undefined>): NonNullable<AlertEvaluator["sweep"]> =>
  async (rules, ctx, now) => {
    const out: AlertFiring[] = [];
    for (const rule of rules) {
      const f = await check(rule, ctx, now);
      if (f) out.push(f);
    }
    return out;
  };

export const COOLDOWN_FIELD: ConfigField = {
  name: "cooldown_seconds",
  label: "Cooldown (seconds)",
  kind: "number",
  help: "After a notification, this rule's next firings within this many seconds are not sent but counted, and the count is reported with the next notification sent. 0 sends every firing.",
  step: "1",
};
export const AGENT_FIELD: ConfigField = {
  name: "agent_name",
  label: "Agent",
  kind: "text",
  placeholder: "any agent",
  help: "Only runs of this agent (exact name). Empty: every agent.",
};

const parseOptions = { errors: "first", onExcessProperty: "ignore" } as const;

/** Decodes a rule's config; the error names the config field ("config.threshold_usd"). */
export function decodeTriggerConfig(def: TriggerDefinition, raw: unknown): Either.Either<Record<string, unknown>, { field: string; message: string }> {
  const input = raw === null || raw === undefined ? {} : raw;
  const r = Schema.decodeUnknownEither(def.schema, parseOptions)(input);
  if (Either.isRight(r)) return Either.right(r.right as Record<string, unknown>);
  const issue = ParseResult.ArrayFormatter.formatErrorSync(r.left)[0];
  const key = issue?.path.map(String).join(".") ?? "";
  const field = key ? `config.${key}` : "config";
  const label = def.fields.find((f) => f.name === key)?.label ?? key;
  const message = issue?._tag === "Missing" ? `${label || "config"} is required` : `${label || "config"}: ${issue?.message ?? "is invalid"}`;
  return Either.left({ field, message });
}

/** The rule's optional agent filter (config.agent_name) accepts this run. */
/**
 * Whether a rule watches the run: the rule's agent, or any agent but the LLM judge's own runs (evaluation, not
 * production: `evaluation_failure_rate_above` watches the judges).
 */
export const agentMatches = (rule: AlertRule, run: Pick<RunRecord, "agent_name">): boolean => {
  const want = rule.config.agent_name;
  return typeof want !== "string" || want === "" ? run.agent_name !== JUDGE_AGENT : want === run.agent_name;
};

/** "planner" / "run abc" labels used in messages. */
export const runLabel = (run: Pick<RunRecord, "agent_name" | "external_id">): string =>
  `${run.agent_name ? `${run.agent_name} ` : ""}run ${run.external_id}`;

/** $12.34, or up to 4 decimals below $1 (small per-run costs), never fewer than 2. */
export const usd = (n: number): string => `$${n >= 1 ? n.toFixed(2) : n.toFixed(4).replace(/(\.\d\d\d?)0+$/, "$1").replace(/(\.\d\d)0$/, "$1")}`;

/** A positive amount of money or threshold from a form, as a Schema. */
export const positiveNumber = (what: string) =>
  Schema.Number.pipe(Schema.finite({ message: () => `${what} must be a number` }), Schema.positive({ message: () => `${what} must be greater than 0` }));
