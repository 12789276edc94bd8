/**
 * Storage look-ups that keep run counters exact under at-least-once delivery (see docs/PIPELINE.md):
 * which of a part's events are already stored, and the true event counts of runs whose cached
 * counters cannot be trusted. All read agent_events by (a prefix of) its primary key (user_id, run_id, event_id).
 */
import type { EventKey } from "../core/events/run-key.js";
import type { LoggedEvent } from "../core/events/schema.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";

const CHUNK = 2000;

/**
 * The EventKey (core/events/run-key.ts) of each of `events` that agent_events already holds. `lookUp` says how to
 * ask about an event (by its index):
 * - "by-id": at once, by id (runs this process has worked on, which have stored events);
 * - "skip": not at all (runs storage holds nothing of, pipeline/stored-runs.ts, or whose stored events the caller
 *   knows, run-state.ts);
 * - "by-run": one look-up per run first (findRunsWithEvents), and by id only the events of runs that have any
 *   stored event: a new run (every trace of an OTLP export, a run's first part) cannot hold a stored copy.
 * Same answer, a fraction of the work (docs/BENCHMARKS.md, "Smaller benches": bench:pipeline-storage).
 */
export type LookUp = "by-id" | "skip" | "by-run";

export async function findStoredEvents(
  ch: ClickHouse,
  events: readonly LoggedEvent[],
  keys: readonly EventKey[],
  lookUp: (index: number) => LookUp,
): Promise<Set<EventKey>> {
  const byId: number[] = [];
  const byRun: number[] = [];
  for (let i = 0; i < events.length; i++) {
    const how = lookUp(i);
    if (how === "by-id") byId.push(i);
    else if (how === "by-run") byRun.push(i);
  }
  const found = new Set<EventKey>();
  const [direct, ofRuns] = await Promise.all([findStoredIds(ch, events, keys, byId), findStoredIdsOfRunsWithEvents(ch, events, keys, byRun)]);
  for (const k of direct) found.add(k);
  for (const k of ofRuns) found.add(k);
  return found;
}

async function findStoredIdsOfRunsWithEvents(ch: ClickHouse, events: readonly LoggedEvent[], keys: readonly EventKey[], indexes: readonly number[]): Promise<EventKey[]> {
  if (indexes.length === 0) return [];
  const runs = new Map<string, LoggedEvent>();
  for (const i of indexes) runs.set(senderRun(events[i]!), events[i]!);
  const withEvents = await findRunsWithEvents(ch, [...runs.values()]);
  return findStoredIds(ch, events, keys, indexes.filter((i) => withEvents.has(senderRun(events[i]!))));
}

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

/** The keys of those of `events` (at `indexes`) that are stored, looked up by event id. */
async function findStoredIds(ch: ClickHouse, events: readonly LoggedEvent[], keys: readonly EventKey[], indexes: readonly number[]): Promise<EventKey[]> {
  const found: EventKey[] = [];
  for (let c = 0; c < indexes.length; c += CHUNK) {
    const chunk = indexes.slice(c, c + CHUNK);
    // The events asked about, by id: an id stored for another run (or tenant) is not this event.
    const asked = new Map<string, number[]>();
    for (const i of chunk) {
      const id = events[i]!.event_id.toLowerCase();
      const same = asked.get(id);
      if (same) same.push(i);
      else asked.set(id, [i]);
    }
    // No DISTINCT (slower here: docs/BENCHMARKS.md, "ClickHouse calls"); unmerged copies of a row just repeat an id.
    const rows = await ch.query<{ uid: string | number; rid: string; id: string }>(
      `SELECT user_id AS uid, toString(run_id) AS rid, toString(event_id) AS id FROM agent_events
       WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)} AND event_id IN {ids:Array(UUID)}`,
      {
        users: [...new Set(chunk.map((i) => events[i]!.user_id))],
        runs: [...new Set(chunk.map((i) => events[i]!.run_id))],
        ids: chunk.map((i) => events[i]!.event_id),
      },
    );
    for (const r of rows) {
      for (const i of asked.get(r.id.toLowerCase()) ?? []) {
        const e = events[i]!;
        if (e.user_id === Number(r.uid) && e.run_id.toLowerCase() === r.rid.toLowerCase()) found.push(keys[i]!);
      }
    }
  }
  return found;
}

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
