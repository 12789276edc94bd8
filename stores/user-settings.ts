/** A user's defaults for /improve (Postgres project_settings): provider, model and temperature. */
import type { Sql } from "../core/ports/sql.js";

export interface UserLlmSettings {
  provider: string | null;
  model: string | null;
  temperature: number | null;
}

export async function loadUserLlmSettings(sql: Sql, projectId: number): Promise<UserLlmSettings> {
  const rows = await sql.query<Record<string, unknown>>(
    "SELECT provider, model, temperature FROM project_settings WHERE project_id = $1",
    [projectId],
  );
  const r = rows[0];
  return {
    provider: r?.provider ? String(r.provider) : null,
    model: r?.model ? String(r.model) : null,
    temperature: r?.temperature === null || r?.temperature === undefined ? null : Number(r.temperature),
  };
}

/** Upserts the user's project_settings row (the /settings form and /improve's "save as defaults" both save through it). */
export async function saveUserLlmSettings(sql: Sql, projectId: number, s: UserLlmSettings): Promise<void> {
  await sql.query(
    `INSERT INTO project_settings (project_id, provider, model, temperature, updated_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (project_id) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model,
       temperature = EXCLUDED.temperature, updated_at = now()`,
    [projectId, s.provider, s.model, s.temperature],
  );
}
