/**
 * Writes the runs' new versions (agent_runs) and their cost rows (run_costs), and keeps what it writes exact:
 *
 * - **Version clock.** Each write of a run gets a higher version (ms × 1000 + a sequence, always above the stored
 *   version): `ReplacingMergeTree(version)` keeps the newest, so two parts' writes may land in any order.
 * - **Cost rows** only for runs whose cost facts changed since this process last wrote them (at least hourly
 *   regardless): most parts change no run's costs, and every chDB insert writes a part on disk.
 * - **Recounts.** A run whose counters cannot be trusted (loaded from storage while some of the part's events were
 *   already stored, by an earlier attempt that failed or a process that crashed) has its counters set from its
 *   stored events first.
 *
 * Every run a part touched is written with that part: nothing is left to write when the log commits the batch.
 */
import { costFacts } from "../stores/runs/event-store.js";
import type { EventStore } from "../core/ports/event-store.js";
import type { RunKey } from "../core/events/run-key.js";
import { msOfIso } from "../core/events/iso-time.js";
import type { RunRecord } from "../core/events/run.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { PipelineCounters } from "./counters.js";
import type { RunEntry } from "./run-state.js";
import { countStoredEvents, sumStoredLlmCalls } from "../stores/runs/stored-events.js";

/** A cost row is written again at least this often, so a row lost behind the cache's back (retention) comes back. */
const COST_ROW_REFRESH_MS = 3_600_000;

/**
 * A run's cost facts (event-store.ts costFacts) as one string to compare, sooner than JSON (docs/BENCHMARKS.md,
 * "Pipeline thread, per span").
 */
const costFactsKey = (r: RunRecord): string => Object.values(costFacts(r)).join("\u0000");

/**
 * The runs of `entries` whose run_costs row must be written with this version: their cost facts changed since this
 * process last wrote them (or it never did), or that row is old. `written` records them once stored.
 */
export function costRowsDue(entries: Iterable<Pick<RunEntry, "run" | "costRow">>, now = Date.now()): { runs: RunRecord[]; written(): void } {
  const due: [Pick<RunEntry, "costRow">, string, RunRecord][] = [];
  for (const entry of entries) {
    const facts = costFactsKey(entry.run);
    if (entry.costRow?.facts === facts && now - entry.costRow.writtenAt < COST_ROW_REFRESH_MS) continue;
    due.push([entry, facts, entry.run]);
  }
  return {
    runs: due.map(([, , run]) => run),
    written: () => {
      for (const [entry, facts] of due) entry.costRow = { facts, writtenAt: now };
    },
  };
}

/** Run versions: the ms clock * 1000 + a sequence, and always above the stored version. */
export function versionClock(now: () => number = Date.now): (previous: number) => number {
  let last = 0;
  return (previous) => {
    let v = now() * 1000;
    if (v <= last) v = last + 1;
    if (v <= previous) v = previous + 1;
    last = v;
    return v;
  };
}

export class RunWriter {
  private readonly nextVersion = versionClock();

  constructor(
    private readonly store: Pick<EventStore, "upsertRuns">,
    private readonly ch: ClickHouse,
    private readonly counters: PipelineCounters,
  ) {}

  /**
   * Writes a new version of each of the part's runs, `recount` first recounted from storage. `taken` is called once
   * the rows are made, before the write is awaited: from then on the next part may change the drafts.
   */
  async write(drafts: ReadonlyMap<RunKey, RunEntry>, recount: ReadonlySet<RunKey>, taken: () => void): Promise<void> {
    if (recount.size > 0) await this.recount([...recount].map((k) => drafts.get(k)!.run));
    const entries = [...drafts.values()];
    for (const e of entries) e.run.version = this.nextVersion(e.run.version);
    const costs = costRowsDue(entries);
    const write = this.store.upsertRuns(entries.map((e) => e.run), costs.runs);
    taken();
    await write;
    costs.written();
    this.counters.add("run_versions_written", entries.length);
    this.counters.add("cost_rows_written", costs.runs.length);
  }

  /** Sets the runs' counters (and last event time) to what storage holds of their events. */
  private async recount(runs: readonly RunRecord[]): Promise<void> {
    const [counts, llm] = await Promise.all([countStoredEvents(this.ch, runs), sumStoredLlmCalls(this.ch, runs)]);
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
    this.counters.add("runs_recounted", runs.length);
  }
}
