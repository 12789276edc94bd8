/**
 * Everything the pipeline keeps in memory about a run between parts, in one record per run (RunEntry), under one
 * key (core/events/run-key.ts), with one way to drop it (`forget`, `forgetAll`) and one eviction policy.
 *
 * A record holds:
 * - the run's draft: the run as the next version will be stored, which plugins change (`run`, `fresh`), and the
 *   plugins' state for the run (`pluginState`);
 * - what this process last wrote of it: the shape of its last version (run-writer.ts runShape) and its cost row's
 *   facts (run-writer.ts costRowsDue);
 * - whether its newest version is held back to the end of the log batch (`held`, run-writer.ts);
 * - its known stored events, when every event of the run that storage holds went through this process (so its
 *   duplicates are found without asking storage: duplicate-index.ts).
 *
 * Why a record may be dropped, and what that costs: the next part with the run loads it from storage, and
 * its counters are recounted from the stored events where they cannot be trusted. Whoever drops a record because
 * an attempt failed (a part, a rebalance) calls `forget`: a failed insert may have stored some of its events, and a
 * held version is then not written; the run is marked to reconcile (its stored row may lack counts of stored
 * events) and recounted when it is next loaded, or at the log batch's end (`takeHeld`).
 *
 * Bounds: at most `capacity` records (least recently used dropped first; a record whose version is held is kept
 * until written); known events at most MAX_KNOWN_IDS in all (the runs known longest lose them first),
 * MAX_KNOWN_IDS_PER_RUN per run, for at most MAX_KNOWN_AGE_MS (retention deletes old events), and none once the
 * run has ended.
 */
import type { RunRecord } from "../core/events/run.js";
import type { EventKey, RunKey } from "../core/events/run-key.js";
import type { RunDraft } from "../plugins/plugin.js";

export const MAX_KNOWN_IDS = 200_000;
export const MAX_KNOWN_IDS_PER_RUN = 2_000;
export const MAX_KNOWN_AGE_MS = 3_600_000;

/** One holding of a run's version: a run held again by a later part is a new holding, so an earlier write does not end it. */
export type Holding = { readonly heldAt: number };

export interface RunEntry extends RunDraft {
  run: RunRecord;
  fresh: boolean;
  /** The cost facts of the run's last run_costs row this process wrote, and when (run-writer.ts costRowsDue). */
  costRow?: { facts: string; writtenAt: number };
  /** The shape (run-writer.ts runShape) of the run's last version this process wrote; unset before its first. */
  written?: string;
  /** Set while the run's newest version waits for the log batch's end. */
  held?: Holding;
  /** The run's stored events, when all of them went through this process. */
  known?: { readonly ids: Set<EventKey>; readonly since: number };
}

/** Which run: enough to load it and count its stored events. */
export interface RunRef {
  readonly user_id: number;
  readonly external_id: string;
  readonly run_id: string;
}

export interface KnownLimits {
  readonly maxIds: number;
  readonly maxIdsPerRun: number;
  readonly maxAgeMs: number;
}

export class RunState {
  /** In least-recently-used order (Map iteration order). */
  private readonly entries = new Map<RunKey, RunEntry>();
  /** Runs whose version is held: an index of `entries`, for the log batch's end. */
  private readonly heldRuns = new Set<RunKey>();
  /** Runs whose stored row may lack counts of stored events (a held version was dropped). */
  private readonly toReconcile = new Map<RunKey, RunRef>();
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

  /** Drops the run's record: the next part loads it from storage; a held version is reconciled instead of written. */
  forget(key: RunKey): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    if (entry.held) this.toReconcile.set(key, refOf(entry.run));
    this.heldRuns.delete(key);
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

  // Held versions (run-writer.ts).

  /** The run's newest version waits for the log batch's end; returns the holding. */
  hold(key: RunKey, entry: RunEntry): Holding {
    entry.held = { heldAt: this.now() };
    if (this.entries.get(key) !== entry) this.entries.set(key, entry); // evicted during its part: kept until written
    this.heldRuns.add(key);
    return entry.held;
  }

  /** A write of the run's newest state succeeded: the holding ends, unless the run was held again since. */
  release(key: RunKey, entry: RunEntry, holding: Holding | undefined): void {
    if (holding === undefined || entry.held !== holding) return;
    entry.held = undefined;
    if (this.entries.get(key) === entry) this.heldRuns.delete(key);
  }

  /** Whether the run, just loaded from storage, must have its counters recounted (asked once per load). */
  reconcileOnLoad(key: RunKey): boolean {
    return this.toReconcile.delete(key);
  }

  /** Whether any version is held or any run is left to reconcile. */
  get nothingHeld(): boolean {
    return this.heldRuns.size === 0 && this.toReconcile.size === 0;
  }

  /**
   * Every held run, to write, and the runs still to reconcile (to load, recount and write); `written` lets them go
   * once stored (a run held or forgotten again meanwhile stays).
   */
  takeHeld(): { held: { key: RunKey; entry: RunEntry; holding: Holding }[]; reconcile: RunRef[]; written(): void } {
    const held = [...this.heldRuns].map((key) => {
      const entry = this.entries.get(key)!;
      return { key, entry, holding: entry.held! };
    });
    const reconcile = [...this.toReconcile];
    return {
      held,
      reconcile: reconcile.map(([, ref]) => ref),
      written: () => {
        for (const h of held) this.release(h.key, h.entry, h.holding);
        for (const [key, ref] of reconcile) if (this.toReconcile.get(key) === ref) this.toReconcile.delete(key);
      },
    };
  }

  /** What is held in memory, for the pipeline's counters. */
  get sizes(): { runs: number; held: number; toReconcile: number; knownRuns: number; knownIds: number } {
    return { runs: this.entries.size, held: this.heldRuns.size, toReconcile: this.toReconcile.size, knownRuns: this.knownRuns.size, knownIds: this.knownIds };
  }

  private forgetKnown(key: RunKey): void {
    if (!this.knownRuns.delete(key)) return;
    const entry = this.entries.get(key);
    if (entry?.known) {
      this.knownIds -= entry.known.ids.size;
      entry.known = undefined;
    }
  }

  /** Least recently used first; a held record is kept (moved to the back) until its version is written. */
  private evict(): void {
    for (let turns = this.entries.size; this.entries.size > this.capacity && turns > 0; turns--) {
      const [key, entry] = this.entries.entries().next().value!;
      this.forgetKnown(key);
      this.entries.delete(key);
      if (entry.held) this.entries.set(key, entry);
    }
  }
}

const refOf = (r: RunRecord): RunRef => ({ user_id: r.user_id, external_id: r.external_id, run_id: r.run_id });
