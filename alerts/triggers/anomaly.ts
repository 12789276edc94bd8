/**
 * anomaly: an agent's metric over the last `window_minutes` leaves the band learned from its own history for this
 * hour of the week (alerts/baselines/band.ts) on its worse side (above; below for a score's mean), with at least
 * `min_runs` of the metric's volume in the window (ended runs; tool calls for the tool error rate; scores for a
 * score's mean). With `environment`, only the runs that named it are judged, against the band learned from that
 * environment's own hours (alerts/baselines/dimensions.ts), and the message names it. Judged by the sweep:
 * it first rolls up the hours that ended since the last sweep (alerts/baselines/rollup.ts), so a baseline is read
 * from hourly aggregates (kept until the hour turns or a roll-up writes: alerts/baselines/stats-cache.ts), and only
 * the live window from the runs.
 *
 * One notification per episode: leaving the band (for a minute: alerts/baselines/confirm.ts) fires `episode:<n>:fired:<agent>`, coming back into it fires
 * `episode:<n>:resolved:<agent>`; the keys already dispatched (alert_firings) say which agents are out, so the state
 * holds across sweeps, restarts and processes. A baseline still "learning" judges nothing, and neither does a window
 * with too few runs (an open episode then waits for enough runs to say it is over).
 */
import { Schema } from "effect";
import type { AlertContext, AlertFiring, AlertRule } from "../model.js";
import { episodeChange, episodeStates } from "../../stores/alerts/episodes.js";
import { HISTORY_DAYS, MIN_RUNS_PER_HOUR, SENSITIVITIES, hourOfWeek, learnBand, outsideBand, slotLabel, type Band, type Sensitivity } from "../baselines/band.js";
import { METRICS, METRIC_NAMES, metricLabel, storedMetric, type MetricName, type MetricRef } from "../baselines/metrics.js";
import { windowValues } from "../baselines/window.js";
import { rollUpProject } from "../baselines/rollup.js";
import { cachedBaselineStats, cachedStats } from "../baselines/stats-cache.js";
import { OutOfBandSince } from "../baselines/confirm.js";
import { environmentStats } from "../baselines/dimensions.js";
import { loadNotificationSettings } from "../settings.js";
import { changeInWords, changePoints } from "../baselines/change-points.js";
import { AGENT_FIELD, COOLDOWN_FIELD, agentNameField, cooldownField, defineTrigger, minimumCountField, windowFormField, windowMinutesField } from "./define.js";

const HOUR_MS = 3_600_000;
/** How far back "what changed" looks for a change point (a config activation, a new release). */
const CHANGE_LOOKBACK_MS = 7 * 24 * HOUR_MS;

type Ready = Extract<Band, { state: "ready" }>;

/** Since when each rule's agent has been out of band without an open episode (confirm.ts). */
const outOfBand = new OutOfBandSince();

const usual = (band: Ready, how: number, fmt: (v: number) => string): string =>
  `its usual ${fmt(band.median)} ${band.basis === "slot" ? `for ${slotLabel(how)}` : "(any hour: too little history for this hour of the week yet)"}`;

const refOf = (m: MetricName | MetricRef): MetricRef => (typeof m === "string" ? { metric: m } : m);

/** Who a firing is about: "refund-bot", or "refund-bot (production)" for a rule on one environment. */
const subject = (agent: string, environment: string | undefined): string => (environment ? `${agent} (${environment})` : agent);

/** The firing's words: "refund-bot p95 latency 14.2 s, 3.1× its usual 4.6 s for Tuesdays 14:00". */
export function describeAnomaly(agent: string, m: MetricName | MetricRef, value: number, band: Ready, how: number): string {
  const ref = refOf(m);
  const { format, worse } = METRICS[ref.metric];
  const ratio = band.median > 0 ? `${(value / band.median).toFixed(1)}× ` : worse === "lower" ? "below " : "above ";
  return `${agent} ${metricLabel(ref)} ${format(value)}, ${ratio}${usual(band, how, format)}`;
}

export function describeRecovery(agent: string, m: MetricName | MetricRef, value: number, band: Ready, how: number): string {
  const ref = refOf(m);
  const { format, worse } = METRICS[ref.metric];
  const edge = worse === "lower" ? `down to ${format(band.lower)}` : `up to ${format(band.upper)}`;
  return `${agent} ${metricLabel(ref)} is back to ${format(value)}, within ${usual(band, how, format)} (band ${edge})`;
}

/** The agent's latest change point within CHANGE_LOOKBACK_MS before `now`: the anomaly's "what changed". */
async function nearestChange(ctx: AlertContext, projectId: number, agent: string, now: Date) {
  const last = (await changePoints(ctx, projectId, agent, new Date(now.getTime() - CHANGE_LOOKBACK_MS), new Date(now.getTime() + 1))).at(-1);
  return last ? { ...last, words: changeInWords(last, now) } : undefined;
}

