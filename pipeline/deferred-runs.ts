/**
 * Run versions held back within one log batch (docs/PIPELINE.md, "Run versions within a log batch").
 *
 * A trace that an exporter spreads over its exports (the usual case under load) reaches the pipeline a span per part,
 * and each part used to write a new agent_runs row (and run_costs row) for every run it touched: about one run
 * version per span. Within a log batch of several parts, a part now writes only the versions that say something new
 * to a reader of the runs: a run's first version from this process, a version whose status or any other field apart
 * from the counters changed, a run that ended. A run whose only change is its counters (event_count, error_count, LLM
 * calls, tokens, cost, last_event_at) is held here, and the newest state of every run still held is written once,
 * when the batch's parts are stored and before the log commits the batch (BatchProcessor.flushDeferredRuns).
 *
 * Why it is safe:
 * - The log commits a batch only after the handler returns, which writes what is held first. A crash before that
 *   replays the whole batch: its stored events are found again, the runs reloaded from storage are recounted
 *   (batch-processor.ts, "cold" runs), as after any crash.
 * - A run held here whose part then fails is dropped from here and left to reconcile: its stored row may lack counts
 *   of events that are stored, and only counters and last_event_at may differ (held versions change nothing else).
 *   Its next load from storage recounts them (stored-events.ts countStoredEvents), and so does the batch's end for
 *   a run no part loaded again.
 * - A run held here is used again, not reloaded, when a later part of the batch needs it after the run cache evicted it.
 */
import type { RunRecord } from "../core/events/run.js";
import type { CachedRun } from "./run-cache.js";

/**
 * What a run version says apart from its counters: when it equals the shape of the version last written, the run's
 * row may wait. No field holds U+0000 (the value rules replace it).
 */
export const runShape = (r: RunRecord): string =>
  `${r.status}\u0000${r.status_at}\u0000${r.started_at}\u0000${r.ended_at}\u0000${r.agent_name}\u0000${r.model}\u0000${r.framework}` +
  `\u0000${r.config_version}\u0000${r.last_error}\u0000${r.pending_question}\u0000${r.session_id}`;

/** One holding of a run: a run held again (by a later part) is a new holding, so that an earlier write does not end it. */
export interface Holding {
  readonly entry: CachedRun;
}

export class DeferredRuns {
  /** Runs whose newest state is not written yet, by run key. */
  private readonly held = new Map<string, Holding>();
  /** Runs whose stored row may lack counts of stored events: recounted when next loaded, or by the next `take`. */
  private readonly toReconcile = new Map<string, RunKey>();

  /** Whether anything is held or left to reconcile. */
  get empty(): boolean {
    return this.held.size === 0 && this.toReconcile.size === 0;
  }

  /** The run is held: its row is written by the next `take`, or by a later part. */
  hold(key: string, entry: CachedRun): void {
    this.held.set(key, { entry });
  }

  /** The run's current holding, if any. */
  holding(key: string): Holding | undefined {
    return this.held.get(key);
  }

  /**
   * A part wrote the run's newest state: the holding ends, unless the run was held again since. Called once the write
   * succeeded: until then a failure of the part must find the run held, to reconcile it.
   */
  release(key: string, holding: Holding): void {
    if (this.held.get(key) === holding) this.held.delete(key);
  }

  /** The held run of `key`, if any (for a run the cache evicted). */
  entry(key: string): CachedRun | undefined {
    return this.held.get(key)?.entry;
  }

  /**
   * Every held run, to write, and the runs still to reconcile (to load, recount and write); `written` lets them go
   * once stored (a run held or forgotten again meanwhile stays).
   */
  take(): { held: CachedRun[]; reconcile: RunKey[]; written(): void } {
    const held = [...this.held];
    const reconcile = [...this.toReconcile];
    return {
      held: held.map(([, holding]) => holding.entry),
      reconcile: reconcile.map(([, run]) => run),
      written: () => {
        for (const [key, holding] of held) this.release(key, holding);
        for (const [key, run] of reconcile) if (this.toReconcile.get(key) === run) this.toReconcile.delete(key);
      },
    };
  }

  /** A part with the run failed: its held state is not to be trusted, nor is its stored row's count. */
  forget(key: string): void {
    const holding = this.held.get(key);
    if (!holding) return;
    this.held.delete(key);
    this.toReconcile.set(key, keyOf(holding.entry.run));
  }

  forgetAll(): void {
    for (const [key, holding] of this.held) this.toReconcile.set(key, keyOf(holding.entry.run));
    this.held.clear();
  }

  /** Whether the run, loaded from storage, must have its counters recounted (asked once per load). */
  reconcile(key: string): boolean {
    return this.toReconcile.delete(key);
  }
}

/** Which run: enough to load it and count its stored events. */
export interface RunKey {
  readonly user_id: number;
  readonly external_id: string;
  readonly run_id: string;
}
const keyOf = (r: RunRecord): RunKey => ({ user_id: r.user_id, external_id: r.external_id, run_id: r.run_id });
