/**
 * An experiment's results, read from ClickHouse (docs/EVALUATION.md, Experiments): each item × repetition is the
 * newest run that names the experiment, the item and the repetition (a resumed experiment re-runs an item, and its
 * new run replaces the old one); its output is its run_end's, its scores the newest of each name given to the run.
 * The aggregates are over those results: a score's mean and count, errors, cost, latency p50 and p95.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import type { RunStatus } from "../../core/events/schema.js";
import type { Experiment } from "./experiments.js";

/** Outputs longer than this (as JSON text) come back as the start of their text, marked output_truncated. */
export const MAX_OUTPUT_CHARS = 65_536;

export type ScoreValue = number | boolean | string;

export interface ItemResult {
  readonly item_id: string;
  readonly repetition: number;
  readonly sdk_run_id: string;
  readonly run_id: string;
  readonly status: RunStatus;
  readonly output: unknown;
  readonly output_truncated: boolean;
  readonly error: string | null;
  readonly scores: Record<string, ScoreValue>;
  readonly cost_usd: number;
  readonly latency_ms: number | null;
  readonly started_at: string | null;
}

export interface ExperimentAggregates {
  /** Results that ended (success or error). */
  readonly completed_count: number;
  readonly error_count: number;
  /** Per score name: the mean of its numeric and boolean values (true = 1) and how many results have it. */
  readonly scores: Record<string, { mean: number | null; count: number }>;
  readonly cost_usd: number;
  readonly latency_ms: { p50: number | null; p95: number | null };
}

/** RUNS' columns (prefixed: an alias named as a column would stand for the column inside the other expressions). */
interface RunRow {
  r_item: string;
  r_repetition: number | string;
  r_sdk_run_id: string;
  r_run_id: string;
  r_status: RunStatus;
  r_error: string;
  r_cost_usd: number | string;
  r_latency_ms: number | string;
  r_started_at: string;
}

/** The experiment's runs: the newest per item and repetition. */
const RUNS = `
  SELECT dataset_item_id AS r_item, repetition AS r_repetition,
         argMax(external_id, k) AS r_sdk_run_id, argMax(toString(run_id), k) AS r_run_id, argMax(status, k) AS r_status,
         argMax(last_error, k) AS r_error, argMax(cost_usd, k) AS r_cost_usd,
         argMax(ifNull(dateDiff('millisecond', started_at, ended_at), -1), k) AS r_latency_ms,
         argMax(ifNull(toString(started_at), ''), k) AS r_started_at
  FROM (SELECT *, (ifNull(started_at, last_event_at), version) AS k FROM agent_runs FINAL
        WHERE project_id = {pid:UInt64} AND experiment_id = {eid:String})
  GROUP BY dataset_item_id, repetition`;

/** Run ids of the experiment's runs (all of them: a result's run is among them). */
const RUN_IDS = "SELECT run_id FROM agent_runs WHERE project_id = {pid:UInt64} AND experiment_id = {eid:String}";

const OUTPUTS = `
  SELECT toString(rid) AS run_id, lengthUTF8(raw) AS chars, leftUTF8(raw, ${MAX_OUTPUT_CHARS}) AS output
  FROM (SELECT run_id AS rid, argMax(JSONExtractRaw(payload, 'output'), occurred_at) AS raw FROM agent_events
        WHERE project_id = {pid:UInt64} AND event_type = 'run_end' AND run_id IN (${RUN_IDS}) GROUP BY rid)`;

const SCORES = `
  SELECT toString(run_id) AS s_run_id, name AS s_name, argMax(value_type, created_at) AS s_type,
         argMax(value_number, created_at) AS s_number, argMax(value_string, created_at) AS s_string
  FROM scores FINAL
  WHERE project_id = {pid:UInt64} AND span_id = '' AND run_id IN (${RUN_IDS})
  GROUP BY run_id, name
  ORDER BY s_run_id, s_name`; // each result's scores by name, whatever order they were given in

function scoreValue(type: string, n: number, s: string): ScoreValue {
  if (type === "boolean") return n !== 0;
  if (type === "string") return s;
  return n;
}

function parseOutput(text: string, chars: number): { output: unknown; truncated: boolean } {
  if (text === "") return { output: null, truncated: false };
  if (chars > MAX_OUTPUT_CHARS) return { output: `${text}…`, truncated: true };
  try {
    return { output: JSON.parse(text), truncated: false };
  } catch {
    return { output: text, truncated: false };
  }
}

/**
 * The results of experiment `experimentId` of project `projectId`, by item id (byte order) and repetition; without
 * their outputs (null) when `outputs` is false, for aggregates alone (the outputs' query reads the run_end payloads).
 */
