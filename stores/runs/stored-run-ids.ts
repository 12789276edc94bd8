/**
 * The run ids storage holds (ClickHouse agent_runs and agent_events), read at start by the pipeline's stored-runs
 * filter (pipeline/stored-runs.ts) in slices of the id space, so that no read answers with every id at once.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";

/** The number of rows in agent_runs (run versions not yet merged included): what sizes the slices. */
export async function countRunRows(ch: ClickHouse): Promise<number> {
  const [{ runs }] = await ch.query<{ runs: string | number }>("SELECT count() AS runs FROM agent_runs");
  return Number(runs);
}

/**
 * The distinct run ids of slice `slice` of `slices` (by the id's hash) in both tables: a crash between storing a
 * part's events and its runs' rows leaves events without a run row.
 */
export const storedRunIdSlice = (ch: ClickHouse, slices: number, slice: number): Promise<{ r: string }[]> =>
  ch.query<{ r: string }>(
    `SELECT DISTINCT toString(run_id) AS r FROM (
       SELECT run_id FROM agent_runs WHERE cityHash64(run_id) % {slices:UInt32} = {slice:UInt32}
       UNION ALL
       SELECT run_id FROM agent_events WHERE cityHash64(run_id) % {slices:UInt32} = {slice:UInt32})`,
    { slices, slice },
  );
