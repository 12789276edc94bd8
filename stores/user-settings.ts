/** A user's defaults for /improve (Postgres user_settings): provider, model and temperature. */
import type { Sql } from "../core/ports/sql.js";

export interface UserLlmSettings {
  provider: string | null;
  model: string | null;
  temperature: number | null;
}

export async function loadUserLlmSettings(sql: Sql, userId: number): Promise<UserLlmSettings> {
  const rows = await sql.query<Record<string, unknown>>(
    "SELECT provider, model, temperature FROM user_settings WHERE user_id = $1",
    [userId],
  );
  const r = rows[0];
  return {
    provider: r?.provider ? String(r.provider) : null,
    model: r?.model ? String(r.model) : null,
    temperature: r?.temperature === null || r?.temperature === undefined ? null : Number(r.temperature),
  };
}

/** Upserts the user's user_settings row (the /settings form and /improve's "save as defaults" both save through it). */
export async function saveUserLlmSettings(sql: Sql, userId: number, s: UserLlmSettings): Promise<void> {
  await sql.query(
    `INSERT INTO user_settings (user_id, provider, model, temperature, updated_at) VALUES ($1, $2, $3, $4, now())
     ON CONFLICT (user_id) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model,
       temperature = EXCLUDED.temperature, updated_at = now()`,
    [userId, s.provider, s.model, s.temperature],
  );
}
