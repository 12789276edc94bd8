/**
 * Runs per agent, counted exactly once (Postgres `agents`, `agent_run_starts`): the first run_start of a run creates
 * its agent row if needed and adds one to its total_runs. Parts can be processed twice (at-least-once), so each
 * counted run is recorded in agent_run_starts and only runs inserted there for the first time are added, in one
 * transaction per call: the count is exact under replays (plugins/cost-aggregation.ts gathers the starts).
 */
import { defineProcedure, type Sql } from "../core/ports/sql.js";

/** A run's first run_start, as the pipeline saw it. */
export interface AgentRunStart {
  project_id: number;
  external_id: string;
  agent_name: string;
  framework: string;
  started_at: string;
}

/** Creates missing agents and adds each run not yet counted to its agent's total_runs, exactly once. */
export async function countAgentRuns(sql: Sql, starts: readonly AgentRunStart[]): Promise<void> {
  if (starts.length > 0) await sql.run(countAgentRunsProcedure, starts);
}

/** countAgentRuns' transaction, run where the connection lives (one call from the pipeline thread). */
export const countAgentRunsProcedure = defineProcedure("stores.count-agent-runs", async (sql, starts: readonly AgentRunStart[]) => {
  const col = <K extends keyof AgentRunStart>(k: K) => starts.map((s) => s[k]);
  await sql.transaction(async (tx) => {
    // Only for projects that still exist (a project deleted while its events were in flight must not wedge the pipeline).
    await tx.query(
      `INSERT INTO agents (project_id, name, framework)
       SELECT DISTINCT ON (s.project_id, s.name) s.project_id, s.name, s.framework
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS s(project_id, name, framework)
       JOIN projects p ON p.id = s.project_id
       ORDER BY s.project_id, s.name, s.framework DESC
       ON CONFLICT (project_id, name) DO NOTHING`,
      [col("project_id"), col("agent_name"), col("framework")],
    );
    await tx.query(
      `WITH fresh AS (
         INSERT INTO agent_run_starts (project_id, external_id, agent_id, started_at)
         SELECT s.project_id, s.external_id, a.id, s.started_at
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::timestamptz[]) AS s(project_id, external_id, name, started_at)
         JOIN agents a ON a.project_id = s.project_id AND a.name = s.name
         ON CONFLICT (project_id, external_id) DO NOTHING
         RETURNING agent_id
       )
       UPDATE agents SET total_runs = agents.total_runs + c.n, updated_at = now()
       FROM (SELECT agent_id, count(*) AS n FROM fresh GROUP BY agent_id) c
       WHERE agents.id = c.agent_id`,
      [col("project_id"), col("external_id"), col("agent_name"), col("started_at")],
    );
    // An agent created before its framework was known learns it from a later run_start.
    await tx.query(
      `UPDATE agents SET framework = s.framework, updated_at = now()
       FROM unnest($1::bigint[], $2::text[], $3::text[]) AS s(project_id, name, framework)
       WHERE agents.project_id = s.project_id AND agents.name = s.name AND agents.framework = '' AND s.framework <> ''`,
      [col("project_id"), col("agent_name"), col("framework")],
    );
  });
});
