/**
 * The synthetic fleet of bench:baselines (test/bench/baselines.ts): agents whose runs follow known patterns, and
 * the incidents injected into them. Deterministic (a seeded PRNG), so the counts it yields are the same on every
 * machine; only the timings depend on the machine and its load.
 *
 * Each agent: traffic with a daily cycle (busiest mid-afternoon UTC) and quieter weekends; latency that rises with
 * traffic and has log-normal noise; errors, tool-call failures, cost and tokens around the agent's own levels; a
 * correctness score on most runs and a helpfulness score on some.
 */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

/** The eight metrics watched per agent, as agent_metric_hours names them. */
export const FLEET_METRICS = [
  "error_rate", "latency_p50", "latency_p95", "cost_per_run", "tokens_per_run", "tool_error_rate",
  "score_mean:correctness", "score_mean:helpfulness",
] as const;
export type FleetMetric = (typeof FLEET_METRICS)[number];

export interface Run {
  readonly latency: number;
  readonly error: boolean;
  readonly cost: number;
  readonly tokens: number;
  readonly toolCalls: number;
  readonly toolFails: number;
  readonly correctness?: number;
  readonly helpfulness?: number;
}

export interface Incident {
  readonly kind: "latency step" | "error-rate ramp" | "cost spike" | "score drop after config change";
  readonly agent: number;
  /** The metrics the incident moves: an alert on one of them in [start, end + window] detects it. */
  readonly metrics: readonly FleetMetric[];
  readonly start: number;
  readonly end: number;
}

/**
 * The incidents injected into a replayed week from `t0` (a Monday 00:00 UTC in bench:baselines): two of each kind,
 * on agents 1 to 8 of a fleet of at least 9; a smaller fleet takes them on agent number modulo its size (two
 * incidents on one agent then move different metrics).
 */
export function incidentsAt(t0: number, agents: number): Incident[] {
  const at = (day: number, hour: number) => t0 + day * 24 * HOUR + hour * HOUR;
  const on = (agent: number) => agent % agents;
  return [
    { kind: "latency step", agent: on(1), metrics: ["latency_p50", "latency_p95"], start: at(1, 10), end: at(1, 13) },
    { kind: "latency step", agent: on(5), metrics: ["latency_p50", "latency_p95"], start: at(5, 20), end: at(5, 22) },
    { kind: "error-rate ramp", agent: on(2), metrics: ["error_rate"], start: at(2, 8), end: at(2, 14) },
    { kind: "error-rate ramp", agent: on(6), metrics: ["error_rate"], start: at(1, 14), end: at(1, 18) },
    { kind: "cost spike", agent: on(3), metrics: ["cost_per_run"], start: at(3, 15), end: at(3, 16) },
    { kind: "cost spike", agent: on(7), metrics: ["cost_per_run"], start: at(6, 3), end: at(6, 4) },
    { kind: "score drop after config change", agent: on(4), metrics: ["score_mean:correctness"], start: at(4, 9), end: at(7, 0) },
    { kind: "score drop after config change", agent: on(8), metrics: ["score_mean:correctness"], start: at(2, 12), end: at(7, 0) },
  ];
}

