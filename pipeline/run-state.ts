/**
 * Everything the pipeline keeps in memory about a run between parts, in one record per run (RunEntry), under one
 * key (core/events/run-key.ts), with one way to drop it (`forget`, `forgetAll`) and one eviction policy.
 *
 * A record holds:
 * - the run's draft: the run as the next version will be stored, which plugins change (`run`, `fresh`), and the
 *   plugins' state for the run (`pluginState`);
 * - what this process last wrote of its cost row (run-writer.ts costRowsDue);
 * - its known stored events, when every event of the run that storage holds went through this process (so its
 *   duplicates are found without asking storage: duplicate-index.ts).
 *
 * Why a record may be dropped, and what that costs: every version of a run is written with the part that made it,
 * so a dropped record loses nothing that is not stored. The next part with the run loads it from storage. Whoever
 * drops a record because an attempt failed (a part, a rebalance) calls `forget`: the failed attempt may have stored
 * some events without the run's new counters, and the retry finds them again as duplicates of a run loaded from
 * storage, which the part processor recounts.
 *
 * Bounds: at most `capacity` records (least recently used dropped first); known events at most MAX_KNOWN_IDS in all
 * (the runs known longest lose them first), MAX_KNOWN_IDS_PER_RUN per run, for at most MAX_KNOWN_AGE_MS (retention
 * deletes old events), and none once the run has ended.
 */
import type { RunRecord } from "../core/events/run.js";
import type { EventKey, RunKey } from "../core/events/run-key.js";
import type { RunDraft } from "../plugins/plugin.js";

export const MAX_KNOWN_IDS = 200_000;
export const MAX_KNOWN_IDS_PER_RUN = 2_000;
export const MAX_KNOWN_AGE_MS = 3_600_000;

export interface RunEntry extends RunDraft {
  run: RunRecord;
  fresh: boolean;
  /** The cost facts of the run's last run_costs row this process wrote, and when (run-writer.ts costRowsDue). */
  costRow?: { facts: string; writtenAt: number };
  /** The run's stored events, when all of them went through this process. */
  known?: { readonly ids: Set<EventKey>; readonly since: number };
}

export interface KnownLimits {
  readonly maxIds: number;
  readonly maxIdsPerRun: number;
  readonly maxAgeMs: number;
}

export class RunState {
  /** In least-recently-used order (Map iteration order). */
  private readonly entries = new Map<RunKey, RunEntry>();
  /** Runs with known events, in the order they became known. */
  private readonly knownRuns = new Set<RunKey>();
  private knownIds = 0;

  constructor(
    readonly capacity: number,
    private readonly limits: KnownLimits = { maxIds: MAX_KNOWN_IDS, maxIdsPerRun: MAX_KNOWN_IDS_PER_RUN, maxAgeMs: MAX_KNOWN_AGE_MS },
    private readonly now: () => number = Date.now,
  ) {}

  /** The run's record, now the most recently used. */
  get(key: RunKey): RunEntry | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** A new record for a run loaded from storage (or new: `fresh`), replacing any other. */
  admit(key: RunKey, run: RunRecord, fresh: boolean): RunEntry {
    this.forget(key);
    const entry: RunEntry = { run, fresh, pluginState: new Map() };
    this.entries.set(key, entry);
    this.evict();
    return entry;
  }

  /** Drops the run's record: the next part with the run loads it from storage. */
  forget(key: RunKey): void {
    if (!this.entries.has(key)) return;
    this.forgetKnown(key);
    this.entries.delete(key);
  }

  forgetAll(): void {
    for (const key of [...this.entries.keys()]) this.forget(key);
  }

  // Known events (duplicate-index.ts).

  /** Storage holds nothing of the run: from now on all its stored events are recorded here. */
  startKnowing(key: RunKey): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.forgetKnown(key);
    entry.known = { ids: new Set(), since: this.now() };
    this.knownRuns.add(key);
  }

  /** Whether every stored event of the run is known here. */
  knowsAllStored(key: RunKey): boolean {
    const known = this.entries.get(key)?.known;
    if (known === undefined) return false;
    if (this.now() - known.since <= this.limits.maxAgeMs) return true;
    this.forgetKnown(key);
    return false;
  }

  /** Whether the event is a stored event of a run whose stored events are known. */
  isKnownStored(key: RunKey, event: EventKey): boolean {
    return this.entries.get(key)?.known?.ids.has(event) === true;
  }

  /** Records a stored event of a run whose stored events are known; others are ignored. */
  recordStored(key: RunKey, event: EventKey): void {
    const known = this.entries.get(key)?.known;
    if (known === undefined || known.ids.has(event)) return;
    known.ids.add(event);
    this.knownIds++;
    if (known.ids.size > this.limits.maxIdsPerRun) this.forgetKnown(key);
    while (this.knownIds > this.limits.maxIds) this.forgetKnown(this.knownRuns.keys().next().value!);
  }

  /** The run ended: no later event of it is expected, so its known events are let go. */
  ended(key: RunKey): void {
    this.forgetKnown(key);
  }

  /** What is held in memory, for the pipeline's counters. */
  get sizes(): { runs: number; knownRuns: number; knownIds: number } {
    return { runs: this.entries.size, knownRuns: this.knownRuns.size, knownIds: this.knownIds };
  }

  private forgetKnown(key: RunKey): void {
    if (!this.knownRuns.delete(key)) return;
    const entry = this.entries.get(key);
    if (entry?.known) {
      this.knownIds -= entry.known.ids.size;
      entry.known = undefined;
    }
  }

  /** Least recently used first. */
  private evict(): void {
    while (this.entries.size > this.capacity) this.forget(this.entries.keys().next().value!);
  }
}
