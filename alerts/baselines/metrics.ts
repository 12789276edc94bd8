/**
 * The metrics a learned baseline watches, as a person reads them: a label, how a value is written, and the smallest
 * spread a band keeps (a metric that never moved has a MAD of 0; without a floor its first wobble would page).
 * Every metric here is worse when higher, so a band has an upper edge only.
 */
import { RUN_METRIC_NAMES, type RunMetric } from "../../stores/baselines/metric-hours.js";
import { usd } from "../triggers/define.js";

export interface MetricInfo {
  readonly label: string;
  readonly format: (v: number) => string;
  /** The least spread (in the metric's unit) a band is given, whatever the history's MAD. */
  readonly minSpread: number;
}

const seconds = (v: number): string => (v >= 10 ? `${v.toFixed(1)} s` : v >= 1 ? `${v.toFixed(2).replace(/0$/, "")} s` : `${Math.round(v * 1000)} ms`);

export const METRICS: Readonly<Record<RunMetric, MetricInfo>> = {
  error_rate: { label: "error rate", format: (v) => `${(v * 100).toFixed(1)}%`, minSpread: 0.01 },
  latency_p50: { label: "median latency", format: seconds, minSpread: 0.05 },
  latency_p95: { label: "p95 latency", format: seconds, minSpread: 0.05 },
  cost_per_run: { label: "cost per run", format: (v) => usd(v), minSpread: 0.0001 },
  tokens_per_run: { label: "tokens per run", format: (v) => `${Math.round(v).toLocaleString("en-US")} tokens`, minSpread: 1 },
};

export { RUN_METRIC_NAMES as METRIC_NAMES, type RunMetric as MetricName };
