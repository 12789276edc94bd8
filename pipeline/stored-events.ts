/**
 * Which of a part's events are already stored, asking storage as little as it can (see docs/PIPELINE.md): the
 * decision of what to ask about each event, and what a stored id means for it. The look-ups themselves are
 * stores/runs/stored-events.ts.
 */
import type { EventKey } from "../core/events/run-key.js";
import type { LoggedEvent } from "../core/events/schema.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { findRunsWithEvents, senderRun, storedEventIds } from "../stores/runs/stored-events.js";

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
    const rows = await storedEventIds(
      ch,
      [...new Set(chunk.map((i) => events[i]!.user_id))],
      [...new Set(chunk.map((i) => events[i]!.run_id))],
      chunk.map((i) => events[i]!.event_id),
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
