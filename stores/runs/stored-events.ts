/**
 * The pipeline's reads of agent_events (ClickHouse), which keep run counters exact under at-least-once delivery
 * (docs/PIPELINE.md): which runs and events are stored already, and the true event counts and LLM-call totals of
 * runs whose cached counters cannot be trusted. Each reads agent_events by (a prefix of) its primary key
 * (user_id, run_id, event_id) or by project and run. What to ask, and what an answer means for a part, is the
 * pipeline's (pipeline/stored-events.ts, pipeline/run-writer.ts).
 */
import type { ClickHouse } from "../../core/ports/clickhouse.js";

const CHUNK = 2000;

/** A run as sent by one user: the key findRunsWithEvents answers with. */
export const senderRun = (r: { readonly user_id: number; readonly run_id: string }): string => `${r.user_id} ${r.run_id.toLowerCase()}`;

/**
 * Those of `runs` (as senderRun keys) with at least one stored event sent by the same user. A run id is a function
 * of the project and the client's run id (core/ids.ts runIdFor), so it names one tenant's run; the sender narrows
 * it to the events an event of that sender can be a copy of (a replay carries its sender), and keeps the look-up on
 * agent_events' primary key (user_id, run_id, event_id).
 */
export async function findRunsWithEvents(ch: ClickHouse, runs: readonly { user_id: number; run_id: string }[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < runs.length; i += CHUNK) {
    const chunk = runs.slice(i, i + CHUNK);
    const rows = await ch.query<{ uid: string | number; rid: string }>(
      `SELECT DISTINCT user_id AS uid, toString(run_id) AS rid FROM agent_events
       WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)}`,
      { users: [...new Set(chunk.map((r) => r.user_id))], runs: chunk.map((r) => r.run_id) },
    );
    for (const r of rows) found.add(senderRun({ user_id: Number(r.uid), run_id: r.rid }));
  }
  return found;
}

/** A stored event found by storedEventIds: its sender, run and id, as ClickHouse answers them. */
export interface StoredEventId {
  readonly uid: string | number;
  readonly rid: string;
  readonly id: string;
}

/**
 * The stored events among `ids` sent by one of `users` to one of `runs`. Users and runs only narrow the look-up to
 * the primary key: an id may be stored for another of the runs, or tenant, than the one asked about, which the
 * caller tells apart. No DISTINCT (slower here: docs/BENCHMARKS.md, "ClickHouse calls"); unmerged copies of a row
 * just repeat an id.
 */
export const storedEventIds = (ch: ClickHouse, users: readonly number[], runs: readonly string[], ids: readonly string[]): Promise<StoredEventId[]> =>
  ch.query<StoredEventId>(
    `SELECT user_id AS uid, toString(run_id) AS rid, toString(event_id) AS id FROM agent_events
     WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)} AND event_id IN {ids:Array(UUID)}`,
    { users, runs, ids },
  );

/** Distinct stored events and error events per run_id, and the time of its latest. */
export async function countStoredEvents(
  ch: ClickHouse,
  runs: readonly { project_id: number; run_id: string }[],
): Promise<Map<string, { events: number; errors: number; lastAt: string }>> {
  const out = new Map<string, { events: number; errors: number; lastAt: string }>();
  if (runs.length === 0) return out;
  // The alias must not be "run_id": ClickHouse aliases shadow columns, also in WHERE.
  const rows = await ch.query<{ rid: string; events: string | number; errors: string | number; last_at: string }>(
    `SELECT toString(run_id) AS rid, uniqExact(event_id) AS events, uniqExactIf(event_id, event_type = 'error') AS errors,
            max(occurred_at) AS last_at
     FROM agent_events
     WHERE project_id IN {projects:Array(UInt64)} AND run_id IN {runs:Array(UUID)}
     GROUP BY run_id`,
    { projects: [...new Set(runs.map((r) => r.project_id))], runs: runs.map((r) => r.run_id) },
  );
  for (const r of rows) out.set(r.rid.toLowerCase(), { events: Number(r.events), errors: Number(r.errors), lastAt: String(r.last_at) });
  return out;
}

export interface StoredLlmTotals {
  readonly calls: number;
  readonly prompt: number;
  readonly completion: number;
  readonly total: number;
  readonly cost: number;
  readonly computed: number;
  readonly client: number;
}

/**
 * LLM-call totals per run_id from the stored events (each event once), for runs whose cached counters cannot be
 * trusted: the calls' costs were written into their events before storage (plugins/llm-calls.ts), so the sums
 * equal what the pipeline added up.
 */
export async function sumStoredLlmCalls(ch: ClickHouse, runs: readonly { project_id: number; run_id: string }[]): Promise<Map<string, StoredLlmTotals>> {
  const out = new Map<string, StoredLlmTotals>();
  if (runs.length === 0) return out;
  const rows = await ch.query<Record<string, string | number>>(
    `SELECT toString(run_id) AS rid, count() AS calls,
            sum(JSONExtractUInt(payload, 'prompt_tokens')) AS prompt,
            sum(JSONExtractUInt(payload, 'completion_tokens')) AS completion,
            sum(if(JSONExtractUInt(payload, 'total_tokens') > 0, JSONExtractUInt(payload, 'total_tokens'),
                   JSONExtractUInt(payload, 'prompt_tokens') + JSONExtractUInt(payload, 'completion_tokens'))) AS total,
            sum(JSONExtractFloat(payload, 'cost_usd')) AS cost,
            countIf(JSONExtractString(payload, 'cost_source') = 'computed') AS computed,
            countIf(JSONExtractString(payload, 'cost_source') = 'client') AS client
     FROM (SELECT run_id, event_id, any(payload) AS payload FROM agent_events
           WHERE project_id IN {projects:Array(UInt64)} AND run_id IN {runs:Array(UUID)} AND event_type = 'step'
           GROUP BY run_id, event_id)
     WHERE JSONExtractString(payload, 'kind') = 'llm' AND JSONExtractString(payload, 'phase') = 'end'
     GROUP BY run_id`,
    { projects: [...new Set(runs.map((r) => r.project_id))], runs: runs.map((r) => r.run_id) },
  );
  for (const r of rows) {
    out.set(String(r.rid).toLowerCase(), {
      calls: Number(r.calls), prompt: Number(r.prompt), completion: Number(r.completion), total: Number(r.total),
      cost: Number(r.cost), computed: Number(r.computed), client: Number(r.client),
    });
  }
  return out;
}
