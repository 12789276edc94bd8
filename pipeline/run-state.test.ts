/** The one owner of per-run state (run-state.ts): records, known events, bounds. */
import { describe, expect, it } from "vitest";
import { newRunRecord } from "../core/events/run.js";
import { eventKey, runKey } from "../core/events/run-key.js";
import { runIdFor } from "../core/ids.js";
import { RunState } from "./run-state.js";

const run = (id: string) => newRunRecord({ project_id: 1, user_id: 1 }, id, runIdFor(1, id), "2026-11-26T10:00:00.000Z");
const k = (id: string) => runKey(1, id);
const e = (id: string, n: number) => eventKey(k(id), `0190a0b0-0000-7000-8000-00000000000${n}`);

describe("RunState", () => {
  it("keeps one record per run, least recently used dropped first, plugin state going with it", () => {
    const state = new RunState(2);
    const a = state.admit(k("a"), run("a"), true);
    a.pluginState.set("p", true);
    state.admit(k("b"), run("b"), false);
    state.get(k("a")); // a is now the most recently used
    state.admit(k("c"), run("c"), false);
    expect(state.get(k("b"))).toBeUndefined();
    expect(state.get(k("a"))).toBe(a);
    const again = state.admit(k("a"), run("a"), false); // loaded again: a new record, no plugin state
    expect(again.pluginState.size).toBe(0);
    expect(state.sizes.runs).toBe(2);
  });

  it("forgets one run or all, with their known events", () => {
    const state = new RunState(10);
    state.admit(k("a"), run("a"), true);
    state.startKnowing(k("a"));
    state.recordStored(k("a"), e("a", 1));
    state.admit(k("b"), run("b"), false);
    state.forget(k("a"));
    state.forget(k("zzz")); // never admitted: nothing happens
    expect(state.get(k("a"))).toBeUndefined();
    expect(state.isKnownStored(k("a"), e("a", 1))).toBe(false);
    expect(state.sizes).toEqual({ runs: 1, knownRuns: 0, knownIds: 0 });
    state.forgetAll();
    expect(state.get(k("b"))).toBeUndefined();
    expect(state.sizes.runs).toBe(0);
  });

  it("knows the stored events of the runs it was told are new, and nothing of others", () => {
    const state = new RunState(10);
    state.admit(k("a"), run("a"), true);
    state.admit(k("b"), run("b"), false);
    state.startKnowing(k("a"));
    state.recordStored(k("a"), e("a", 1));
    state.recordStored(k("b"), e("b", 1)); // not known: ignored
    expect(state.knowsAllStored(k("a"))).toBe(true);
    expect(state.knowsAllStored(k("b"))).toBe(false);
    expect(state.isKnownStored(k("a"), e("a", 1))).toBe(true);
    expect(state.isKnownStored(k("b"), e("b", 1))).toBe(false);
    expect(state.isKnownStored(k("a"), e("a", 2))).toBe(false);
    state.recordStored(k("a"), e("a", 1)); // the same event again counts once
    expect(state.sizes).toMatchObject({ knownRuns: 1, knownIds: 1 });
    state.ended(k("a"));
    expect(state.knowsAllStored(k("a"))).toBe(false);
    expect(state.isKnownStored(k("a"), e("a", 1))).toBe(false);
    expect(state.sizes).toMatchObject({ knownRuns: 0, knownIds: 0 });
  });

  it("lets go of a run's known events over its share, of the runs known longest over the whole budget, and of a run known too long", () => {
    let now = 0;
    const state = new RunState(10, { maxIds: 5, maxIdsPerRun: 3, maxAgeMs: 1000 }, () => now);
    state.admit(k("big"), run("big"), true);
    state.startKnowing(k("big"));
    for (const n of [1, 2, 3]) state.recordStored(k("big"), e("big", n));
    expect(state.knowsAllStored(k("big"))).toBe(true);
    state.recordStored(k("big"), e("big", 4));
    expect(state.knowsAllStored(k("big"))).toBe(false);
    expect(state.isKnownStored(k("big"), e("big", 1))).toBe(false);
    for (const r of ["r1", "r2", "r3"]) {
      state.admit(k(r), run(r), true);
      state.startKnowing(k(r));
      state.recordStored(k(r), e(r, 1));
      state.recordStored(k(r), e(r, 2));
    }
    // 6 ids over a budget of 5: r1, known first, loses both.
    expect(state.sizes).toMatchObject({ knownRuns: 2, knownIds: 4 });
    expect(state.knowsAllStored(k("r1"))).toBe(false);
    expect(state.isKnownStored(k("r3"), e("r3", 2))).toBe(true);
    now = 1001;
    expect(state.knowsAllStored(k("r2"))).toBe(false);
    expect(state.isKnownStored(k("r2"), e("r2", 1))).toBe(false);
    // A record dropped from memory takes its known events with it.
    state.forget(k("r3"));
    expect(state.sizes).toMatchObject({ knownRuns: 0, knownIds: 0 });
  });
});
