/**
 * The metrics a learned baseline watches, as a person reads them: a label, how a value is written, the smallest
 * spread a band keeps (a metric that never moved has a MAD of 0; without a floor its first wobble would page), and
 * which way is worse. Run metrics and the tool error rate are worse when higher (a band's upper edge is judged); a
 * score's mean is worse when lower (its lower edge). `score_mean` is one metric per score name: a rule and a baseline
 * name the score too, and its hours are stored under `score_mean:<name>`.
 */
import { RUN_METRIC_NAMES, type RunMetric } from "../../stores/baselines/metric-hours.js";
import { TOOL_ERROR_RATE, scoreMetricKey, type EventMetric } from "../../stores/baselines/event-metrics.js";
import { usd } from "../triggers/define.js";

export type MetricName = RunMetric | "tool_error_rate" | "score_mean";

export interface MetricInfo {
  readonly label: string;
  readonly format: (v: number) => string;
  /** The least spread (in the metric's unit) a band is given, whatever the history's MAD. */
  readonly minSpread: number;
  /** "lower": a drop is the anomaly (a score's mean); otherwise a rise is. */
  readonly worse: "higher" | "lower";
  /** A share of trials (runs, tool calls): its window also has binomial noise (band.ts). */
  readonly share?: true;
}

const seconds = (v: number): string => (v >= 10 ? `${v.toFixed(1)} s` : v >= 1 ? `${v.toFixed(2).replace(/0$/, "")} s` : `${Math.round(v * 1000)} ms`);
const percent = (v: number): string => `${(v * 100).toFixed(1)}%`;

export const METRICS: Readonly<Record<MetricName, MetricInfo>> = {
  error_rate: { label: "error rate", format: percent, minSpread: 0.01, worse: "higher", share: true },
  latency_p50: { label: "median latency", format: seconds, minSpread: 0.05, worse: "higher" },
  latency_p95: { label: "p95 latency", format: seconds, minSpread: 0.05, worse: "higher" },
  cost_per_run: { label: "cost per run", format: (v) => usd(v), minSpread: 0.0001, worse: "higher" },
  tokens_per_run: { label: "tokens per run", format: (v) => `${Math.round(v).toLocaleString("en-US")} tokens`, minSpread: 1, worse: "higher" },
  tool_error_rate: { label: "tool error rate", format: percent, minSpread: 0.01, worse: "higher", share: true },
  score_mean: { label: "mean score", format: (v) => (Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(2)), minSpread: 0.01, worse: "lower" },
};

export const METRIC_NAMES: readonly MetricName[] = [...RUN_METRIC_NAMES, "tool_error_rate", "score_mean"];

/** A metric as rules and baselines name it: a score's mean names its score. */
export interface MetricRef {
  readonly metric: MetricName;
  readonly score?: string;
}

/** "p95 latency", "correctness mean". */
export const metricLabel = (m: MetricRef): string => (m.metric === "score_mean" ? `${m.score} mean` : METRICS[m.metric].label);

/** The metric's key in agent_metric_hours. */
export const storedMetric = (m: MetricRef): string => (m.metric === "score_mean" ? scoreMetricKey(m.score ?? "") : m.metric);

export const isRunMetric = (m: MetricName): m is RunMetric => (RUN_METRIC_NAMES as readonly string[]).includes(m);

/** The event metric a non-run metric is read as (stores/baselines/event-metrics.ts). */
export const eventMetric = (m: MetricRef): EventMetric =>
  m.metric === "score_mean" ? { kind: "score_mean", score: m.score ?? "" } : { kind: TOOL_ERROR_RATE };
