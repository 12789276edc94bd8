/**
 * Which runs may already have rows in storage, so that the pipeline asks storage only about those.
 *
 * Every part of new runs (each trace of an OTLP export is one) asked storage twice whether its runs existed: their
 * rows in agent_runs (EventStore.loadRuns) and their events in agent_events (stored-events.ts). For new runs both
 * answers are "no", and each question costs chDB's CPU however few keys it holds, plus a round trip on the serial
 * path of the part (docs/BENCHMARKS.md, "ClickHouse calls"). A run this filter has never seen is certainly new.
 *
 * The filter holds the run ids of both tables, read at start, and every run id the pipeline takes on, added
 * before any of its rows are written. It is exact in the direction that matters: it never calls a stored run new.
 * That holds while this pipeline is the only writer of the runs it receives, which the log already guarantees
 * for the run cache: the file log has one consumer, and Kafka gives each run's key one partition and each
 * partition one member of the group. When Kafka moves partitions (a rebalance) the stored ids are read again and
 * added, and a new pipeline thread that replaces one that died reads them once the old thread's writes have
 * settled; until a read is done, every run counts as possibly stored and is looked up, as before.
 */
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { countRunRows, storedRunIdSlice } from "../stores/runs/stored-run-ids.js";
import { RunIdFilter } from "./run-id-filter.js";

/** Distinct run ids asked for per query: bounds the rows a query answers with (~40 bytes each, as JSON). */
const RUNS_PER_SLICE = 100_000;
/** Reading the ids waits as long again between slices as a slice took: it runs beside ingest, at start. */
const PAUSE_PER_SLICE_MS_PER_MS = 1;
/** Retries after a failed read (storage down at start): the pipeline looks every run up meanwhile. */
const RETRY_MS = [1_000, 5_000, 30_000];

export class StoredRuns {
  private readonly filter = new RunIdFilter();
  private ready = false;
  /** Bumped by every reload and by close: a read of an older generation is thrown away. */
  private generation = 0;

  constructor(
    private readonly ch: ClickHouse,
    private readonly logger: Logger,
    private readonly runsPerSlice = RUNS_PER_SLICE,
  ) {}

  /** False only for a run that has no row in agent_runs and no event in agent_events. */
  mayBeStored(runId: string): boolean {
    return !this.ready || this.filter.mayHave(runId);
  }

  /**
   * Records a run id the pipeline takes on, before any of its rows are written, and answers whether it may have been
   * stored before (mayBeStored, asked first).
   */
  takeOn(runId: string): boolean {
    const held = this.hold(runId);
    return !this.ready || held;
  }

  /** Adds the id unless the filter may hold it already (a run reloaded into the cache, a re-read): true if it may. */
  private hold(runId: string): boolean {
    if (this.filter.mayHave(runId)) return true;
    this.filter.add(runId);
    return false;
  }

  /** Run ids held: those read and those added. */
  get size(): number {
    return this.filter.size;
  }

  /** True once the stored run ids have been read (until the next reload). */
  get loaded(): boolean {
    return this.ready;
  }

  /**
   * Reads the stored run ids (again), adding them to the ids it holds; resolves when read (or when a later reload or
   * close takes over). The ids it holds are kept: a run this pipeline took on may still be being written, and a read
   * that started before its write ended would not show it.
   */
  reload(): Promise<void> {
    const generation = ++this.generation;
    this.ready = false;
    return this.read(generation);
  }

  /** Stops reading; mayBeStored answers "maybe" from now on. */
  close(): void {
    this.generation++;
    this.ready = false;
  }

  private async read(generation: number): Promise<void> {
    for (let attempt = 0; generation === this.generation; attempt++) {
      try {
        return await this.readOnce(generation);
      } catch (err) {
        if (generation !== this.generation) return;
        const delay = RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)]!;
        this.logger.warn("could not read the stored runs; every run is looked up until they are read", { err, retry_ms: delay });
        await pause(delay);
      }
    }
  }

  private async readOnce(generation: number): Promise<void> {
    const filter = this.filter;
    const started = performance.now();
    const slices = Math.max(1, Math.ceil((await countRunRows(this.ch)) / this.runsPerSlice));
    for (let slice = 0; slice < slices; slice++) {
      if (generation !== this.generation) return;
      const t = performance.now();
      const rows = await storedRunIdSlice(this.ch, slices, slice);
      if (generation !== this.generation) return;
      // Ids it holds already are not added twice: a re-read after a rebalance must not grow the filter.
      for (const row of rows) this.hold(row.r);
      if (slice + 1 < slices) await pause((performance.now() - t) * PAUSE_PER_SLICE_MS_PER_MS);
    }
    if (generation !== this.generation) return;
    this.ready = true;
    this.logger.info("stored runs read: new runs are no longer looked up", {
      runs: filter.size, filter_kib: Math.round(filter.bytes / 1024), ms: Math.round(performance.now() - started),
    });
  }
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
