/**
 * When config versions became active (agent_config_activations, written by stores/agent-registry.ts with each
 * activation): the markers of the runs charts (stores/runs/run-charts.ts, docs/DASHBOARD.md).
 */
import type { Sql } from "../core/ports/sql.js";

export interface ConfigActivation {
  readonly agent: string;
  readonly version: number;
  readonly at: string;
}

/** At most this many markers a chart shows (the latest ones of the range). */
export const MAX_ACTIVATIONS = 200;

/**
 * The project's activations within [from, to), oldest first, of the agents named (every agent when `agents` is
 * undefined); the latest MAX_ACTIVATIONS of them.
 */
export async function activationsBetween(sql: Sql, projectId: number, from: string, to: string, agents?: readonly string[]): Promise<ConfigActivation[]> {
  const rows = await sql.query<{ name: string; version: number; activated_at: string | Date }>(
    `SELECT * FROM (
       SELECT a.name, x.version, x.activated_at FROM agent_config_activations x JOIN agents a ON a.id = x.agent_id
        WHERE a.project_id = $1 AND x.activated_at >= $2 AND x.activated_at < $3 AND ($4::text[] IS NULL OR a.name = ANY($4::text[]))
        ORDER BY x.activated_at DESC LIMIT ${MAX_ACTIVATIONS}) latest
      ORDER BY activated_at, name`,
    [projectId, from, to, agents ? [...agents] : null],
  );
  return rows.map((r) => ({ agent: String(r.name), version: Number(r.version), at: new Date(r.activated_at).toISOString() }));
}
