/** Failure isolation (isolation.ts) with a scripted processor: outage vs poison, named failures, bisection, tenants. */
import { describe, expect, it } from "vitest";
import type { LoggedEvent } from "../core/events/schema.js";
import { createLogger } from "../core/logger.js";
import { EventsFailed, processIsolated, type IsolationDeps } from "./isolation.js";

const ev = (id: string, user = 1): LoggedEvent =>
  ({ event_id: id, project_id: user, user_id: user, run_id: `r${user}`, sdk_run_id: `run-${user}`, event_type: "step", agent_name: null, payload: {}, occurred_at: "", received_at: "", config_version: null });

function harness(opts: { poison?: Set<string>; named?: boolean; up?: () => boolean; flaky?: Set<string> }) {
  const stored: string[] = [];
  const dead: string[] = [];
  let attempts = 0;
  const deps: IsolationDeps = {
    async process(events) {
      attempts++;
      const bad = events.map((e, index) => ({ e, index })).filter(({ e }) => opts.poison?.has(e.event_id) || (opts.flaky?.has(e.event_id) && events.length > 1));
      if (bad.length) {
        if (opts.named) throw new EventsFailed(bad.map(({ index, e }) => ({ index, plugin: "p", error: new Error(`bad ${e.event_id}`) })));
        throw new Error("storage refused the batch");
      }
      if (opts.up && !opts.up()) throw new Error("connection refused");
      stored.push(...events.map((e) => e.event_id));
    },
    async deadLetter(failed) {
      dead.push(...failed.map((f) => f.event.event_id));
    },
    storageUp: async () => opts.up?.() ?? true,
    logger: createLogger("error"),
  };
  return { deps, stored, dead, attempts: () => attempts };
}

const ids = (n: number, user = 1) => Array.from({ length: n }, (_, i) => ev(`e${user}-${i}`, user));

describe("failure isolation", () => {
  it("an outage fails the batch for a retry: nothing is dead-lettered", async () => {
    const h = harness({ up: () => false });
    await expect(processIsolated(ids(10), h.deps)).rejects.toThrow("connection refused");
    expect(h.dead).toEqual([]);
    expect(h.stored).toEqual([]);
  });

  it("events a plugin names are set aside: the rest is stored at once, they are dead-lettered, in a few attempts however many", async () => {
    const events = ids(1000);
    const poison = new Set(["e1-3", "e1-500", "e1-999"]);
    const h = harness({ poison, named: true });
    await processIsolated(events, h.deps);
    expect(h.dead).toEqual(["e1-3", "e1-500", "e1-999"]);
    expect(h.stored).toEqual(events.map((e) => e.event_id).filter((id) => !poison.has(id)));
    expect(h.attempts()).toBeLessThanOrEqual(4);
  });

  it("an unnamed failure while storage answers is bisected down to the poison event; order is kept", async () => {
    const events = ids(64);
    const h = harness({ poison: new Set(["e1-37"]) });
    await processIsolated(events, h.deps);
    expect(h.dead).toEqual(["e1-37"]);
    expect(h.stored).toEqual(events.map((e) => e.event_id).filter((id) => id !== "e1-37"));
    expect(h.attempts()).toBeLessThan(2 * Math.log2(64) + 4);
  });

  it("other tenants' events pass after one extra attempt, whatever one tenant sent", async () => {
    const events = [...ids(50, 1), ...ids(50, 2), ...ids(50, 3)].sort(() => 0.5 - Math.random());
    const h = harness({ poison: new Set(["e2-7", "e2-8"]) });
    await processIsolated(events, h.deps);
    expect(h.dead.sort()).toEqual(["e2-7", "e2-8"]);
    expect(h.stored.filter((id) => id.startsWith("e1-") || id.startsWith("e3-"))).toHaveLength(100);
    expect(h.stored).toHaveLength(148);
  });

  it("an event that fails only beside others is stored when tried alone, not dead-lettered", async () => {
    const h = harness({ flaky: new Set(["e1-2"]), named: true });
    await processIsolated(ids(5), h.deps);
    expect(h.dead).toEqual([]);
    expect(h.stored.sort()).toEqual(["e1-0", "e1-1", "e1-2", "e1-3", "e1-4"]);
  });

  it("storage that goes down while isolating fails the batch instead of dead-lettering", async () => {
    let calls = 0;
    const h = harness({ poison: new Set(["e1-1"]), up: () => ++calls < 3 });
    await expect(processIsolated(ids(4), h.deps)).rejects.toThrow();
    expect(h.dead).toEqual([]);
  });
});
