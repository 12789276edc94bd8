/**
 * score_below: the average of a named score (numbers, and booleans as 1/0; docs/API.md, Scores) given in the last
 * `window_minutes` is below `threshold`, with at least `min_scores` of them in the window (one bad thumb among none
 * does not page anyone); optionally for one agent's runs. Scores arrive through POST /api/scores (the web process)
 * as well as with events (the pipeline), so the rule is judged by the sweep (RUNWATCH_ALERT_SWEEP_MS, 15 s), which
 * sees both, and counted in ClickHouse. While the average stays low it fires once per window (the key is the slot).
 */
import { Schema } from "effect";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { scoreAverageSince } from "../../stores/alerts/trigger-reads.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, defineTrigger, windowMinutesField, minimumCountField, windowFormField, sweepEachRule } from "./define.js";

interface ScoreBelowConfig {
  score_name: string;
  threshold: number;
  window_minutes: number;
  min_scores: number;
  agent_name?: string;
}

export function scoreAverage(ctx: AlertContext, rule: AlertRule, now: Date): Promise<{ average: number; count: number }> {
  const c = rule.config as unknown as ScoreBelowConfig;
  const since = new Date(now.getTime() - c.window_minutes * 60_000);
  return scoreAverageSince(ctx.clickhouse, { projectId: rule.project_id, scoreName: c.score_name, since, agent: c.agent_name ?? "" });
}

export function checkScoreAverage(rule: AlertRule, s: { average: number; count: number }, now: Date): AlertFiring | undefined {
  const c = rule.config as unknown as ScoreBelowConfig;
  if (s.count === 0 || s.count < c.min_scores || !(s.average < c.threshold)) return undefined;
  const slot = Math.floor(now.getTime() / (c.window_minutes * 60_000));
  const agent = c.agent_name ? ` for ${c.agent_name}` : "";
  const average = Number(s.average.toFixed(4));
  return {
    key: `score:${slot}`,
    rule,
    message: `Average ${c.score_name}${agent} is ${average} (${s.count} scores in the last ${c.window_minutes} min), below ${c.threshold}`,
    details: { score_name: c.score_name, average, scores: s.count, threshold: c.threshold, window_minutes: c.window_minutes, min_scores: c.min_scores },
  };
}

export const scoreBelow = defineTrigger({
  type: "score_below",
  label: "Score below",
  description: "The average of a named score (feedback, an evaluation) over a sliding window falls below a threshold.",
  schema: Schema.Struct({
    score_name: Schema.String.pipe(Schema.trimmed({ message: () => "must not start or end with spaces" }), Schema.minLength(1, { message: () => "is required" }), Schema.maxLength(100)),
    threshold: Schema.Number.pipe(Schema.finite({ message: () => "must be a number" })),
    window_minutes: windowMinutesField(60, 10_080, "10080 minutes (7 days)"),
    min_scores: minimumCountField(5),
    agent_name: agentNameField,
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "score_name", label: "Score name", kind: "text", required: true, placeholder: "user_feedback", help: "Numbers as given; true/false count as 1/0 (thumbs up/down)." },
    { name: "threshold", label: "Average below", kind: "number", step: "any", required: true, placeholder: "0.7" },
    windowFormField(60),
    { name: "min_scores", label: "Minimum scores in window", kind: "number", step: "1", placeholder: "5", help: "Below this many scores the average is not judged." },
    AGENT_FIELD,
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 3600,
  sweep: sweepEachRule(async (rule, ctx, now) => checkScoreAverage(rule, await scoreAverage(ctx, rule, now), now)),
});
