/**
 * Bounded LRU of the runs the pipeline is working on, keyed by `${user_id}:${sdk_run_id}`. A miss loads the run
 * from the EventStore (its latest stored version). Entries are dropped when a batch fails, so a retried batch
 * starts from what is actually stored rather than from a half-applied draft.
 */
import { costFacts } from "../core/clickhouse/event-store.js";
import type { RunRecord } from "../core/events/run.js";

export interface CachedRun {
  run: RunRecord;
  /** No stored row and no event applied yet. */
  fresh: boolean;
  /** The cost facts (costFactsKey) of the run's last run_costs row this process wrote, and when (see costRowsDue). */
  costRow?: { facts: string; writtenAt: number };
  /** The shape (deferred-runs.ts runShape) of the run's last version this process wrote; unset before its first. */
  written?: string;
}

/**
 * A cost row is written again at least this often even when nothing changed, so a row lost behind the cache's
 * back (retention deleting an idle run the cache still holds) comes back.
 */
const COST_ROW_REFRESH_MS = 3_600_000;

/**
 * A run's cost facts (event-store.ts costFacts: what its run_costs row says apart from the version) as one string to
 * compare, their values joined: a part under load touches thousands of runs, most of whose costs did not change, and
 * this is ~0.85 µs a run against ~1.2 for JSON.stringify. No fact holds U+0000 (the value rules replace it).
 */
const costFactsKey = (r: RunRecord): string => Object.values(costFacts(r)).join("\u0000");

/**
 * The runs of `entries` whose run_costs row must be written with this version: their cost facts changed since
 * this process last wrote them (or it never did), or that row is old. `written` records them once stored.
 */
export function costRowsDue(entries: Iterable<CachedRun>, now = Date.now()): { runs: RunRecord[]; written(): void } {
  const due: [CachedRun, string][] = [];
  for (const entry of entries) {
    const facts = costFactsKey(entry.run);
    if (entry.costRow?.facts === facts && now - entry.costRow.writtenAt < COST_ROW_REFRESH_MS) continue;
    due.push([entry, facts]);
  }
  return {
    runs: due.map(([entry]) => entry.run),
    written: () => {
      for (const [entry, facts] of due) entry.costRow = { facts, writtenAt: now };
    },
  };
}

export class RunCache {
  private readonly map = new Map<string, CachedRun>();

  constructor(readonly capacity: number) {}

  get(key: string): CachedRun | undefined {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      // Re-insert to mark as most recently used (Map iterates in insertion order).
      this.map.delete(key);
      this.map.set(key, hit);
    }
    return hit;
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  set(key: string, value: CachedRun): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value!);
  }

  delete(key: string): void {
    this.map.delete(key);
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