export async function experimentResults(ch: ClickHouse, projectId: number, experimentId: string, opts: { outputs?: boolean } = {}): Promise<ItemResult[]> {
  const params = { pid: projectId, eid: experimentId };
  const [runs, outputs, scores] = await Promise.all([
    ch.query<RunRow>(RUNS, params),
    opts.outputs === false ? [] : ch.query<{ run_id: string; chars: number | string; output: string }>(OUTPUTS, params),
    ch.query<{ s_run_id: string; s_name: string; s_type: string; s_number: number | string; s_string: string }>(SCORES, params),
  ]);
  const outputOf = new Map(outputs.map((o) => [o.run_id, parseOutput(o.output, Number(o.chars))]));
  const scoresOf = new Map<string, Record<string, ScoreValue>>();
  for (const s of scores) {
    let of = scoresOf.get(s.s_run_id);
    if (!of) scoresOf.set(s.s_run_id, (of = {}));
    of[s.s_name] = scoreValue(s.s_type, Number(s.s_number), s.s_string);
  }
  const results = runs.map((r): ItemResult => {
    const out = outputOf.get(r.r_run_id) ?? { output: null, truncated: false };
    const latency = Number(r.r_latency_ms);
    return {
      item_id: r.r_item,
      repetition: Number(r.r_repetition),
      sdk_run_id: r.r_sdk_run_id,
      run_id: r.r_run_id,
      status: r.r_status,
      output: out.output,
      output_truncated: out.truncated,
      error: r.r_status === "error" ? r.r_error || "error" : null,
      scores: scoresOf.get(r.r_run_id) ?? {},
      cost_usd: Number(r.r_cost_usd),
      latency_ms: latency >= 0 ? latency : null,
      started_at: r.r_started_at ? new Date(`${r.r_started_at.replace(" ", "T")}Z`).toISOString() : null,
    };
  });
  return results.sort((a, b) => byteOrder(a.item_id, b.item_id) || a.repetition - b.repetition);
}

/** Item ids in the order Postgres reads them (COLLATE "C": their UTF-8 bytes), which JavaScript's `<` is not. */
export const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The value at quantile q of sorted values (nearest rank), or null for none. */
export function quantile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export function aggregate(results: readonly ItemResult[]): ExperimentAggregates {
  let completed = 0;
  let errors = 0;
  let cost = 0;
  const latencies: number[] = [];
  const sums = new Map<string, { sum: number; numeric: number; count: number }>();
  for (const r of results) {
    if (r.status === "success" || r.status === "error") completed++;
    if (r.status === "error") errors++;
    cost += r.cost_usd;
    if (r.latency_ms !== null && (r.status === "success" || r.status === "error")) latencies.push(r.latency_ms);
    for (const [name, v] of Object.entries(r.scores)) {
      let s = sums.get(name);
      if (!s) sums.set(name, (s = { sum: 0, numeric: 0, count: 0 }));
      s.count++;
      if (typeof v !== "string") {
        s.sum += Number(v);
        s.numeric++;
      }
    }
  }
  latencies.sort((a, b) => a - b);
  const scores: Record<string, { mean: number | null; count: number }> = {};
  for (const [name, s] of [...sums].sort(([a], [b]) => (a < b ? -1 : 1))) scores[name] = { mean: s.numeric ? s.sum / s.numeric : null, count: s.count };
  return {
    completed_count: completed,
    error_count: errors,
    scores,
    cost_usd: Math.round(cost * 1e9) / 1e9,
    latency_ms: { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95) },
  };
}

/** An experiment with its aggregates, as the API and the pages show it. */
export function experimentSummary(e: Experiment, results: readonly ItemResult[]) {
  const { dataset_id: _datasetId, ...rest } = e;
  return { ...rest, expected_count: e.item_count * e.repetitions, ...aggregate(results) };
}
export type ExperimentSummary = ReturnType<typeof experimentSummary>;

/** An experiment's summary, read from ClickHouse (its results' runs and scores; the outputs are not needed). */
export async function summarizeExperiment(ch: ClickHouse, projectId: number, e: Experiment): Promise<ExperimentSummary> {
  return experimentSummary(e, await experimentResults(ch, projectId, e.id, { outputs: false }));
}

/** The expected output of an experiment run's dataset item, at the dataset version the experiment ran on. */
export async function experimentExpectedOutput(sql: Sql, run: { readonly experiment_id: string; readonly project_id: number; readonly dataset_item_id: string }): Promise<unknown> {
  if (!run.experiment_id || !run.dataset_item_id) return undefined;
  const [row] = await sql.query<{ expected_output: unknown }>(
    `SELECT i.expected_output FROM experiments e JOIN dataset_items i ON i.dataset_id = e.dataset_id
      WHERE e.id = $1::uuid AND e.project_id = $2 AND i.item_id = $3
        AND i.from_version <= e.dataset_version AND (i.to_version IS NULL OR i.to_version > e.dataset_version)`,
    [run.experiment_id, run.project_id, run.dataset_item_id],
  );
  const v = row?.expected_output;
  return v === null || v === undefined ? undefined : v; // jsonb arrives parsed (a JSON string as a string)
}
