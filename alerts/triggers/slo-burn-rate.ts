/**
 * slo_burn_rate: the SLO named `slo` (stores/slos.ts) burns its error budget too fast, judged by the sweep with the
 * SRE workbook's two multi-window alerts (alerts/slos/budget.ts): fast (1 h and 5 min at 14.4×) and slow (6 h and
 * 30 min at 6×), each with at least `min_runs` runs in its long window. Like `anomaly`, one notification per episode
 * and speed: `episode:<n>:fired:<speed>` when it starts burning, `episode:<n>:resolved:<speed>` when the burn stops.
 */
import { Schema } from "effect";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { listSlos, type Slo } from "../../stores/slos.js";
import { episodeChange, episodeStates } from "../../stores/alerts/episodes.js";
import { BURN_ALERTS, objectiveInWords, sloStatus, type BurnSpeed, type SloStatus } from "../slos/budget.js";
import { sloTalliesAt } from "../slos/tallies.js";
import { COOLDOWN_FIELD, cooldownField, defineTrigger, minimumCountField } from "./define.js";

const pct = (share: number): string => `${+(share * 100).toFixed(1)}%`;

/**
 * The status of each rule's SLO (undefined: no SLO of that name): per project, its SLOs listed once and the ones the
 * rules name read together (alerts/slos/tallies.ts).
 */
async function statusesOf(rules: readonly AlertRule[], ctx: AlertContext, now: Date): Promise<Map<AlertRule, { slo: Slo; status: SloStatus }>> {
  const out = new Map<AlertRule, { slo: Slo; status: SloStatus }>();
  for (const projectId of new Set(rules.map((r) => r.project_id))) {
    const mine = rules.filter((r) => r.project_id === projectId);
    const byName = new Map((await listSlos(ctx.sql, projectId)).map((s) => [s.name, s]));
    const named = [...new Set(mine.flatMap((r) => byName.get((r.config as { slo: string }).slo) ?? []))];
    const tallies = await sloTalliesAt(ctx.clickhouse, projectId, named, now);
    const statuses = new Map(named.map((slo, i) => [slo.name, { slo, status: sloStatus(slo, tallies[i]!.windows) }]));
    for (const r of mine) {
      const s = statuses.get((r.config as { slo: string }).slo);
      if (s) out.set(r, s);
    }
  }
  return out;
}

async function check(rule: AlertRule, ctx: AlertContext, slo: Slo, status: SloStatus): Promise<AlertFiring[]> {
  const { min_runs } = rule.config as { slo: string; min_runs: number };
  const episodes = await episodeStates(ctx.sql, rule.id);
  const out: AlertFiring[] = [];
  for (const speed of Object.keys(BURN_ALERTS) as BurnSpeed[]) {
    const a = BURN_ALERTS[speed];
    const long = status.burn[speed === "fast" ? "1h" : "6h"];
    const short = status.burn[speed === "fast" ? "5m" : "30m"];
    const change = episodeChange(episodes, speed, status.alerts[speed] && long.runs >= min_runs);
    if (!change) continue;
    const head = `${slo.agent_name} SLO “${slo.name}” (${objectiveInWords(slo)})`;
    const details = { slo: slo.name, slo_id: slo.id, speed, threshold: a.threshold, windows: { long: a.longLabel, short: a.shortLabel }, burn: status.burn, budget: status.budget, sli: status.sli };
    if (change.state === "fired") {
      const spentInLong = (long.rate * a.long) / (slo.window_days * 86_400);
      out.push({
        key: change.key, rule, details: { ...details, state: "fired" },
        message: `${head} burns its error budget ${long.rate.toFixed(1)}× too fast (${a.longLabel}: ${long.rate.toFixed(1)}×, ${a.shortLabel}: ${short.rate.toFixed(1)}×; alert at ${a.threshold}×): ${pct(spentInLong)} of the budget gone in the last ${a.longLabel}, ${pct(Math.max(0, status.budget.remaining))} left`,
      });
    } else {
      out.push({
        key: change.key, rule, details: { ...details, state: "resolved" },
        message: `${head} no longer burns fast (${a.longLabel}: ${long.rate.toFixed(1)}×, ${a.shortLabel}: ${short.rate.toFixed(1)}×); ${pct(Math.max(0, status.budget.remaining))} of the budget left`,
      });
    }
  }
  return out;
}

export const sloBurnRate = defineTrigger({
  type: "slo_burn_rate",
  label: "SLO burn rate",
  description: "An agent's SLO spends its error budget too fast (multi-window burn-rate alerts: 1 h/5 min at 14.4×, 6 h/30 min at 6×); resolves when it stops.",
  schema: Schema.Struct({
    slo: Schema.String.pipe(Schema.trimmed({ message: () => "must not start or end with spaces" }), Schema.minLength(1, { message: () => "is required" }), Schema.maxLength(100)),
    min_runs: minimumCountField(10),
    cooldown_seconds: cooldownField,
  }),
  fields: [
    { name: "slo", label: "SLO", kind: "text", required: true, placeholder: "Refunds succeed", help: "The SLO's name (GET /api/slos lists them)." },
    { name: "min_runs", label: "Minimum runs in the long window", kind: "number", step: "1", placeholder: "10" },
    COOLDOWN_FIELD,
  ],
  defaultCooldownSeconds: 0,
  async sweep(rules, ctx, now) {
    const statuses = await statusesOf(rules, ctx, now);
    const out: AlertFiring[] = [];
    for (const rule of rules) {
      const s = statuses.get(rule);
      if (s) out.push(...(await check(rule, ctx, s.slo, s.status)));
    }
    return out;
  },
});
