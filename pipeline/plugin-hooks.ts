/**
 * How the part processor calls the plugins' hooks (plugins/plugin.ts): onEvent per event in log order, with the
 * events a plugin fails on named for failure isolation; afterEventsStored and afterCommit all at once per part.
 * Each call is counted and timed for its plugin (plugin-telemetry.ts).
 */
import type { RunKey } from "../core/events/run-key.js";
import type { Logger } from "../core/logger.js";
import { TimeSlice } from "../core/time-slice.js";
import type { Part, Plugin, RunSnapshot, StoredPart } from "../plugins/plugin.js";
import { EventsFailed } from "./isolation.js";
import { HookFigures, PluginTelemetry } from "./plugin-telemetry.js";
import type { RunEntry } from "./run-state.js";

export class PluginHooks {
  private readonly onEvent: HookFigures;
  private readonly afterStored: HookFigures;
  private readonly afterCommitted: HookFigures;
  /** The plugins' own figures, for the pipeline's counters. */
  readonly telemetry: PluginTelemetry;

  constructor(
    plugins: readonly Plugin[],
    private readonly logger: Logger,
  ) {
    this.onEvent = new HookFigures(plugins.filter((p) => p.onEvent));
    this.afterStored = new HookFigures(plugins.filter((p) => p.afterEventsStored));
    this.afterCommitted = new HookFigures(plugins.filter((p) => p.afterCommit));
    this.telemetry = new PluginTelemetry({ on_event: this.onEvent, after_events_stored: this.afterStored, after_commit: this.afterCommitted });
  }

  /**
   * Every plugin's onEvent for every event, in log order; a run's draft stops being `fresh` after its first event.
   * An event a plugin fails on is noted and the rest of its run in this part skipped (its draft may be half
   * changed); if any failed, EventsFailed names them, so isolation.ts can set exactly those aside.
   */
  async eachEvent(part: Part, drafts: ReadonlyMap<RunKey, RunEntry>, runKeys: readonly RunKey[]): Promise<void> {
    // Ingest shares this event loop in the embedded default when the pipeline runs on the main thread: give it a
    // turn whenever the loop has run for a slice (a few ms).
    const slice = new TimeSlice();
    const failures: { index: number; plugin: string; error: unknown }[] = [];
    const broken = new Set<RunKey>();
    const { events } = part;
    const f = this.onEvent;
    const plugins = f.plugins;
    for (let j = 0; j < plugins.length; j++) f.runs[j] += drafts.size;
    for (let i = 0; i < events.length; i++) {
      if ((i & 15) === 15 && slice.due()) await slice.next();
      const key = runKeys[i]!;
      if (broken.has(key)) continue;
      const draft = drafts.get(key)!;
      // One clock read per plugin call: each call's time runs from the end of the one before.
      let j = 0;
      let t = performance.now();
      try {
        for (; j < plugins.length; j++) {
          const r = plugins[j]!.onEvent!(events[i]!, draft, part);
          if (r) await r;
          const now = performance.now();
          f.ms[j] += now - t;
          f.calls[j]++;
          f.events[j]++;
          t = now;
        }
      } catch (error) {
        f.ms[j] += performance.now() - t;
        f.calls[j]++;
        f.events[j]++;
        f.errors[j]++;
        failures.push({ index: i, plugin: plugins[j]!.name, error });
        broken.add(key);
        continue;
      }
      draft.fresh = false;
    }
    if (failures.length > 0) throw new EventsFailed(failures);
  }

  /** The afterEventsStored hooks, together; each takes what it needs from the drafts before its first wait. */
  afterEventsStored(part: StoredPart, timings: Record<string, number>): Promise<void> {
    return this.together(this.afterStored, part, "after_events_stored", (p) => p.afterEventsStored!(part), timings);
  }

  /** The afterCommit hooks, together: each waits on its own store or the pub/sub, and in sequence those waits add up. */
  afterCommit(part: StoredPart, timings: Record<string, number>): Promise<void> {
    return this.together(this.afterCommitted, part, "after_commit", (p) => p.afterCommit!(part), timings);
  }

  /** All run even if one fails (a broadcast should not wait on a Postgres outage); the first failure fails the part. */
  private async together(f: HookFigures, part: StoredPart, stage: string, call: (p: Plugin) => unknown, timings: Record<string, number>): Promise<void> {
    const outcomes = await Promise.allSettled(f.plugins.map(async (p, j) => {
      const start = performance.now();
      f.calls[j]++;
      f.events[j] += part.events.length;
      f.runs[j] += part.runs.size;
      try {
        await call(p);
      } catch (err) {
        f.errors[j]++;
        throw err;
      } finally {
        f.ms[j] += performance.now() - start;
      }
      timings[`${stage}.${p.name}_ms`] = Math.round((performance.now() - start) * 10) / 10;
    }));
    let failure: unknown;
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") return;
      this.logger.error(`plugin ${stage} hook failed`, { plugin: f.plugins[i]!.name, err: o.reason });
      failure ??= o.reason;
    });
    if (failure !== undefined) throw failure;
  }
}

/** Frozen copies of the part's runs as it left them, for afterCommit: the next part may change the drafts meanwhile. */
export function frozenRuns(drafts: ReadonlyMap<RunKey, RunEntry>): Map<RunKey, RunSnapshot> {
  const copies = new Map<RunKey, RunSnapshot>();
  for (const [k, d] of drafts) copies.set(k, { run: Object.freeze({ ...d.run }), fresh: d.fresh, pluginState: d.pluginState });
  return copies;
}
