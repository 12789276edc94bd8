/**
 * The anomaly trigger's state, kept in the firing keys it has dispatched (alert_firings, migration 040): an episode
 * of an agent is `episode:<n>:fired:<agent>` when it left its band and `episode:<n>:resolved:<agent>` when it came
 * back. Reading them back tells the next sweep, in any process, whether an agent is out of its band already.
 */
import type { Sql } from "../../core/ports/sql.js";

export interface EpisodeState {
  /** The latest episode's number (0: none yet). */
  readonly n: number;
  /** Whether that episode is still open (fired, not resolved). */
  readonly open: boolean;
}

export const EPISODE_PREFIX = "episode:";
export const episodeKey = (n: number, phase: "fired" | "resolved", agent: string): string => `${EPISODE_PREFIX}${n}:${phase}:${agent}`;

/** The latest episode of each agent a rule has fired for. */
export async function episodeStates(sql: Sql, ruleId: number): Promise<Map<string, EpisodeState>> {
  const rows = await sql.query<{ dedup_key: string }>(
    `SELECT dedup_key FROM alert_firings WHERE rule_id = $1 AND starts_with(dedup_key, $2)`,
    [ruleId, EPISODE_PREFIX],
  );
  const out = new Map<string, EpisodeState>();
  for (const { dedup_key } of rows) {
    const m = /^episode:(\d+):(fired|resolved):(.*)$/s.exec(dedup_key);
    if (!m) continue;
    const n = Number(m[1]);
    const agent = m[3]!;
    const prev = out.get(agent);
    if (prev && (prev.n > n || (prev.n === n && !prev.open))) continue;
    out.set(agent, { n, open: m[2] === "fired" });
  }
  return out;
}
