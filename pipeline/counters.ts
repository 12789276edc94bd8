/**
 * The pipeline's own counters: what it took in, stored and set aside, how long its parts took, and how often each
 * of its shortcuts answered, so each one's worth can be read off a running system (the names and their meaning:
 * core/pipeline-counters.ts). Sent with the health reports (health.ts); GET /metrics and GET /healthz?verbose=1 show
 * them (docs/PIPELINE.md, "Counters"), with each plugin's own figures (plugin-telemetry.ts).
 */
import {
  COUNTER_HELP, GAUGE_HELP, PART_SECONDS_BUCKETS, type CounterName, type CountersSnapshot, type GaugeName, type PluginsSnapshot,
} from "../core/pipeline-counters.js";

/** Each name of a help table at zero. */
const zeros = <K extends string>(help: Record<K, string>): Record<K, number> =>
  Object.fromEntries(Object.keys(help).map((k) => [k, 0])) as Record<K, number>;

export class PipelineCounters {
  private readonly counts = zeros(COUNTER_HELP);
  private readonly buckets = PART_SECONDS_BUCKETS.map(() => 0);
  private partCount = 0;
  private partSum = 0;
  private gauges: () => Record<GaugeName, number> = () => zeros(GAUGE_HELP);
  private plugins: () => PluginsSnapshot = () => ({});

  add(name: CounterName, n = 1): void {
    this.counts[name] += n;
  }

  /** A part's processing time, first attempt to stored. */
  observePart(seconds: number): void {
    this.partCount++;
    this.partSum += seconds;
    for (let i = 0; i < PART_SECONDS_BUCKETS.length; i++) if (seconds <= PART_SECONDS_BUCKETS[i]!) this.buckets[i]!++;
  }

  /** Where the gauges are read from (the processor's state). */
  readGaugesFrom(read: () => Record<GaugeName, number>): void {
    this.gauges = read;
  }

  /** Where the plugins' figures are read from (the plugin hooks' telemetry). */
  readPluginsFrom(read: () => PluginsSnapshot): void {
    this.plugins = read;
  }

  snapshot(): CountersSnapshot {
    return {
      counters: { ...this.counts }, gauges: this.gauges(), part_seconds: { buckets: [...this.buckets], count: this.partCount, sum: this.partSum },
      plugins: this.plugins(),
    };
  }
}
