/**
 * run_duration_above: a run is still running N seconds after it started. No event marks this, so the check
 * runs in the periodic sweep (plugins/alert-evaluation.ts): one ClickHouse query over the running runs of the
 * projects that have such rules. Run state lives in ClickHouse and firing keys in Postgres, so it works across
 * restarts and pipeline processes. Once per run. Runs that started more than 7 days ago are not looked at.
 */
import { Schema } from "effect";
import type { AlertFiring, AlertRule } from "../model.js";
import { runningRunsStartedBetween } from "../../stores/alerts/trigger-reads.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, agentMatches, runLabel, defineTrigger } from "./define.js";

export const LOOKBACK_MS = 7 * 86_400_000;
/** Runs examined per sweep at most (oldest first). */
const MAX_RUNS_PER_SWEEP = 5_000;

export function formatSeconds(s: number): string {
  if (s < 120) return `${Math.round(s)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

export const runDurationAbove = defineTrigger({
  type: "run_duration_above",
  label: "Run too long",
  description: "A run is still running N seconds after it started (checked every sweep, ~15 s).",
  schema: Schema.Struct({
    seconds: Schema.Number.pipe(
      Schema.int({ message: () => "must be a whole number of seconds" }),
      Schema.between(1, LOOKBACK_MS / 1000, { message: () => "must be between 1 second and 7 days" }),
    ),
    agent_name: agentNameField,
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "seconds", label: "Longer than (seconds)", kind: "number", step: "1", required: true, placeholder: "600" },
    AGENT_FIELD,
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 300,
  evaluate: () => undefined, // fires from the sweep only
  async sweep(rules, ctx, now) {
    const shortest = Math.min(...rules.map((r) => r.config.seconds as number));
    const projects = [...new Set(rules.map((r) => r.project_id))];
    const rows = await runningRunsStartedBetween(ctx.clickhouse, {
      projectIds: projects,
      startedBefore: new Date(now.getTime() - shortest * 1000),
      startedAfter: new Date(now.getTime() - LOOKBACK_MS),
      limit: MAX_RUNS_PER_SWEEP,
    });
    if (rows.length === 0) return [];
    const runs = await ctx.store.loadRuns(rows);
    const byUser = new Map<number, AlertRule[]>();
    for (const r of rules) byUser.set(r.project_id, [...(byUser.get(r.project_id) ?? []), r]);
    const out: AlertFiring[] = [];
    for (const run of runs) {
      if (run.status !== "running") continue;
      const startedMs = Date.parse(`${(run.started_at ?? run.status_at).replace(" ", "T")}${/Z|[+-]\d\d:?\d\d$/.test(run.started_at ?? run.status_at) ? "" : "Z"}`);
      const elapsed = (now.getTime() - startedMs) / 1000;
      for (const rule of byUser.get(run.project_id) ?? []) {
        const limit = rule.config.seconds as number;
        if (elapsed < limit || !agentMatches(rule, run)) continue;
        out.push({
          key: `duration:${run.run_id}`,
          rule,
          run,
          message: `${runLabel(run)} has been running for ${formatSeconds(elapsed)}, longer than ${formatSeconds(limit)}`,
          details: { elapsed_seconds: Math.round(elapsed), limit_seconds: limit, started_at: run.started_at },
        });
      }
    }
    return out;
  },
});