async function check(rule: AlertRule, ctx: AlertContext, now: Date): Promise<AlertFiring[]> {
  const { metric, sensitivity, window_minutes, min_runs } = rule.config as { metric: MetricName; sensitivity: Sensitivity; window_minutes: number; min_runs: number };
  const text = (v: unknown): string | undefined => (typeof v === "string" && v ? v : undefined);
  const agent = text(rule.config.agent_name);
  const score = text(rule.config.score_name);
  const environment = text(rule.config.environment);
  const ref: MetricRef = metric === "score_mean" ? { metric, score } : { metric };
  await rollUpProject(ctx.clickhouse, rule.project_id, now);
  const windows = await windowValues(ctx.clickhouse, { projectId: rule.project_id, agent, environment, ref, from: new Date(now.getTime() - window_minutes * 60_000), to: now });
  const judged = windows.filter((w) => w.runs >= min_runs);
  if (judged.length === 0) return [];
  const how = hourOfWeek(now);
  const hourStart = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const range = { projectId: rule.project_id, agent, hourOfWeek: how, since: new Date(hourStart.getTime() - HISTORY_DAYS * 24 * HOUR_MS), until: hourStart };
  // With an environment, that environment's runs are judged against that environment's own band. Either statistics
  // are read once per hour and roll-up, not per sweep (stats-cache.ts).
  const stored = storedMetric(ref);
  const stats = environment !== undefined
    ? await cachedStats(ctx.clickhouse, rule.project_id, ["environment", environment, stored, agent ?? "\u0000all", how, range.since.getTime(), range.until.getTime()],
      () => environmentStats(ctx.clickhouse, { ...range, stored, environment }))
    : await cachedBaselineStats(ctx.clickhouse, { ...range, metric: stored, minRuns: MIN_RUNS_PER_HOUR });
  const byAgent = new Map(stats.map((s) => [s.agent_name, s]));
  const episodes = await episodeStates(ctx.sql, rule.id);
  const confirmMs = loadNotificationSettings().anomalyConfirmMs;
  const out: AlertFiring[] = [];
  for (const w of judged) {
    const band = learnBand(byAgent.get(w.agent_name), metric, sensitivity, w.runs);
    if (band.state === "learning") continue;
    const value = w.value;
    const outside = outsideBand(band, metric, value);
    const confirmed = outOfBand.confirmed(`${rule.id} ${w.agent_name}`, outside, now.getTime(), confirmMs);
    // An episode opens once the metric has stayed out for a minute and closes on the first sweep back in band.
    const change = episodeChange(episodes, w.agent_name, episodes.get(w.agent_name)?.open ? outside : confirmed);
    if (!change) continue;
    const details = {
      metric, ...(score ? { score_name: score } : {}), ...(environment ? { environment } : {}), agent_name: w.agent_name, value, runs: w.runs, window_minutes, sensitivity, k: SENSITIVITIES[sensitivity],
      baseline: { basis: band.basis, hour_of_week: slotLabel(how), hours: band.hours, median: band.median, mad: band.mad, spread: band.spread, upper: band.upper, lower: band.lower, history_days: HISTORY_DAYS },
    };
    if (change.state === "fired") {
      const changed = await nearestChange(ctx, rule.project_id, w.agent_name, now);
      const message = describeAnomaly(subject(w.agent_name, environment), ref, value, band, how) + (changed ? `; ${changed.words}` : "");
      out.push({ key: change.key, rule, message, details: { ...details, state: "fired", change: changed ?? null } });
    } else {
      out.push({ key: change.key, rule, message: describeRecovery(subject(w.agent_name, environment), ref, value, band, how), details: { ...details, state: "resolved" } });
    }
  }
  return out;
}

export const anomaly = defineTrigger({
  type: "anomaly",
  label: "Anomaly (learned baseline)",
  description: "An agent's metric leaves the band learned from its own history for this hour of the week; resolves when it returns.",
  schema: Schema.Struct({
    metric: Schema.Literal(...METRIC_NAMES).annotations({ message: () => ({ message: `must be one of ${METRIC_NAMES.join(", ")}`, override: true }) }),
    sensitivity: Schema.optionalWith(
      Schema.Literal("low", "medium", "high").annotations({ message: () => ({ message: 'must be "low", "medium" or "high"', override: true }) }),
      { default: () => "medium" as const },
    ),
    window_minutes: windowMinutesField(30, 1440),
    min_runs: minimumCountField(10),
    score_name: Schema.optional(Schema.String.pipe(Schema.maxLength(200, { message: () => "must be at most 200 characters" }))),
    agent_name: agentNameField,
    environment: Schema.optional(Schema.String.pipe(
      Schema.trimmed({ message: () => "must not start or end with spaces" }),
      Schema.maxLength(100, { message: () => "must be at most 100 characters" }),
    )),
    cooldown_seconds: cooldownField,
  }).pipe(Schema.filter((c) => (c.metric !== "score_mean" || c.score_name ? undefined : { path: ["score_name"], message: "name the score whose mean is watched" }))),
  fields: [
    { name: "metric", label: "Metric", kind: "select", required: true, options: METRIC_NAMES.map((m) => ({ value: m, label: METRICS[m].label })) },
    { name: "score_name", label: "Score", kind: "text", placeholder: "correctness", help: "For the mean score metric: the score's name (a drop below its band fires)." },
    {
      name: "sensitivity", label: "Sensitivity", kind: "select",
      options: [{ value: "medium", label: "medium (4 spreads)" }, { value: "low", label: "low (6 spreads)" }, { value: "high", label: "high (3 spreads)" }],
      help: "How far from its usual value (above; below for a mean score), in robust standard deviations, the window must be.",
    },
    windowFormField(30),
    {
      name: "min_runs", label: "Minimum runs in window", kind: "number", step: "1", placeholder: "10",
      help: "Below this many ended runs (tool calls for the tool error rate, scores for a mean score) the window is not judged.",
    },
    AGENT_FIELD,
    {
      name: "environment", label: "Environment", kind: "text", placeholder: "any environment",
      help: "Only runs that named this environment (exact, e.g. production), judged against that environment's own band. Empty: all runs.",
    },
    COOLDOWN_FIELD,
  ],
  // An episode notifies once when it starts and once when it ends: no cooldown needed to keep it quiet.
  defaultCooldownSeconds: 0,
  async sweep(rules, ctx, now) {
    const out: AlertFiring[] = [];
    for (const rule of rules) out.push(...(await check(rule, ctx, now)));
    return out;
  },
});
