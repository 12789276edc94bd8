/**
 * Storage look-ups that keep run counters exact under at-least-once delivery (see docs/PIPELINE.md):
 * which of a batch's event_ids are already stored, and the true event counts of runs whose cached
 * counters cannot be trusted. All read agent_events by (a prefix of) its primary key (user_id, run_id, event_id).
 */
import { logKey, type LoggedEvent } from "../core/events/schema.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";

const CHUNK = 2000;

/**
 * What makes an event the same event: its owner, run and id together (storedEventKey). An event_id alone is not
 * enough: another tenant may send (by accident or on purpose) an id that is already stored for someone else,
 * and that must not make this tenant's event a "duplicate".
 */
export const storedEventKey = (e: Pick<LoggedEvent, "user_id" | "run_id" | "event_id">): string =>
  `${runKey(e)}:${e.event_id.toLowerCase()}`;

/** `${user_id}:${run_id}` (lowercase): a run, as findRunsWithEvents answers and storedEventKey begins. */
const runKey = (e: { user_id: number; run_id: string }): string => `${e.user_id}:${e.run_id.toLowerCase()}`;

/**
 * storedEventKey of each of `events` that agent_events already holds. Events of runs in `cachedRuns` (log keys of
 * runs this process has processed, which have stored events) are looked up by id at once; those of `notLookedUp`
 * (log keys of runs known to have no stored rows, pipeline/stored-runs.ts, or whose stored events the caller knows,
 * known-events.ts) not at all; `runKeys` are the events' log keys, when the caller has made them. For the others, one
 * look-up per run comes first (findRunsWithEvents), and only the events of runs that have any stored event are
 * looked up by id: a new run (every trace of an OTLP export, a run's first batch) cannot hold a stored copy. Same
 * answer, a fraction of the work: for 5,000 events the per-id look-up costs ~39 ms of CPU, the per-run one ~4
 * (bench:pipeline-storage).
 */
export async function findStoredEventIds(
  ch: ClickHouse,
  events: readonly LoggedEvent[],
  cachedRuns: ReadonlySet<string> = new Set(),
  notLookedUp: ReadonlySet<string> = new Set(),
  runKeys: readonly string[] = events.map(logKey),
): Promise<Set<string>> {
  const known: LoggedEvent[] = [];
  const unknown: LoggedEvent[] = [];
  for (let i = 0; i < events.length; i++) {
    const key = runKeys[i]!;
    if (cachedRuns.has(key)) known.push(events[i]!);
    else if (!notLookedUp.has(key)) unknown.push(events[i]!);
  }
  const [found, more] = await Promise.all([findStoredIds(ch, known), findStoredIdsOfRunsWithEvents(ch, unknown)]);
  for (const k of more) found.add(k);
  return found;
}

async function findStoredIdsOfRunsWithEvents(ch: ClickHouse, events: readonly LoggedEvent[]): Promise<Set<string>> {
  if (events.length === 0) return new Set();
  const runs = new Map(events.map((e) => [runKey(e), e]));
  const withEvents = await findRunsWithEvents(ch, [...runs.values()]);
  return findStoredIds(ch, events.filter((e) => withEvents.has(runKey(e))));
}

/** `${user_id}:${run_id}` of those of `runs` with at least one stored event. */
export async function findRunsWithEvents(ch: ClickHouse, runs: readonly { user_id: number; run_id: string }[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < runs.length; i += CHUNK) {
    const chunk = runs.slice(i, i + CHUNK);
    const rows = await ch.query<{ uid: string | number; rid: string }>(
      `SELECT DISTINCT user_id AS uid, toString(run_id) AS rid FROM agent_events
       WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)}`,
      { users: [...new Set(chunk.map((r) => r.user_id))], runs: chunk.map((r) => r.run_id) },
    );
    for (const r of rows) found.add(runKey({ user_id: Number(r.uid), run_id: r.rid }));
  }
  return found;
}

/** storedEventKey of each of `events` stored, looked up by event id. */
async function findStoredIds(ch: ClickHouse, events: readonly LoggedEvent[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < events.length; i += CHUNK) {
    const chunk = events.slice(i, i + CHUNK);
    // No DISTINCT (measured 3x slower here); unmerged copies of a row just repeat an id in the Set.
    const rows = await ch.query<{ uid: string | number; rid: string; id: string }>(
      `SELECT user_id AS uid, toString(run_id) AS rid, toString(event_id) AS id FROM agent_events
       WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)} AND event_id IN {ids:Array(UUID)}`,
      {
        users: [...new Set(chunk.map((e) => e.user_id))],
        runs: [...new Set(chunk.map((e) => e.run_id))],
        ids: chunk.map((e) => e.event_id),
      },
    );
    for (const r of rows) found.add(storedEventKey({ user_id: Number(r.uid), run_id: r.rid, event_id: r.id }));
  }
  return found;
}

/** Distinct stored events and error events per run_id, and the time of its latest. */
export async function countStoredEvents(
  ch: ClickHouse,
  runs: readonly { user_id: number; run_id: string }[],
): Promise<Map<string, { events: number; errors: number; lastAt: string }>> {
  const out = new Map<string, { events: number; errors: number; lastAt: string }>();
  if (runs.length === 0) return out;
  // The alias must not be "run_id": ClickHouse aliases shadow columns, also in WHERE.
  const rows = await ch.query<{ rid: string; events: string | number; errors: string | number; last_at: string }>(
    `SELECT toString(run_id) AS rid, uniqExact(event_id) AS events, uniqExactIf(event_id, event_type = 'error') AS errors,
            max(occurred_at) AS last_at
     FROM agent_events
     WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)}
     GROUP BY run_id`,
    { users: [...new Set(runs.map((r) => r.user_id))], runs: runs.map((r) => r.run_id) },
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
export async function sumStoredLlmCalls(ch: ClickHouse, runs: readonly { user_id: number; run_id: string }[]): Promise<Map<string, StoredLlmTotals>> {
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
           WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)} AND event_type = 'step'
           GROUP BY run_id, event_id)
     WHERE JSONExtractString(payload, 'kind') = 'llm' AND JSONExtractString(payload, 'phase') = 'end'
     GROUP BY run_id`,
    { users: [...new Set(runs.map((r) => r.user_id))], runs: runs.map((r) => r.run_id) },
  );
  for (const r of rows) {
    out.set(String(r.rid).toLowerCase(), {
      calls: Number(r.calls), prompt: Number(r.prompt), completion: Number(r.completion), total: Number(r.total),
      cost: Number(r.cost), computed: Number(r.computed), client: Number(r.client),
    });
  }
  return out;
}
