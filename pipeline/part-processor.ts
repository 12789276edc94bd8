/**
 * The part processor: what the pipeline does with one part (at most maxBatch events of a log batch), as stages:
 *
 *   1. drafts      the part's runs: in memory (run-state.ts), new (storage holds nothing of them), or loaded
 *   2. duplicates  which events are stored already or repeated (duplicate-index.ts), looked up beside step 1
 *   3. plugins     every plugin's onEvent, per event in log order (plugin-hooks.ts)
 *   4. store       the new events; then the runs' new versions (run-writer.ts) beside the afterEventsStored hooks
 *   5. commit      the afterCommit hooks, on frozen copies of the runs
 *
 * A failure anywhere drops the part's runs from memory (run-state.ts forget) and rejects; record-handler.ts and
 * isolation.ts then decide between a retry and dead letters. Nothing outlives a part but the run records: the
 * record handler splits a log batch into parts and may commit it once its last part is stored.
 */
import type { EventStore } from "../core/ports/event-store.js";
import { newRunRecord } from "../core/events/run.js";
import { runKeyOfEvent, runKeyOfRun, type RunKey } from "../core/events/run-key.js";
import { pipelineEvent, type LoggedEvent, type PipelineEvent } from "../core/events/schema.js";
import { isTerminal } from "../core/events/status-machine.js";
import { TimeSlice } from "../core/time-slice.js";
import type { Plugin, PluginContext, StoredPart } from "../plugins/plugin.js";
import { PipelineCounters } from "./counters.js";
import { DuplicateIndex } from "./duplicate-index.js";
import { frozenRuns, PluginHooks } from "./plugin-hooks.js";
import { RunState, type RunEntry } from "./run-state.js";
import { RunWriter } from "./run-writer.js";
import { StageTimer } from "./stage-timer.js";
import { searchTexts } from "./search-text.js";

export interface ProcessOptions {
  /**
   * Called once the part no longer reads or writes its runs' drafts: the runs' rows are made, the afterEventsStored
   * hooks have taken their data, and afterCommit gets frozen copies. The next part may then start on the same drafts
   * while this one's writes are under way (overlapped-parts.ts).
   */
  readonly onDraftsReleased?: () => void;
}

export interface PartProcessor {
  /** Processes one part of a log batch (in log order), or again some of its events (failure isolation). */
  processPart(events: readonly LoggedEvent[], options?: ProcessOptions): Promise<void>;
  /** Drops every run from memory, so the next part reloads them from storage (its own earlier attempt failed). */
  forgetRuns(): void;
  /** Another writer may have stored runs this processor will receive (a Kafka rebalance): forget them and re-read which are stored. */
  storageChanged(): void;
  /** Resolves once the stored run ids have been read (the latest reading; until then every new run is looked up). */
  storedRunsRead(): Promise<void>;
  readonly counters: PipelineCounters;
  close(): void;
}

