/**
 * The batch processor (steps 1–5 of pipeline/runner.ts's comment): drafts of the batch's runs, duplicate flags,
 * the plugins' onEvent, storage of events and run versions, the plugins' afterCommit. The log wiring, failure
 * isolation and dead letters are around it (runner.ts, record-handler.ts, isolation.ts).
 */
import type { EventStore } from "../core/clickhouse/types.js";
import { newRunRecord, type RunRecord } from "../core/events/run.js";
import { msOfIso } from "../core/events/iso-time.js";
import { logKey, type LoggedEvent } from "../core/events/schema.js";
import { isTerminal } from "../core/events/status-machine.js";
import { TimeSlice } from "../core/time-slice.js";
import type { Batch, PipelineEvent, Plugin, PluginContext } from "../plugins/plugin.js";
import { EventsFailed } from "./isolation.js";
import { KnownEvents } from "./known-events.js";
import { costRowsDue, RunCache, type CachedRun } from "./run-cache.js";
import { DeferredRuns, runShape, type Holding } from "./deferred-runs.js";
import { countStoredEvents, findStoredEventIds, storedEventKey, sumStoredLlmCalls } from "./stored-events.js";
import { StoredRuns } from "./stored-runs.js";

/** Run versions: the ms clock * 1000 + a sequence, and always above the stored version. */
function versionClock(): (previous: number) => number {
  let last = 0;
  return (previous) => {
    let v = Date.now() * 1000;
    if (v <= last) v = last + 1;
    if (v <= previous) v = previous + 1;
    last = v;
    return v;
  };
}

function queuedMs(logged: readonly LoggedEvent[]): Record<string, number> {
  if (logged.length === 0) return {};
  const now = Date.now();
  return { queued_oldest_ms: now - Date.parse(logged[0]!.received_at), queued_newest_ms: now - Date.parse(logged[logged.length - 1]!.received_at) };
}

export interface ProcessOptions {
  /**
   * Called once the batch no longer reads or writes its runs' drafts (the cached run records): the runs' rows and
   * the afterEventsStored hooks' data are taken, and afterCommit hooks get a copy of the runs. The next batch may
   * then run its plugins on the same drafts while this one's writes are under way (overlapped-parts.ts).
   */
  readonly onDraftsReleased?: () => void;
}

/** The batch handler and the run state it keeps between batches. */
export type BatchProcessor = ((batch: readonly LoggedEvent[], options?: ProcessOptions) => Promise<void>) & {
  /** Drops every cached run, so the next batch reloads them from storage (its own earlier attempt failed). */
  forgetRuns(): void;
  /** Another writer may have stored runs this processor will receive (a Kafka rebalance): forget the cached runs and read the stored run ids again. */
  storageChanged(): void;
  /** Resolves once the stored runs have been read (the latest reading; until then every new run is looked up). */
  storedRunsRead(): Promise<void>;
  /**
   * While on, a part holds back the versions of runs whose only change is their counters (deferred-runs.ts): the
   * record handler turns it on for a log batch of several parts, and writes what is held with flushDeferredRuns
   * before the batch is committed.
   */
  deferRunWrites(on: boolean): void;
  /** Writes the newest state of every held run (and recounts runs whose held state was dropped). */
  flushDeferredRuns(): Promise<void>;
  close(): void;
};

