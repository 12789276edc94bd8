/**
 * GET /metrics: the pipeline's counters (core/pipeline-counters.ts) and its health, each plugin's figures, and each
 * background job's (core/job-reports.ts), in the Prometheus text exposition format (version 0.0.4), for a Prometheus
 * server or any scraper that reads it. Counts only, never tenant data: open like /healthz. The format is a few lines
 * of text per metric, written here directly: the values come from the pipelines' and jobs' reports, not from
 * counters this process keeps.
 */
import { JOB_TELEMETRY_HELP, type JobTelemetry } from "../core/job-reports.js";
import { COUNTER_HELP, GAUGE_HELP, PART_SECONDS_BUCKETS, PLUGIN_HOOK_HELP, PLUGIN_HOOKS, type CountersSnapshot, type PluginHookFigure, type PluginsSnapshot } from "../core/pipeline-counters.js";
import type { HealthBody } from "./health.js";

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const PREFIX = "runwatch_pipeline_";

/** One metric: its help, its type, and its samples (name suffix and labels → value). */
function metric(lines: string[], name: string, type: "counter" | "gauge" | "histogram", help: string, samples: readonly (readonly [string, number])[]): void {
  lines.push(`# HELP ${name} ${help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`, `# TYPE ${name} ${type}`);
  for (const [suffix, value] of samples) lines.push(`${name}${suffix} ${Number.isFinite(value) ? value : 0}`);
}

/** A label's value as the format quotes it. */
const label = (v: string): string => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

function pluginMetrics(lines: string[], plugins: PluginsSnapshot): void {
  for (const [figure, help] of Object.entries(PLUGIN_HOOK_HELP) as [PluginHookFigure, string][]) {
    const samples: [string, number][] = [];
    for (const [name, hooks] of Object.entries(plugins)) {
      for (const hook of PLUGIN_HOOKS) {
        const f = hooks[hook];
        if (f) samples.push([`{plugin=${label(name)},hook="${hook}"}`, f[figure]]);
      }
    }
    if (samples.length > 0) metric(lines, `runwatch_plugin_${figure}_total`, "counter", help, samples);
  }
}

function jobMetrics(lines: string[], jobs: Readonly<Record<string, JobTelemetry>>): void {
  const names = Object.keys(jobs);
  if (names.length === 0) return;
  for (const [figure, help] of Object.entries(JOB_TELEMETRY_HELP) as [keyof JobTelemetry, string][]) {
    metric(lines, `runwatch_job_${figure}_total`, "counter", help, names.map((n) => [`{job=${label(n)}}`, jobs[n]![figure]] as const));
  }
}

export function prometheusText(health: HealthBody, counters: CountersSnapshot | undefined, jobs: Readonly<Record<string, JobTelemetry>> = {}): string {
  const lines: string[] = [];
  const p = health.pipeline;
  metric(lines, `${PREFIX}workers`, "gauge", "Pipeline processes that reported in the last 10 s.", [["", p.workers]]);
  if (p.lag_events !== null) metric(lines, `${PREFIX}lag_events`, "gauge", "Events appended to the log and not yet processed.", [["", p.lag_events]]);
  if (p.oldest_unprocessed_age_ms !== null) {
    metric(lines, `${PREFIX}oldest_unprocessed_age_seconds`, "gauge", "How long the oldest event not yet processed has waited.", [["", p.oldest_unprocessed_age_ms / 1000]]);
  }
  if (p.dead_letters !== null) metric(lines, "runwatch_dead_letters", "gauge", "Dead letters kept (events and records set aside).", [["", p.dead_letters]]);
  if (health.evaluation) {
    metric(lines, "runwatch_evaluation_jobs_waiting", "gauge", "Evaluation jobs waiting: pending, or retrying after a provider outage or a cap.", [["", health.evaluation.waiting]]);
    metric(lines, "runwatch_evaluation_jobs_due", "gauge", "Evaluation jobs due now (the backlog the workers have to catch up on).", [["", health.evaluation.due]]);
  }
  if (counters) {
    for (const [name, help] of Object.entries(COUNTER_HELP) as [keyof typeof COUNTER_HELP, string][]) {
      metric(lines, `${PREFIX}${name}_total`, "counter", help, [["", counters.counters[name] ?? 0]]);
    }
    for (const [name, help] of Object.entries(GAUGE_HELP) as [keyof typeof GAUGE_HELP, string][]) {
      metric(lines, `${PREFIX}${name}`, "gauge", help, [["", counters.gauges[name] ?? 0]]);
    }
    const h = counters.part_seconds;
    metric(lines, `${PREFIX}part_seconds`, "histogram", "Time to process a part, first attempt to stored.", [
      ...PART_SECONDS_BUCKETS.map((le, i) => [`_bucket{le="${le}"}`, h.buckets[i] ?? 0] as const),
      [`_bucket{le="+Inf"}`, h.count],
      ["_sum", h.sum],
      ["_count", h.count],
    ]);
    pluginMetrics(lines, counters.plugins ?? {});
  }
  jobMetrics(lines, jobs);
  return `${lines.join("\n")}\n`;
}
