/**
 * The stored event ids of runs this process has stored every event of, so that their duplicates are found without
 * asking storage (docs/PIPELINE.md, "Known events").
 *
 * A run is known from its first part when storage holds nothing of it (stored-runs.ts says it is new): from then on
 * every event of it that is stored goes through this process, which records its id once the insert has succeeded.
 * An exporter sends a trace's spans as they end, so under load each export holds one or two spans of hundreds of
 * traces, and without this every later part of a trace looked up its events by id: ~40 ms of chDB CPU per 5,000
 * events.
 *
 * Bounded: at most MAX_IDS ids in all (the runs known longest are forgotten first), at most MAX_IDS_PER_RUN per run,
 * each run for at most MAX_AGE_MS, and forgotten once it has ended. A forgotten run is looked up in storage as
 * before. Whoever drops the run's cached draft (a failed part, a rebalance) forgets it too: a failed insert may
 * have stored some of its events.
 */
export const MAX_IDS = 200_000;
export const MAX_IDS_PER_RUN = 2_000;
/** Retention deletes old events; a run known this long is looked up in storage again. */
export const MAX_AGE_MS = 3_600_000;

interface KnownRun {
  /** storedEventKey of each of its stored events. */
  readonly keys: string[];
  readonly since: number;
}

export class KnownEvents {
  /** Log key → the run's stored events, in the order the runs became known. */
  private readonly runs = new Map<string, KnownRun>();
  /** storedEventKey (pipeline/stored-events.ts) of every stored event of the known runs. */
  private readonly stored = new Set<string>();

  constructor(
    private readonly limits = { maxIds: MAX_IDS, maxIdsPerRun: MAX_IDS_PER_RUN, maxAgeMs: MAX_AGE_MS },
    private readonly now: () => number = Date.now,
  ) {}

  /** A run of which storage holds nothing: all of its stored events are known (none yet). */
  start(runKey: string): void {
    this.forget(runKey);
    this.runs.set(runKey, { keys: [], since: this.now() });
  }

  /** Whether every stored event of the run is known here. */
  knows(runKey: string): boolean {
    const run = this.runs.get(runKey);
    if (run === undefined) return false;
    if (this.now() - run.since <= this.limits.maxAgeMs) return true;
    this.forget(runKey);
    return false;
  }

  /** Whether the event (its storedEventKey) is a stored event of a known run. */
  has(eventKey: string): boolean {
    return this.stored.has(eventKey);
  }

  /** Records a stored event (its storedEventKey) of a known run; events of other runs are ignored. */
  add(runKey: string, eventKey: string): void {
    const run = this.runs.get(runKey);
    if (run === undefined || this.stored.has(eventKey)) return;
    this.stored.add(eventKey);
    run.keys.push(eventKey);
    if (run.keys.length > this.limits.maxIdsPerRun) this.forget(runKey);
    while (this.stored.size > this.limits.maxIds) this.forget(this.runs.keys().next().value!);
  }

  forget(runKey: string): void {
    const run = this.runs.get(runKey);
    if (run === undefined) return;
    for (const k of run.keys) this.stored.delete(k);
    this.runs.delete(runKey);
  }

  clear(): void {
    this.runs.clear();
    this.stored.clear();
  }

  /** How many runs and event ids are known. */
  get size(): { runs: number; ids: number } {
    return { runs: this.runs.size, ids: this.stored.size };
  }
}
