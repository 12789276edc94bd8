/**
 * A metric over a live window, per agent: its value and its volume (ended runs for a run metric, tool calls for the
 * tool error rate, scores for a score's mean), what the anomaly trigger judges and /api/baselines shows; with
 * `environment`, over that environment's runs only.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { windowMetrics } from "../../stores/baselines/metric-hours.js";
import { windowEventMetric, type VolumeValue } from "../../stores/baselines/event-metrics.js";
import { eventMetric, isRunMetric, type MetricRef } from "./metrics.js";

export async function windowValues(
  ch: ClickHouse,
  q: { readonly projectId: number; readonly agent?: string; readonly environment?: string; readonly ref: MetricRef; readonly from: Date; readonly to: Date },
): Promise<VolumeValue[]> {
  const { metric } = q.ref;
  if (isRunMetric(metric)) {
    const windows = await windowMetrics(ch, { projectId: q.projectId, agent: q.agent, environment: q.environment, from: q.from, to: q.to });
    return windows.map((w) => ({ agent_name: w.agent_name, runs: w.runs, value: w.values[metric] }));
  }
  return windowEventMetric(ch, { projectId: q.projectId, agent: q.agent, environment: q.environment, metric: eventMetric(q.ref), from: q.from, to: q.to });
}