/** mulberry32: a small seeded PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Agent {
  readonly rate: number;
  readonly latency: number;
  readonly errorRate: number;
  readonly tokens: number;
  readonly price: number;
  readonly toolFail: number;
}

export class Fleet {
  private readonly rand: () => number;
  readonly agents: Agent[];

  constructor(readonly size: number, readonly incidents: readonly Incident[], seed = 67) {
    this.rand = prng(seed);
    const r = this.rand;
    this.agents = Array.from({ length: size }, () => ({
      rate: 1 + r() * 1.5, latency: 1 + r() * 5, errorRate: 0.01 + r() * 0.03, tokens: 800 + r() * 3000,
      price: 2e-6 + r() * 8e-6, toolFail: 0.01 + r() * 0.04,
    }));
  }

  private normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.rand())) * Math.cos(2 * Math.PI * this.rand());
  }

  /** Traffic and load factor at `t`: a daily cycle peaking at 15:00 UTC, half on Saturdays and Sundays. */
  static load(t: number): number {
    const d = new Date(t);
    const hour = d.getUTCHours() + d.getUTCMinutes() / 60;
    const daily = 0.65 + 0.35 * Math.cos((2 * Math.PI * (hour - 15)) / 24);
    const weekend = d.getUTCDay() === 0 || d.getUTCDay() === 6 ? 0.5 : 1;
    return daily * weekend;
  }

  /** The runs of agent `i` that end in the minute starting at `t`. */
  runsInMinute(i: number, t: number): Run[] {
    const a = this.agents[i]!;
    const load = Fleet.load(t);
    const lambda = a.rate * load;
    const n = Math.floor(lambda) + (this.rand() < lambda - Math.floor(lambda) ? 1 : 0);
    let latency = a.latency * (0.8 + 0.4 * load), errorRate = a.errorRate, price = a.price, correctness = 0.85;
    for (const x of this.incidents) {
      if (x.agent !== i || t < x.start || t >= x.end) continue;
      if (x.kind === "latency step") latency *= 2.5;
      if (x.kind === "error-rate ramp") errorRate += 0.3 * ((t - x.start) / (x.end - x.start));
      if (x.kind === "cost spike") price *= 4;
      if (x.kind === "score drop after config change") correctness = 0.6;
    }
    const out: Run[] = [];
    for (let k = 0; k < n; k++) {
      const tokens = Math.round(a.tokens * Math.exp(0.2 * this.normal()));
      const toolCalls = 3;
      let toolFails = 0;
      for (let c = 0; c < toolCalls; c++) if (this.rand() < a.toolFail) toolFails++;
      const clip = (v: number) => Math.min(1, Math.max(0, v));
      out.push({
        latency: latency * Math.exp(0.3 * this.normal()), error: this.rand() < errorRate, tokens, cost: tokens * price,
        toolCalls, toolFails,
        ...(this.rand() < 0.7 ? { correctness: clip(correctness + 0.08 * this.normal()) } : {}),
        ...(this.rand() < 0.4 ? { helpfulness: clip(0.7 + 0.1 * this.normal()) } : {}),
      });
    }
    return out;
  }
}

/** ClickHouse's quantileExact: the element at floor(level × n) of the sorted values. */
const quantileExact = (sorted: readonly number[], level: number): number => sorted[Math.min(sorted.length - 1, Math.floor(level * sorted.length))]!;

/** Each metric over `runs` as the roll-up and the live window compute it, with its volume (runs, calls, scores). */
export function metricsOf(runs: readonly Run[]): Record<FleetMetric, { volume: number; value: number }> {
  const n = runs.length;
  const lat = runs.map((r) => r.latency).sort((a, b) => a - b);
  let errors = 0, cost = 0, tokens = 0, calls = 0, fails = 0, cN = 0, cSum = 0, hN = 0, hSum = 0;
  for (const r of runs) {
    if (r.error) errors++;
    cost += r.cost; tokens += r.tokens; calls += r.toolCalls; fails += r.toolFails;
    if (r.correctness !== undefined) { cN++; cSum += r.correctness; }
    if (r.helpfulness !== undefined) { hN++; hSum += r.helpfulness; }
  }
  return {
    error_rate: { volume: n, value: n ? errors / n : NaN },
    latency_p50: { volume: n, value: n ? quantileExact(lat, 0.5) : NaN },
    latency_p95: { volume: n, value: n ? quantileExact(lat, 0.95) : NaN },
    cost_per_run: { volume: n, value: n ? cost / n : NaN },
    tokens_per_run: { volume: n, value: n ? tokens / n : NaN },
    tool_error_rate: { volume: calls, value: calls ? fails / calls : NaN },
    "score_mean:correctness": { volume: cN, value: cN ? cSum / cN : NaN },
    "score_mean:helpfulness": { volume: hN, value: hN ? hSum / hN : NaN },
  };
}
