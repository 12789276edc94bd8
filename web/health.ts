/**
 * GET /healthz (docs/API.md, "Health"): whether this web process can take events and whether the pipeline keeps
 * up with them. Pipeline processes report their lag over pub/sub (pipeline/health.ts); this view keeps the
 * latest report of each and answers without touching the log. Counts only, never tenant data.
 *
 * "degraded" when the oldest unprocessed event has waited more than 30 s, when the lag has grown for 30 s
 * without a pause, when no pipeline has reported for 10 s (after a 10 s grace at start), or when the
 * dead-letter count cannot be read (Postgres down). The status code is 200 either way: this process serves;
 * a load balancer should not take it out of rotation because the pipeline is behind.
 */
import { PIPELINE_HEALTH_CHANNEL, PIPELINE_HEALTH_INTERVAL_MS, type PipelineHealthReport } from "../core/pipeline-health.js";
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { isCountersSnapshot, PLUGIN_HOOK_HELP, PLUGIN_HOOKS, type CountersSnapshot, type PluginHookFigure, type PluginHookName, type PluginsSnapshot } from "../core/pipeline-counters.js";
import { countDeadLetters } from "../stores/dead-letters.js";
import { evaluationBacklog } from "../stores/evaluation/jobs.js";
import { settleWithin } from "../core/settle-within.js";
import { SILENT_AFTER_MS, watchPeriodicReports } from "../core/pubsub/periodic-report.js";

export const DEGRADED_AGE_MS = 30_000;
const DEAD_LETTER_CACHE_MS = 2_000;

export interface HealthBody {
  readonly status: "ok" | "degraded";
  readonly pipeline: {
    readonly lag_events: number | null;
    readonly oldest_unprocessed_age_ms: number | null;
    readonly dead_letters: number | null;
    /** Pipeline processes that reported in the last 10 s. */
    readonly workers: number;
  };
  /** Evaluation jobs waiting (pending or retrying after an outage), and how many of them are due: the backlog. */
  readonly evaluation: { readonly waiting: number; readonly due: number; readonly retrying: number } | null;
}

export interface HealthView {
  snapshot(): Promise<HealthBody>;
  /** The counters of the pipelines that reported in the last 10 s, added up; undefined when none sent any. */
  counters(): CountersSnapshot | undefined;
  close(): Promise<void>;
}

const isReport = (v: unknown): v is PipelineHealthReport => {
  const r = v as PipelineHealthReport;
  return typeof r === "object" && r !== null && typeof r.member === "string" && Number.isFinite(r.lag_events) && Number.isFinite(r.oldest_unprocessed_age_ms);
};

export async function watchPipelineHealth(pubsub: PubSub, sql: Sql, logger: Logger, clock: () => number = Date.now): Promise<HealthView> {
  const startedAt = clock();
  /** (time, group lag) samples of the last minute, for "the lag has grown for 30 s". */
  const samples: { at: number; lag: number }[] = [];
  const reports = await watchPeriodicReports(pubsub, { channel: PIPELINE_HEALTH_CHANNEL, logger, what: "pipeline health", clock }, isReport, (report, now) => {
    samples.push({ at: now, lag: report.lag_events });
    while (samples.length && samples[0]!.at < now - 60_000) samples.shift();
  });

  let deadLetters: { value: number | null; at: number } | undefined;
  const deadLetterCount = async (): Promise<number | null> => {
    if (deadLetters && clock() - deadLetters.at < DEAD_LETTER_CACHE_MS) return deadLetters.value;
    const value = await settleWithin<number | null>(countDeadLetters(sql), 1_000, null);
    deadLetters = { value, at: clock() };
    return value;
  };

  let backlog: { value: HealthBody["evaluation"]; at: number } | undefined;
  const evaluationWaiting = async (): Promise<HealthBody["evaluation"]> => {
    if (backlog && clock() - backlog.at < DEAD_LETTER_CACHE_MS) return backlog.value;
    const value = await settleWithin<HealthBody["evaluation"]>(evaluationBacklog(sql), 1_000, null);
    backlog = { value, at: clock() };
    return value;
  };

  const lagGrowing = (now: number): boolean => {
    const window = samples.filter((s) => s.at >= now - DEGRADED_AGE_MS - PIPELINE_HEALTH_INTERVAL_MS);
    if (window.length < 2 || window[0]!.at > now - DEGRADED_AGE_MS + PIPELINE_HEALTH_INTERVAL_MS) return false;
    for (let i = 1; i < window.length; i++) if (window[i]!.lag <= window[i - 1]!.lag) return false;
    return true;
  };

  return {
    counters: () => addCounters(reports.live().map((r) => r.counters).filter(isCountersSnapshot)),
    async snapshot() {
      const now = clock();
      const live = reports.live();
      const [dead, evaluation] = await Promise.all([deadLetterCount(), evaluationWaiting()]);
      // Every Kafka member reports the whole group's lag, so the largest report is the group's.
      const lag = live.length ? Math.max(...live.map((r) => r.lag_events)) : null;
      const age = live.length ? Math.max(...live.map((r) => r.oldest_unprocessed_age_ms)) : null;
      const silent = live.length === 0 && now - startedAt > SILENT_AFTER_MS;
      const degraded = silent || dead === null || (age ?? 0) > DEGRADED_AGE_MS || lagGrowing(now);
      return {
        status: degraded ? "degraded" : "ok",
        pipeline: { lag_events: lag, oldest_unprocessed_age_ms: age, dead_letters: dead, workers: live.length },
        evaluation,
      };
    },
    close: () => reports.close(),
  };
}

/** Several pipelines' counters as one (Kafka: one per group member). */
function addCounters(all: readonly CountersSnapshot[]): CountersSnapshot | undefined {
  if (all.length === 0) return undefined;
  const sum = <K extends string>(pick: (s: CountersSnapshot) => Readonly<Record<K, number>>): Record<K, number> => {
    const out = {} as Record<K, number>;
    for (const s of all) for (const [k, v] of Object.entries(pick(s)) as [K, number][]) out[k] = (out[k] ?? 0) + (Number.isFinite(v) ? v : 0);
    return out;
  };
  const buckets = all[0]!.part_seconds.buckets.map((_, i) => all.reduce((n, s) => n + (s.part_seconds.buckets[i] ?? 0), 0));
  return {
    counters: sum((s) => s.counters),
    gauges: sum((s) => s.gauges),
    part_seconds: { buckets, count: all.reduce((n, s) => n + s.part_seconds.count, 0), sum: all.reduce((n, s) => n + s.part_seconds.sum, 0) },
    plugins: addPlugins(all.map((s) => s.plugins ?? {})),
  };
}

const FIGURES = Object.keys(PLUGIN_HOOK_HELP) as PluginHookFigure[];

/** Several pipelines' plugin figures as one, by plugin and hook (a member may run other plugins than another). */
function addPlugins(all: readonly PluginsSnapshot[]): PluginsSnapshot {
  const out: Record<string, Partial<Record<PluginHookName, Record<PluginHookFigure, number>>>> = {};
  for (const plugins of all) {
    for (const [name, hooks] of Object.entries(plugins)) {
      if (typeof hooks !== "object" || hooks === null) continue;
      for (const hook of PLUGIN_HOOKS) {
        const figures = hooks[hook];
        if (typeof figures !== "object" || figures === null) continue;
        const sum = ((out[name] ??= {})[hook] ??= { calls: 0, events: 0, runs: 0, errors: 0, seconds: 0 });
        for (const k of FIGURES) sum[k] += Number.isFinite(figures[k]) ? figures[k] : 0;
      }
    }
  }
  return out;
}
