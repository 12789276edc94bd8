/**
 * error_rate_above: among the runs that ended in the last `window_minutes`, the share that ended in error is
 * at or above `threshold_pct`, with at least `min_runs` runs in the window (so 1 failure out of 1 run does not
 * page anyone). Counted in ClickHouse (agent_runs), so it is right however many pipeline processes share the
 * work. Checked when a batch ends runs of a user with such a rule (at most every 5 s per rule and process),
 * and by every sweep. While the rate stays high it fires once per window (the key is the window's slot).
 */
import { Schema } from "effect";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { endedRunCounts } from "../../stores/alerts/trigger-reads.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, defineTrigger, windowMinutesField, minimumCountField, percentThresholdField, windowFormField } from "./define.js";

const MIN_EVAL_INTERVAL_MS = 5_000;

export function errorRate(ctx: AlertContext, rule: AlertRule, now: Date): Promise<{ errors: number; runs: number }> {
  const since = new Date(now.getTime() - (rule.config.window_minutes as number) * 60_000);
  const agent = typeof rule.config.agent_name === "string" ? rule.config.agent_name : "";
  return endedRunCounts(ctx.clickhouse, { projectId: rule.project_id, since, agent });
}

function check(rule: AlertRule, counts: { errors: number; runs: number }, now: Date): AlertFiring | undefined {
  const { threshold_pct, window_minutes, min_runs } = rule.config as { threshold_pct: number; window_minutes: number; min_runs: number };
  if (counts.runs < min_runs || counts.runs === 0) return undefined;
  const pct = (counts.errors / counts.runs) * 100;
  if (pct < threshold_pct) return undefined;
  const slot = Math.floor(now.getTime() / (window_minutes * 60_000));
  const agent = typeof rule.config.agent_name === "string" && rule.config.agent_name ? ` of ${rule.config.agent_name}` : "";
  return {
    key: `rate:${slot}`,
    rule,
    message: `Error rate${agent} is ${pct.toFixed(1)}% (${counts.errors} of ${counts.runs} runs in the last ${window_minutes} min), at or above ${threshold_pct}%`,
    details: { error_rate_pct: Number(pct.toFixed(2)), errors: counts.errors, runs: counts.runs, window_minutes, threshold_pct, min_runs },
  };
}

const lastEval = new Map<number, number>();

export const errorRateAbove = defineTrigger({
  type: "error_rate_above",
  label: "Error rate above",
  description: "The share of runs ending in error over a sliding window reaches a threshold.",
  schema: Schema.Struct({
    threshold_pct: percentThresholdField,
    window_minutes: windowMinutesField(15, 1440),
    min_runs: minimumCountField(10),
    agent_name: agentNameField,
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "threshold_pct", label: "Error rate (%)", kind: "number", step: "any", required: true, placeholder: "20" },
    windowFormField(15),
    { name: "min_runs", label: "Minimum runs in window", kind: "number", step: "1", placeholder: "10", help: "Below this many ended runs the rate is not judged." },
    AGENT_FIELD,
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 900,
  async evaluateBatch(checks, ctx) {
    const now = new Date();
    const rules = new Map<number, AlertRule>();
    for (const c of checks) {
      if (!c.events.some((e) => e.event_type === "run_end" || e.event_type === "error")) continue;
      const agent = c.rule.config.agent_name;
      if (typeof agent === "string" && agent && agent !== c.run.agent_name) continue;
      if (now.getTime() - (lastEval.get(c.rule.id) ?? 0) < MIN_EVAL_INTERVAL_MS) continue;
      rules.set(c.rule.id, c.rule);
    }
    const out: AlertFiring[] = [];
    for (const rule of rules.values()) {
      lastEval.set(rule.id, now.getTime());
      const f = check(rule, await errorRate(ctx, rule, now), now);
      if (f) out.push(f);
    }
    return out;
  },
  async sweep(rules, ctx, now) {
    const out: AlertFiring[] = [];
    for (const rule of rules) {
      lastEval.set(rule.id, now.getTime());
      const f = check(rule, await errorRate(ctx, rule, now), now);
      if (f) out.push(f);
    }
    return out;
  },
});
