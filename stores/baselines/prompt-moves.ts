/**
 * Moves of prompts' `production` label (Postgres project_audit_log: every move is audited by stores/prompts.ts as
 * `prompt.label`, `prompt.label_forced` past a gate, or `prompt.version` naming it among a new version's labels), a change point of the agents whose LLM calls use the prompt
 * (alerts/baselines/change-points.ts). The audit log is the only record of when a label moved; prompt_labels holds
 * where each label is now.
 */
import type { Sql } from "../../core/ports/sql.js";

export const PRODUCTION_LABEL = "production";

export interface LabelMove {
  readonly prompt: string;
  readonly version: number;
  /** The version it left (null: the label was new). */
  readonly from: number | null;
  readonly at: string;
}

/** The `production` label's moves of the named prompts in [since, until), oldest first (at most 200). */
export async function productionLabelMoves(sql: Sql, projectId: number, prompts: readonly string[], since: Date, until: Date): Promise<LabelMove[]> {
  if (prompts.length === 0) return [];
  const rows = await sql.query<{ prompt: string; version: string | number; from_version: string | number | null; at: string | Date }>(
    `SELECT * FROM (
       SELECT details->>'prompt' AS prompt, (details->>'version')::int AS version, (details->>'from')::int AS from_version, at
         FROM project_audit_log
        WHERE project_id = $1 AND details->>'prompt' = ANY($3::text[]) AND at >= $4 AND at < $5
          AND ((action IN ('prompt.label', 'prompt.label_forced') AND details->>'label' = $2)
            OR (action = 'prompt.version' AND details->'labels' @> jsonb_build_array($2::text)))
        ORDER BY at DESC LIMIT 200) latest
      ORDER BY at`,
    [projectId, PRODUCTION_LABEL, [...prompts], since.toISOString(), until.toISOString()],
  );
  return rows.map((r) => ({
    prompt: String(r.prompt), version: Number(r.version), from: r.from_version === null ? null : Number(r.from_version), at: new Date(r.at).toISOString(),
  }));
}
