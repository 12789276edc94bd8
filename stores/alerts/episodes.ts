/**
 * The state of the triggers that notify once per episode (anomaly, slo_burn_rate), kept in the firing keys they have
 * dispatched (alert_firings, migration 040): an episode of a subject (an agent, a burn speed) is
 * `episode:<n>:fired:<subject>` when it starts and `episode:<n>:resolved:<subject>` when it ends. Reading them back
 * tells the next sweep, in any process, whether a subject's episode is open already.
 */
import type { Sql } from "../../core/ports/sql.js";

export interface EpisodeState {
  /** The latest episode's number (0: none yet). */
  readonly n: number;
  /** Whether that episode is still open (fired, not resolved). */
  readonly open: boolean;
}

export const EPISODE_PREFIX = "episode:";
const episodeKey = (n: number, phase: "fired" | "resolved", agent: string): string => `${EPISODE_PREFIX}${n}:${phase}:${agent}`;

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

/**
 * What a sweep that finds the subject `active` (out of its band, burning) or not notifies: the firing that starts
 * episode n + 1, the one that resolves the open episode n, or nothing when the state is unchanged.
 */
export function episodeChange(states: ReadonlyMap<string, EpisodeState>, subject: string, active: boolean): { key: string; state: "fired" | "resolved" } | undefined {
  const e = states.get(subject) ?? { n: 0, open: false };
  if (active === e.open) return undefined;
  return active ? { key: episodeKey(e.n + 1, "fired", subject), state: "fired" } : { key: episodeKey(e.n, "resolved", subject), state: "resolved" };
}
