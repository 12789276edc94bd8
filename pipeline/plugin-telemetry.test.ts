/** Each plugin's own figures (plugin-telemetry.ts), as PluginHooks counts and times the hooks it calls. */
import { describe, expect, it } from "vitest";
import { newRunRecord } from "../core/events/run.js";
import { runKeyOfEvent, type RunKey } from "../core/events/run-key.js";
import { createLogger } from "../core/logger.js";
import type { Plugin, PipelineEvent, StoredPart } from "../plugins/plugin.js";
import { testEvent } from "../plugins/testing.js";
import { EventsFailed } from "./isolation.js";
import { PluginHooks } from "./plugin-hooks.js";
import type { RunEntry } from "./run-state.js";

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

function partOf(events: PipelineEvent[]) {
  const drafts = new Map<RunKey, RunEntry>();
  for (const e of events) {
    const k = runKeyOfEvent(e);
    if (!drafts.has(k)) drafts.set(k, { run: newRunRecord(e, e.sdk_run_id, e.run_id, e.occurred_at), fresh: true, pluginState: new Map() });
  }
  const part = { events, runs: drafts, scratch: new Map<string, unknown>() };
  const stored: StoredPart = { ...part, payloadJson: new Map() };
  return { part, drafts, runKeys: events.map(runKeyOfEvent), stored };
}

describe("plugin telemetry", () => {
  it("counts each plugin's calls, events, runs and errors per hook, and the time spent in each", async () => {
    const slow: Plugin = { name: "slow", onEvent: () => busy(2), afterCommit: async () => { await new Promise((r) => setTimeout(r, 20)); } };
    const picky: Plugin = {
      name: "picky",
      onEvent: (e) => { if (e.payload.bad) throw new Error("refused"); },
      afterEventsStored: () => {},
      afterCommit: () => { throw new Error("down"); },
    };
    const quiet: Plugin = { name: "quiet", close: () => {} }; // no hook: no figures
    const hooks = new PluginHooks([slow, picky, quiet], createLogger("error"));
    expect(hooks.telemetry.snapshot()).toEqual({
      slow: { on_event: zero(), after_commit: zero() },
      picky: { on_event: zero(), after_events_stored: zero(), after_commit: zero() },
    });

    const events = [
      testEvent({ event_type: "run_start", sdk_run_id: "r1" }),
      testEvent({ event_type: "step", sdk_run_id: "r1", payload: { bad: true } }),
      testEvent({ event_type: "step", sdk_run_id: "r1" }), // its run is skipped after the failure
      testEvent({ event_type: "run_start", sdk_run_id: "r2" }),
    ];
    const { part, drafts, runKeys, stored } = partOf(events);
    await expect(hooks.eachEvent(part, drafts, runKeys)).rejects.toBeInstanceOf(EventsFailed);
    await hooks.afterEventsStored(stored, {});
    await expect(hooks.afterCommit(stored, {})).rejects.toThrow("down");

    const s = hooks.telemetry.snapshot();
    // Each saw three events: r1's third was skipped once picky refused its second (which slow, first, had taken).
    expect(s.slow!.on_event).toMatchObject({ calls: 3, events: 3, runs: 2, errors: 0 });
    expect(s.picky!.on_event).toMatchObject({ calls: 3, events: 3, runs: 2, errors: 1 });
    expect(s.picky!.after_events_stored).toMatchObject({ calls: 1, events: 4, runs: 2, errors: 0 });
    expect(s.slow!.after_commit).toMatchObject({ calls: 1, events: 4, runs: 2, errors: 0 });
    expect(s.picky!.after_commit).toMatchObject({ calls: 1, errors: 1 });
    expect(s.slow!.on_event!.seconds).toBeGreaterThanOrEqual(0.005);
    expect(s.slow!.on_event!.seconds).toBeGreaterThan(s.picky!.on_event!.seconds);
    expect(s.slow!.after_commit!.seconds).toBeGreaterThanOrEqual(0.015);
  });
});

const zero = () => ({ calls: 0, events: 0, runs: 0, errors: 0, seconds: 0 });