export function createPartProcessor(ctx: PluginContext, store: EventStore, plugins: readonly Plugin[], cacheSize: number): PartProcessor {
  const counters = new PipelineCounters();
  const state = new RunState(cacheSize);
  const duplicates = new DuplicateIndex(ctx.clickhouse, ctx.logger, state, counters);
  const writer = new RunWriter(store, ctx.clickhouse, counters);
  const hooks = new PluginHooks(plugins, ctx.logger);
  counters.readGaugesFrom(() => {
    const s = state.sizes;
    return { run_records: s.runs, known_event_ids: s.knownIds, stored_run_ids: duplicates.storedRunIds };
  });
  counters.readPluginsFrom(() => hooks.telemetry.snapshot());

  async function processPart(logged: readonly LoggedEvent[], options: ProcessOptions = {}): Promise<void> {
    const timer = new StageTimer(logged);
    const runKeys = logged.map(runKeyOfEvent);
    const firsts = firstEventOfEachRun(logged, runKeys);
    try {
      // 1–2. The runs in memory; the duplicate look-up, while the other runs are made new or loaded from storage.
      const { drafts, missing } = inMemory(firsts);
      const fresh = duplicates.newRuns(missing);
      const finding = duplicates.find(logged, runKeys, [...drafts.keys()], fresh);
      finding.catch(() => {}); // awaited below; avoid an unhandled rejection if loading fails first
      await admitMissing(missing, fresh, drafts);
      const cold = new Set(missing.map(([k]) => k));
      timer.lap("load_runs_ms");
      const found = await finding;
      const events = logged.map((e, i) => pipelineEvent(e, found.flags[i]!));
      // A run loaded from storage with an event already stored: its counters may lack it (an earlier attempt stored it).
      const recount = new Set<RunKey>();
      for (let i = 0; i < events.length; i++) if (found.flags[i] && cold.has(runKeys[i]!)) recount.add(runKeys[i]!);
      timer.lap("find_duplicates_ms");

      // 3. Plugins.
      const part = { events, runs: drafts, scratch: new Map<string, unknown>() };
      await hooks.eachEvent(part, drafts, runKeys);
      timer.lap("plugins_ms");

      // 4. The new events; then the runs' versions beside the afterEventsStored hooks (a dashboard frame waits for
      //    one insert, not two).
      const payloadJson = await serialisePayloads(events);
      await store.insertEvents([...payloadJson.keys()], payloadJson, searchTexts(payloadJson.keys(), drafts));
      duplicates.recordStored(runKeys, found, endedRuns(drafts));
      timer.lap("insert_events_ms");
      const stored: StoredPart = { ...part, payloadJson };
      const eventsStored = hooks.afterEventsStored(stored, timer.timings);
      eventsStored.catch(() => {}); // awaited below, after the runs' write
      let committed = stored;
      await writer.write(drafts, recount, () => {
        committed = { ...stored, runs: frozenRuns(drafts) };
        options.onDraftsReleased?.();
      });
      timer.lap("upsert_runs_ms");
      await eventsStored;

      // 5. After commit.
      await hooks.afterCommit(committed, timer.timings);
      timer.lap("after_commit_ms");
      counters.add("parts");
      counters.observePart(timer.elapsedMs / 1000);
      counters.add("events_stored", payloadJson.size);
      counters.add("events_duplicate", events.length - payloadJson.size);
      ctx.logger.debug("part processed", { events: logged.length, runs: drafts.size, ...timer.done() });
    } catch (err) {
      for (const k of firsts.keys()) state.forget(k);
      counters.add("part_failures");
      throw err;
    }
  }

  /** The part's runs whose records are in memory, and the others with their first event. */
  function inMemory(firsts: ReadonlyMap<RunKey, LoggedEvent>): { drafts: Map<RunKey, RunEntry>; missing: [RunKey, LoggedEvent][] } {
    const drafts = new Map<RunKey, RunEntry>();
    const missing: [RunKey, LoggedEvent][] = [];
    for (const [k, e] of firsts) {
      const entry = state.get(k);
      if (entry) drafts.set(k, entry);
      else missing.push([k, e]);
    }
    counters.add("run_records_hit", drafts.size);
    counters.add("run_records_missed", missing.length);
    return { drafts, missing };
  }

  /**
   * Records for the runs not in memory: new ones for runs storage holds nothing of, loaded ones for the rest. All are
   * "cold": their counters may not include events of this part that an earlier, failed attempt stored.
   */
  async function admitMissing(missing: readonly [RunKey, LoggedEvent][], fresh: ReadonlySet<RunKey>, drafts: Map<RunKey, RunEntry>): Promise<void> {
    const lookUp = missing.filter(([k]) => !fresh.has(k));
    const loaded = lookUp.length === 0 ? [] : await store.loadRuns(lookUp.map(([, e]) => ({ project_id: e.project_id, external_id: e.sdk_run_id })));
    const byKey = new Map(loaded.map((r) => [runKeyOfRun(r), r]));
    for (const [k, e] of missing) {
      const run = byKey.get(k);
      // Drafts hold their records even if memory's bound evicts them during a huge part.
      drafts.set(k, run ? state.admit(k, run, false) : state.admit(k, newRunRecord(e, e.sdk_run_id, e.run_id, e.occurred_at), true));
      if (fresh.has(k)) duplicates.startKnowing(k);
    }
    counters.add("runs_new", fresh.size);
    counters.add("runs_loaded", lookUp.length);
  }

  return {
    processPart,
    forgetRuns: () => state.forgetAll(),
    storageChanged() {
      state.forgetAll();
      duplicates.storageChanged();
    },
    storedRunsRead: () => duplicates.storedRunsRead,
    counters,
    close: () => duplicates.close(),
  };
}

/** The first event of each run of the part, by run key. */
function firstEventOfEachRun(events: readonly LoggedEvent[], runKeys: readonly RunKey[]): Map<RunKey, LoggedEvent> {
  const firsts = new Map<RunKey, LoggedEvent>();
  for (let i = 0; i < events.length; i++) if (!firsts.has(runKeys[i]!)) firsts.set(runKeys[i]!, events[i]!);
  return firsts;
}

/** The runs that ended: their known events are let go (a whole trace in one export is never recorded). */
function* endedRuns(drafts: ReadonlyMap<RunKey, RunEntry>): Iterable<RunKey> {
  for (const [k, d] of drafts) if (isTerminal(d.run.status)) yield k;
}

/** Each new event's payload serialised once, for its row and for the hooks that send it on; in log order. */
async function serialisePayloads(events: readonly PipelineEvent[]): Promise<Map<PipelineEvent, string>> {
  const slice = new TimeSlice();
  const json = new Map<PipelineEvent, string>();
  for (let i = 0; i < events.length; i++) {
    if ((i & 63) === 63 && slice.due()) await slice.next();
    if (!events[i]!.duplicate) json.set(events[i]!, JSON.stringify(events[i]!.payload));
  }
  return json;
}