/** The batch handler, separate from the log wiring so it can be driven directly. */
export function createBatchProcessor(
  ctx: PluginContext,
  store: EventStore,
  plugins: readonly Plugin[],
  cacheSize: number,
): BatchProcessor {
  const cache = new RunCache(cacheSize);
  // Which runs may be stored: a run it has never seen is new, and storage is not asked about it (stored-runs.ts).
  const storedRuns = new StoredRuns(ctx.clickhouse, ctx.logger);
  let reading = storedRuns.reload();
  // The stored event ids of runs all of whose events went through this processor (known-events.ts).
  const known = new KnownEvents();
  // Run versions held back within a log batch (deferred-runs.ts).
  const deferred = new DeferredRuns();
  let deferring = false;
  const nextVersion = versionClock();
  const eventHooks = plugins.filter((p) => p.onEvent);
  const storedHooks = plugins.filter((p) => p.afterEventsStored);
  const commitHooks = plugins.filter((p) => p.afterCommit);

  async function processBatch(logged: readonly LoggedEvent[], options: ProcessOptions = {}): Promise<void> {
    const t0 = performance.now();
    // How long the batch's oldest and newest events waited since ingest received them (clocks of one host).
    const timings: Record<string, number> = { ...queuedMs(logged) };
    let mark = t0;
    const lap = (stage: string) => {
      const now = performance.now();
      timings[stage] = Math.round((now - mark) * 10) / 10;
      mark = now;
    };
    // Ingest shares this event loop in the embedded default: every per-event loop below gives it a turn
    // whenever it has run for a slice (a few ms), so a big batch never stalls requests for long.
    const slice = new TimeSlice();
    const keys = new Map<string, LoggedEvent>(); // run key → first event of that run in the batch
    // Each event's run key, made once: the same string, its hash cached, for every look-up below.
    const runKeys = logged.map(logKey);
    for (let i = 0; i < logged.length; i++) if (!keys.has(runKeys[i]!)) keys.set(runKeys[i]!, logged[i]!);
    try {
      // 1. Drafts. A run loaded from storage (or new) is "cold": its counters may not yet include events
      //    of this batch that an earlier, failed attempt already stored.
      //    The duplicate look-up (step 2) does not depend on it and runs concurrently.
      const cold = new Set<string>();
      // Runs whose counters are recounted from storage before their rows are written.
      const recount = new Set<string>();
      const drafts = new Map<string, CachedRun>();
      for (const k of keys.keys()) {
        let hit = cache.get(k);
        if (!hit && (hit = deferred.entry(k))) cache.set(k, hit); // held back, then evicted: its state is the newest
        if (hit) drafts.set(k, hit);
      }
      const missing = [...keys].filter(([k]) => !drafts.has(k));
      // Runs the filter has never seen have no rows: neither their run nor their events are looked up. Every run
      // of the batch is added to it before any of its rows are written.
      const unseen = new Set<string>();
      for (const [k, e] of missing) {
        if (storedRuns.takeOn(e.run_id)) continue;
        unseen.add(k);
        known.start(k);
      }
      // Runs found in the cache have stored events: those of a known run are checked here, the others' looked up by
      // id at once. New runs have none.
      const lookedUp = new Set<string>();
      const notLookedUp = new Set(unseen);
      for (const k of drafts.keys()) (known.knows(k) ? notLookedUp : lookedUp).add(k);
      const storedIds = findStoredEventIds(ctx.clickhouse, logged, lookedUp, notLookedUp, runKeys);
      storedIds.catch(() => {}); // awaited below; avoid an unhandled rejection if loadRuns fails first
      if (missing.length > 0) {
        const lookUp = missing.filter(([k]) => !unseen.has(k));
        const loaded = lookUp.length === 0 ? [] : await store.loadRuns(lookUp.map(([, e]) => ({ user_id: e.user_id, external_id: e.sdk_run_id })));
        const byKey = new Map(loaded.map((r) => [`${r.user_id}:${r.external_id}`, r]));
        for (const [k, e] of missing) {
          const run = byKey.get(k);
          const entry = run ? { run, fresh: false } : { run: newRunRecord(e.user_id, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true };
          drafts.set(k, entry); // drafts hold their entries even if the LRU evicts them during a huge batch
          cache.set(k, entry);
          cold.add(k);
          if (run && deferred.reconcile(k)) recount.add(k);
        }
      }
      lap("load_runs_ms");

      // 2. Duplicates: already stored, or repeated within this batch.
      const stored = await storedIds;
      const seen = new Set<string>();
      const events = logged as PipelineEvent[];
      const eventKeys: string[] = new Array(events.length);
      for (let i = 0; i < events.length; i++) {
        if ((i & 63) === 63 && slice.due()) await slice.next();
        const e = events[i]!;
        const id = (eventKeys[i] = storedEventKey(e));
        const duplicate = stored.has(id) || seen.has(id) || known.has(id);
        seen.add(id);
        (e as { duplicate: boolean }).duplicate = duplicate;
        if (duplicate && cold.has(runKeys[i]!)) recount.add(runKeys[i]!);
      }

      lap("find_duplicates_ms");

      // 3. Plugins, per event in log order. An event a plugin fails on is noted (and the rest of its run in this
      //    pass skipped, since its draft may be half-changed); if any failed, nothing is stored and
      //    EventsFailed names them, so isolation.ts can set exactly those aside.
      const payloadJson = new Map<PipelineEvent, string>();
      const batch: Batch = { events, runs: drafts, scratch: new Map(), payloadJson };
      const failures: { index: number; plugin: string; error: unknown }[] = [];
      const brokenRuns = new Set<string>();
      for (let i = 0; i < events.length; i++) {
        if ((i & 15) === 15 && slice.due()) await slice.next();
        const e = events[i]!;
        const key = runKeys[i]!;
        if (brokenRuns.has(key)) continue;
        const draft = drafts.get(key)!;
        let plugin = "";
        try {
          for (const p of eventHooks) {
            plugin = p.name;
            const r = p.onEvent!(e, draft, batch);
            if (r) await r;
          }
        } catch (error) {
          failures.push({ index: i, plugin, error });
          brokenRuns.add(key);
          continue;
        }
        draft.fresh = false;
      }
      if (failures.length > 0) throw new EventsFailed(failures);

      lap("plugins_ms");

      // 4. Store events, then the runs (their counters reconciled with storage where needed). Once the events are
      //    stored, the afterEventsStored hooks (the live broadcast, llm_calls and scores rows, agent counters) run
      //    beside the runs' write instead of after it: a dashboard frame then waits for one ClickHouse insert, not two.
      // Each stored payload is serialised once, here, for its row and for whichever hook sends it on (the frames).
      const fresh = events.filter((e) => !e.duplicate);
      for (let i = 0; i < fresh.length; i++) {
        if ((i & 63) === 63 && slice.due()) await slice.next();
        payloadJson.set(fresh[i]!, JSON.stringify(fresh[i]!.payload));
      }
      await store.insertEvents(fresh, payloadJson);
      // Ended runs are forgotten first: a whole trace in one export is never recorded.
      for (const [k, d] of drafts) if (isTerminal(d.run.status)) known.forget(k);
      for (let i = 0; i < events.length; i++) if (!events[i]!.duplicate) known.add(runKeys[i]!, eventKeys[i]!);
      lap("insert_events_ms");
      // The hooks take what they need from the drafts before their first wait (rows, frames, counters).
      const eventsStored = runHooks(storedHooks, "after_events_stored", (p) => p.afterEventsStored!(batch), timings);
      eventsStored.catch(() => {}); // awaited below, after the runs' write
      let committed: Batch = batch;
      const held = await storeRuns(drafts, recount, () => {
        // From here the next batch may change the drafts: afterCommit hooks see the runs as this batch left them.
        committed = { events, scratch: batch.scratch, payloadJson, runs: new Map([...drafts].map(([k, d]) => [k, { run: { ...d.run }, fresh: d.fresh }])) };
        options.onDraftsReleased?.();
      });
      lap("upsert_runs_ms");
      await eventsStored;

      // 5. After-commit hooks, together: each waits on its own store or the pub/sub (over the thread boundary),
      //    and in sequence those waits added up. All run even if one fails (a broadcast should not wait on a
      //    Postgres outage); any failure fails the batch, which is retried.
      await runHooks(commitHooks, "after_commit", (p) => p.afterCommit!(committed), timings);
      lap("after_commit_ms");
      ctx.logger.debug("batch processed", { events: logged.length, runs: drafts.size, runs_held: held, total_ms: Math.round(performance.now() - t0), ...timings });
    } catch (err) {
      for (const k of keys.keys()) forgetRun(k);
      throw err;
    }
  }

  /**
   * The runs' new versions, their counters first reconciled with storage where they cannot be trusted, or held back
   * (deferred-runs.ts); resolves to how many it held. `taken` is called once the rows are made (synchronously, by the
   * write's first step) and before the write is awaited.
   */
  async function storeRuns(drafts: ReadonlyMap<string, CachedRun>, recount: ReadonlySet<string>, taken: () => void): Promise<number> {
    if (recount.size > 0) await recountRuns([...recount].map((k) => drafts.get(k)!.run));
    // Within a log batch of several parts, a run whose only change is its counters waits for the batch's end.
    const now: CachedRun[] = [];
    const ending: [string, Holding][] = []; // held runs written now: let go once the write succeeded
    for (const [k, d] of drafts) {
      if (deferring && d.written !== undefined && !recount.has(k) && !isTerminal(d.run.status) && runShape(d.run) === d.written) {
        deferred.hold(k, d);
      } else {
        now.push(d);
        const holding = deferred.holding(k);
        if (holding) ending.push([k, holding]);
      }
    }
    await writeRuns(now, taken);
    for (const [k, holding] of ending) deferred.release(k, holding);
    return drafts.size - now.length;
  }

  /** New versions of `entries`, their rows made before `taken` is called and before the write is awaited. */
  async function writeRuns(entries: readonly CachedRun[], taken = () => {}): Promise<void> {
    for (const d of entries) d.run.version = nextVersion(d.run.version);
    const costs = costRowsDue(entries);
    const shapes = entries.map((d) => runShape(d.run));
    const write = store.upsertRuns(entries.map((d) => d.run), costs.runs);
    taken();
    await write;
    costs.written();
    entries.forEach((d, i) => (d.written = shapes[i]));
  }

  /** Sets the runs' counters (and last event time) to what storage holds of their events. */
  async function recountRuns(runs: readonly RunRecord[]): Promise<void> {
    const [counts, llm] = await Promise.all([countStoredEvents(ctx.clickhouse, runs), sumStoredLlmCalls(ctx.clickhouse, runs)]);
    for (const run of runs) {
      const c = counts.get(run.run_id.toLowerCase());
      run.event_count = c?.events ?? 0;
      run.error_count = c?.errors ?? 0;
      if (c && msOfIso(c.lastAt) > msOfIso(run.last_event_at)) run.last_event_at = c.lastAt;
      const l = llm.get(run.run_id.toLowerCase());
      if (l) {
        run.llm_calls = l.calls;
        run.prompt_tokens = l.prompt;
        run.completion_tokens = l.completion;
        run.total_tokens = l.total;
        run.cost_usd = l.cost;
        run.cost_source = l.computed > 0 ? "computed" : l.client > 0 ? "client" : "none";
      }
    }
  }

  async function flushDeferredRuns(): Promise<void> {
    if (deferred.empty) return;
    const t0 = performance.now();
    const { held, reconcile, written } = deferred.take();
    // Runs whose held state a failed part dropped, and that no later part loaded again: recounted from storage.
    const stored = reconcile.length === 0 ? [] : await store.loadRuns(reconcile);
    if (stored.length > 0) await recountRuns(stored);
    await writeRuns([...held, ...stored.map((run) => ({ run, fresh: false }))]);
    written();
    ctx.logger.debug("held runs written", { runs: held.length, reconciled: stored.length, ms: Math.round(performance.now() - t0) });
  }

  /** Runs one stage's hooks together; all run even if one fails, and the first failure fails the batch. */
  async function runHooks(hooks: readonly Plugin[], stage: string, call: (p: Plugin) => unknown, timings: Record<string, number>): Promise<void> {
    const outcomes = await Promise.allSettled(hooks.map(async (p) => {
      const start = performance.now();
      await call(p);
      timings[`${stage}.${p.name}_ms`] = Math.round((performance.now() - start) * 10) / 10;
    }));
    let failure: unknown;
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") return;
      ctx.logger.error(`plugin ${stage} hook failed`, { plugin: hooks[i]!.name, err: o.reason });
      failure ??= o.reason;
    });
    if (failure !== undefined) throw failure;
  }
  /** Drops a run's draft and its known events: a failed insert may have stored some of them. */
  function forgetRun(key: string): void {
    cache.delete(key);
    known.forget(key);
    deferred.forget(key);
  }

  function forgetRuns(): void {
    cache.clear();
    known.clear();
    deferred.forgetAll();
  }

  return Object.assign(processBatch, {
    forgetRuns,
    storageChanged: () => {
      forgetRuns();
      reading = storedRuns.reload();
    },
    storedRunsRead: () => reading,
    deferRunWrites: (on: boolean) => {
      deferring = on;
    },
    flushDeferredRuns,
    close: () => storedRuns.close(),
  });
}
