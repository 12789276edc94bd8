/**
 * Bounded LRU of the runs the pipeline is working on, keyed by `${user_id}:${sdk_run_id}`. A miss loads the run
 * from the EventStore (its latest stored version). Entries are dropped when a batch fails, so a retried batch
 * starts from what is actually stored rather than from a half-applied draft.
 */
import type { RunRecord } from "../core/events/run.js";

export interface CachedRun {
  run: RunRecord;
  /** No stored row and no event applied yet. */
  fresh: boolean;
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
