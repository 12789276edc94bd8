/**
 * Writes the runs' new versions (agent_runs) and their cost rows (run_costs), and keeps what it writes exact:
 *
 * - **Version clock.** Each write of a run gets a higher version (ms × 1000 + a sequence, always above the stored
 *   version): `ReplacingMergeTree(version)` keeps the newest, so two parts' writes may land in any order.
 * - **Cost rows** only for runs whose cost facts changed since this process last wrote them (at least hourly
 *   regardless): most parts change no run's costs, and every chDB insert writes a part on disk.
 * - **Held versions.** Within a log batch of several parts, a run whose only change is its counters is held
 *   (run-state.ts) and its newest state written once, by `flush`, before the log commits the batch: a trace an
 *   exporter spreads over its exports otherwise writes one run version per span. A reader must see at once a run's
 *   first version from this process, a change of anything but the counters (runShape), and a run that ended.
 * - **Recounts.** A run whose counters cannot be trusted (loaded from storage while some of the part's events were
 *   already stored; a held version dropped by a failure) has its counters set from its stored events first.
 *
 * Why holding is safe: the log commits a batch only after `flush`. A crash before that replays the batch: its stored
 * events are found again, and the runs reloaded from storage are recounted. A run held when a part fails is left to
 * reconcile (run-state.ts forget): only its counters may differ from what is stored, and its next load (or the
 * batch's `flush`) recounts them.
 */
import { costFacts } from "../core/clickhouse/event-store.js";
import type { EventStore } from "../core/clickhouse/types.js";
import type { RunKey } from "../core/events/run-key.js";
import { msOfIso } from "../core/events/iso-time.js";
import type { RunRecord } from "../core/events/run.js";
import { isTerminal } from "../core/events/status-machine.js";
import type { Logger } from "../core/logger.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { PipelineCounters } from "./counters.js";
import type { Holding, RunEntry, RunState } from "./run-state.js";
import { countStoredEvents, sumStoredLlmCalls } from "./stored-events.js";

/** A cost row is written again at least this often, so a row lost behind the cache's back (retention) comes back. */
const COST_ROW_REFRESH_MS = 3_600_000;

/**
 * What a run version says apart from its counters: when it equals the shape of the version last written, the run's
 * row may wait. No field holds U+0000 (the value rules replace it).
 */
export const runShape = (r: RunRecord): string =>
  `${r.status}\u0000${r.status_at}\u0000${r.started_at}\u0000${r.ended_at}\u0000${r.agent_name}\u0000${r.model}\u0000${r.framework}` +
  `\u0000${r.config_version}\u0000${r.last_error}\u0000${r.pending_question}\u0000${r.session_id}`;

/** A run's cost facts (event-store.ts costFacts) as one string to compare: ~0.85 µs a run against ~1.2 for JSON. */
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
    private readonly store: Pick<EventStore, "upsertRuns" | "loadRuns">,
    private readonly ch: ClickHouse,
    private readonly state: RunState,
    private readonly counters: PipelineCounters,
    private readonly logger: Logger,
  ) {}

  /**
   * Writes the part's runs (`recount` first recounted from storage), or holds those whose only change is their
   * counters when `hold` (a log batch of several parts); resolves to how many it held. `taken` is called once the
   * rows are made, before the write is awaited: from then on the next part may change the drafts.
   */
  async write(drafts: ReadonlyMap<RunKey, RunEntry>, recount: ReadonlySet<RunKey>, hold: boolean, taken: () => void): Promise<number> {
    if (recount.size > 0) await this.recount([...recount].map((k) => drafts.get(k)!.run));
    const now: RunEntry[] = [];
    const ending: [RunKey, RunEntry, Holding][] = []; // held runs written now: let go once the write succeeded
    for (const [key, entry] of drafts) {
      if (hold && entry.written !== undefined && !recount.has(key) && !isTerminal(entry.run.status) && runShape(entry.run) === entry.written) {
        this.state.hold(key, entry);
        continue;
      }
      now.push(entry);
      if (entry.held) ending.push([key, entry, entry.held]);
    }
    await this.writeVersions(now, taken);
    for (const [key, entry, holding] of ending) this.state.release(key, entry, holding);
    this.counters.add("run_versions_held", drafts.size - now.length);
    return drafts.size - now.length;
  }

  /** Writes the newest state of every held run, and recounts and writes the runs whose held state was dropped. */
  async flush(): Promise<void> {
    if (this.state.nothingHeld) return;
    const t0 = performance.now();
    const { held, reconcile, written } = this.state.takeHeld();
    const stored = reconcile.length === 0 ? [] : await this.store.loadRuns(reconcile);
    if (stored.length > 0) await this.recount(stored);
    await this.writeVersions([...held.map((h) => h.entry), ...stored.map((run) => ({ run }))]);
    written();
    this.logger.debug("held runs written", { runs: held.length, reconciled: stored.length, ms: Math.round(performance.now() - t0) });
  }

  /** New versions of `entries`, their rows made before `taken` is called and before the write is awaited. */
  private async writeVersions(entries: readonly Pick<RunEntry, "run" | "costRow" | "written">[], taken = () => {}): Promise<void> {
    for (const e of entries) e.run.version = this.nextVersion(e.run.version);
    const costs = costRowsDue(entries);
    const shapes = entries.map((e) => runShape(e.run));
    const write = this.store.upsertRuns(entries.map((e) => e.run), costs.runs);
    taken();
    await write;
    costs.written();
    entries.forEach((e, i) => (e.written = shapes[i]));
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
