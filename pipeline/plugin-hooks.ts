/**
 * How the part processor calls the plugins' hooks (plugins/plugin.ts): onEvent per event in log order, with the
 * events a plugin fails on named for failure isolation; afterEventsStored and afterCommit all at once per part.
 */
import type { RunKey } from "../core/events/run-key.js";
import type { Logger } from "../core/logger.js";
import { TimeSlice } from "../core/time-slice.js";
import type { Part, Plugin, RunSnapshot, StoredPart } from "../plugins/plugin.js";
import { EventsFailed } from "./isolation.js";
import type { RunEntry } from "./run-state.js";

export class PluginHooks {
  private readonly onEvent: readonly Plugin[];
  private readonly afterStored: readonly Plugin[];
  private readonly afterCommitted: readonly Plugin[];

  constructor(
    plugins: readonly Plugin[],
    private readonly logger: Logger,
  ) {
    this.onEvent = plugins.filter((p) => p.onEvent);
    this.afterStored = plugins.filter((p) => p.afterEventsStored);
    this.afterCommitted = plugins.filter((p) => p.afterCommit);
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
    for (let i = 0; i < events.length; i++) {
      if ((i & 15) === 15 && slice.due()) await slice.next();
      const key = runKeys[i]!;
      if (broken.has(key)) continue;
      const draft = drafts.get(key)!;
      let plugin = "";
      try {
        for (const p of this.onEvent) {
          plugin = p.name;
          const r = p.onEvent!(events[i]!, draft, part);
          if (r) await r;
        }
      } catch (error) {
        failures.push({ index: i, plugin, error });
        broken.add(key);
        continue;
      }
      draft.fresh = false;
    }
    if (failures.length > 0) throw new EventsFailed(failures);
  }

  /** The afterEventsStored hooks, together; each takes what it needs from the drafts before its first wait. */
  afterEventsStored(part: StoredPart, timings: Record<string, number>): Promise<void> {
    return this.together(this.afterStored, "after_events_stored", (p) => p.afterEventsStored!(part), timings);
  }

  /** The afterCommit hooks, together: each waits on its own store or the pub/sub, and in sequence those waits add up. */
  afterCommit(part: StoredPart, timings: Record<string, number>): Promise<void> {
    return this.together(this.afterCommitted, "after_commit", (p) => p.afterCommit!(part), timings);
  }

  /** All run even if one fails (a broadcast should not wait on a Postgres outage); the first failure fails the part. */
  private async together(hooks: readonly Plugin[], stage: string, call: (p: Plugin) => unknown, timings: Record<string, number>): Promise<void> {
    const outcomes = await Promise.allSettled(hooks.map(async (p) => {
      const start = performance.now();
      await call(p);
      timings[`${stage}.${p.name}_ms`] = Math.round((performance.now() - start) * 10) / 10;
    }));
    let failure: unknown;
    outcomes.forEach((o, i) => {
      if (o.status === "fulfilled") return;
      this.logger.error(`plugin ${stage} hook failed`, { plugin: hooks[i]!.name, err: o.reason });
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
