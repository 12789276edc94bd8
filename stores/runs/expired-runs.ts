/**
 * Retention's SQL (stores/retention.ts decides whose runs and when): a user's runs whose last activity is before a
 * cutoff, and deleting every row of some runs from each table that holds run data.
 *
 * Deletes are lightweight `DELETE FROM` (ClickHouse ≥ 23.3): a mutation that marks the matching rows in the parts
 * that hold them (a `_row_exists` mask, written only for those parts) and returns once applied, so reads no longer
 * see them; merges drop the rows physically later. Per-user retention rules out dropping monthly partitions (one
 * partition mixes users with different retention), and a TTL cannot read a per-user setting. docs/STORAGE.md has
 * the figures.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { toChTime } from "./event-store.js";

export interface ExpiredRun {
  readonly run_id: string;
  readonly external_id: string;
}

/** Tables keyed by run_id, children first; run_costs and agent_runs (keyed by external_id) go last. */
const BY_RUN_ID = ["agent_events", "llm_calls", "scores", "run_text"] as const;

/** Up to `limit` of the user's runs whose last event is before `cutoff` (the latest version of each run decides). */
export async function findExpiredRuns(ch: ClickHouse, projectId: number, cutoff: Date, limit: number): Promise<ExpiredRun[]> {
  const rows = await ch.query<{ run_id: string; external_id: string }>(
    `SELECT toString(argMax(run_id, version)) AS run_id, external_id
       FROM agent_runs
      WHERE project_id = {pid:UInt64}
      GROUP BY external_id
     HAVING max(last_event_at) < {cutoff:DateTime64(3, 'UTC')}
      LIMIT {take:UInt32}`,
    { pid: projectId, cutoff: toChTime(cutoff.toISOString()), take: limit },
  );
  return rows.map((r) => ({ run_id: String(r.run_id), external_id: String(r.external_id) }));
}

/**
 * Deletes every row of these runs (events and so spans, LLM calls, scores, search text, log records, cost rows, the run's versions). The run
 * itself goes last, so a sweep cut short finds the same runs again next time.
 */
export async function deleteRuns(ch: ClickHouse, projectId: number, runs: readonly ExpiredRun[]): Promise<void> {
  if (runs.length === 0) return;
  const ids = runs.map((r) => r.run_id);
  const names = runs.map((r) => r.external_id);
  for (const table of BY_RUN_ID) {
    await ch.exec(`DELETE FROM ${table} WHERE project_id = {pid:UInt64} AND run_id IN {ids:Array(UUID)}`, { pid: projectId, ids });
  }
  // An OTLP trace's log records (its run's id is the trace id); the project's own log lines leave with their TTL.
  await ch.exec("DELETE FROM otel_logs WHERE project_id = {pid:UInt64} AND trace_id IN {names:Array(String)}", { pid: projectId, names });
  for (const table of ["run_costs", "agent_runs"]) {
    await ch.exec(`DELETE FROM ${table} WHERE project_id = {pid:UInt64} AND external_id IN {names:Array(String)}`, { pid: projectId, names });
  }
}
