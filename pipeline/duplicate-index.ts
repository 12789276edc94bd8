/**
 * Which events of a part are duplicates (already stored: a client's retry, a replay after a crash; or repeated
 * earlier in the part), asking storage as little as it can:
 *
 * - **New runs are not asked about.** The stored-runs filter (stored-runs.ts) holds every stored run id; a run it has
 *   never seen has no rows, so neither its run row nor its events are looked up. Every OTLP trace is such a run.
 * - **Known runs are not asked about.** A run that was new when this process took it on has all its stored events
 *   recorded in its record (run-state.ts): an exporter that spreads a trace over exports sends one or two spans of
 *   it per export, and without this every later part of the trace looked up its events.
 * - Runs in memory otherwise are looked up by event id at once; other runs per run first, and by id only where the
 *   run has stored events (stored-events.ts).
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Logger } from "../core/logger.js";
import { eventKey, type EventKey, type RunKey } from "../core/events/run-key.js";
import type { LoggedEvent } from "../core/events/schema.js";
import type { PipelineCounters } from "./counters.js";
import type { RunState } from "./run-state.js";
import { findStoredEvents, type LookUp } from "./stored-events.js";
import { StoredRuns } from "./stored-runs.js";
import { TimeSlice } from "../core/time-slice.js";

export interface Duplicates {
  /** Per event of the part: stored already, or repeated earlier in the part. */
  readonly flags: readonly boolean[];
  /** Each event's EventKey, for recordStored. */
  readonly keys: readonly EventKey[];
}

export class DuplicateIndex {
  private readonly storedRuns: StoredRuns;
  private reading: Promise<void>;

  constructor(
    private readonly ch: ClickHouse,
    logger: Logger,
    private readonly state: RunState,
    private readonly counters: PipelineCounters,
  ) {
    this.storedRuns = new StoredRuns(ch, logger);
    this.reading = this.storedRuns.reload();
  }

  /** Resolves once the stored run ids have been read (the latest reading; until then every run is looked up). */
  get storedRunsRead(): Promise<void> {
    return this.reading;
  }

  /** Another writer may have stored runs this process will receive (a Kafka rebalance): read the stored run ids again. */
  storageChanged(): void {
    this.reading = this.storedRuns.reload();
  }

  close(): void {
    this.storedRuns.close();
  }

  get storedRunIds(): number {
    return this.storedRuns.size;
  }

  /**
   * Of runs not in memory, those storage certainly holds nothing of (they need no load). Each is recorded as taken
   * on before any of its rows are written; once its record is admitted, call `startKnowing`.
   */
  newRuns(missing: Iterable<readonly [RunKey, LoggedEvent]>): Set<RunKey> {
    const fresh = new Set<RunKey>();
    for (const [key, e] of missing) if (!this.storedRuns.takeOn(e.run_id)) fresh.add(key);
    return fresh;
  }

  /** The run's record is new and storage holds nothing of it: its stored events are recorded from now on. */
  startKnowing(key: RunKey): void {
    this.state.startKnowing(key);
  }

  /**
   * Looks up which of the part's events are duplicates. `inMemory` are the runs whose records the part found in
   * memory (they have stored events), `fresh` the new runs (newRuns); the others are asked about per run first.
   */
  async find(events: readonly LoggedEvent[], runKeys: readonly RunKey[], inMemory: Iterable<RunKey>, fresh: ReadonlySet<RunKey>): Promise<Duplicates> {
    const keys = events.map((e, i) => eventKey(runKeys[i]!, e.event_id));
    const how = new Map<RunKey, LookUp>();
    for (const k of fresh) how.set(k, "skip");
    for (const k of inMemory) how.set(k, this.state.knowsAllStored(k) ? "skip" : "by-id");
    const ways = runKeys.map((k) => how.get(k) ?? "by-run");
    let asked = 0;
    for (const way of ways) if (way !== "skip") asked++;
    this.counters.add("events_looked_up", asked);
    this.counters.add("events_known", events.length - asked);
    const stored = await findStoredEvents(this.ch, events, keys, (i) => ways[i]!);

    const slice = new TimeSlice();
    const seen = new Set<EventKey>();
    const flags: boolean[] = new Array(events.length);
    for (let i = 0; i < events.length; i++) {
      if ((i & 63) === 63 && slice.due()) await slice.next();
      const k = keys[i]!;
      flags[i] = stored.has(k) || seen.has(k) || this.state.isKnownStored(runKeys[i]!, k);
      seen.add(k);
    }
    return { flags, keys };
  }

  /**
   * The part's new events are stored: recorded for the runs whose stored events are known. Ended runs are let go
   * first: a whole trace in one export is never recorded.
   */
  recordStored(runKeys: readonly RunKey[], found: Duplicates, ended: Iterable<RunKey>): void {
    for (const k of ended) this.state.ended(k);
    for (let i = 0; i < runKeys.length; i++) if (!found.flags[i]) this.state.recordStored(runKeys[i]!, found.keys[i]!);
  }
}
