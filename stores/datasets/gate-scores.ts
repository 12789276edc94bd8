/**
 * The scores the activation gate counts for an experiment (docs/EVALUATION.md, The activation gate): only those given
 * by the project's evaluators, by reviewers, or through members' read+ingest keys (stores/scores.ts GATE_GIVERS) —
 * never those any ingest key may send, whether through the scores API or inside its events.
 *
 * Per item and repetition, the newest counted value of each score name given to any run of the experiment for that
 * item (numbers, and booleans as 1 and 0); each score's mean is over the items that have one. Runs are not what is
 * trusted here: any key of the project may send a run that names the experiment, but a run without a counted score
 * neither adds to a mean nor hides the counted score of an earlier run of its item.
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { GATE_GIVERS } from "../scores.js";

export type GateScores = Record<string, { mean: number | null; count: number }>;

const RUNS = "SELECT run_id FROM agent_runs WHERE project_id = {pid:UInt64} AND experiment_id = {eid:String}";

const COUNTED = `
  SELECT name, avg(v) AS mean, count() AS n
  FROM (SELECT r.item AS item, r.repetition AS repetition, s.name AS name, argMax(s.value_number, s.created_at) AS v
        FROM (SELECT run_id, name, value_number, created_at FROM scores FINAL
               WHERE project_id = {pid:UInt64} AND span_id = '' AND value_type IN ('number', 'boolean')
                 AND given_by IN {givers:Array(String)} AND run_id IN (${RUNS})) AS s
        JOIN (SELECT run_id, any(dataset_item_id) AS item, any(repetition) AS repetition FROM agent_runs
               WHERE project_id = {pid:UInt64} AND experiment_id = {eid:String} GROUP BY run_id) AS r ON r.run_id = s.run_id
        GROUP BY item, repetition, name)
  GROUP BY name
  ORDER BY name`;

/** Each score's mean and count over the experiment's items, from the scores the gate counts. */
export async function gateScores(ch: ClickHouse, projectId: number, experimentId: string): Promise<GateScores> {
  const rows = await ch.query<{ name: string; mean: number | string; n: number | string }>(COUNTED, { pid: projectId, eid: experimentId, givers: [...GATE_GIVERS] });
  return Object.fromEntries(rows.map((r) => [r.name, { mean: Number(r.mean), count: Number(r.n) }]));
}
