/**
 * storeParts (overlapped-parts.ts) with a scripted processor: the next part starts once the current part released
 * its drafts, never earlier and never beside isolation's retries; a failed first attempt abandons it (awaited, run
 * cache dropped) and it starts over; an outage rejects only after every attempt has settled.
 */
import { describe, expect, it } from "vitest";
import type { LoggedEvent } from "../core/events/schema.js";
import { createLogger } from "../core/logger.js";
import type { ProcessOptions } from "./part-processor.js";
import { storeParts } from "./overlapped-parts.js";

const ev = (id: string): LoggedEvent =>
  ({ event_id: id, project_id: 1, user_id: 1, run_id: "r", sdk_run_id: "run", event_type: "step", agent_name: null, payload: {}, occurred_at: "", received_at: "", config_version: null });
const tick = () => new Promise<void>((r) => setImmediate(r));

interface Script {
  /** Fails the attempt of the part starting with this event id, after (true) or before (false) releasing its drafts, this many times. */
  readonly fail?: Map<string, { afterRelease: boolean; times: number }>;
  readonly up?: () => boolean;
}

function harness(parts: string[][], script: Script = {}) {
  const log: string[] = [];
  const stored: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let forgotten = 0;
  const failures = new Map(script.fail ? [...script.fail].map(([k, v]) => [k, { ...v }]) : []);
  const processor = {
    processPart: async (events: readonly LoggedEvent[], options: ProcessOptions = {}) => {
      const name = events.map((e) => e.event_id).join(",");
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      log.push(`start ${name}`);
      try {
        await tick();
        const failure = failures.get(events[0]!.event_id);
        const fail = failure !== undefined && failure.times > 0 && events.length > 1;
        if (fail && !failure.afterRelease) {
          failure.times--;
          throw new Error(`part ${name} failed`);
        }
        options.onDraftsReleased?.();
        log.push(`released ${name}`);
        await tick();
        await tick();
        if (script.up && !script.up()) throw new Error("connection refused");
        if (fail) {
          failure.times--;
          throw new Error(`part ${name} failed`);
        }
        stored.push(...events.map((e) => e.event_id));
        log.push(`done ${name}`);
      } finally {
        inFlight--;
      }
    },
    forgetRuns: () => void forgotten++,
  };
  const queue = parts.map((p) => p.map(ev));
  const take = async () => {
    await tick();
    return queue.shift() ?? [];
  };
  const isolation = { deadLetter: async () => {}, storageUp: async () => script.up?.() ?? true, logger: createLogger("error"), singleRetryDelaysMs: [0] };
  return { run: () => storeParts(take, processor, isolation), log, stored, inFlight: () => inFlight, maxInFlight: () => maxInFlight, forgotten: () => forgotten };
}

describe("parts stored with one overlap", () => {
  it("starts the next part once the current one released its drafts, before it is done; at most two at once; all stored in order", async () => {
    const h = harness([["a1", "a2"], ["b1", "b2"], ["c1", "c2"]]);
    await h.run();
    expect(h.stored).toEqual(["a1", "a2", "b1", "b2", "c1", "c2"]);
    expect(h.log.indexOf("start b1,b2")).toBeGreaterThan(h.log.indexOf("released a1,a2"));
    expect(h.log.indexOf("start b1,b2")).toBeLessThan(h.log.indexOf("done a1,a2"));
    expect(h.log.indexOf("start c1,c2")).toBeGreaterThan(h.log.indexOf("done a1,a2"));
    expect(h.maxInFlight()).toBe(2);
    expect(h.forgotten()).toBe(0);
  });

  it("a part failing after its release: the next part's attempt is awaited and the run cache dropped before isolation retries, then it starts over", async () => {
    const h = harness([["a1", "a2"], ["b1", "b2"], ["c1", "c2"]], { fail: new Map([["a1", { afterRelease: true, times: 1 }]]) });
    await h.run();
    expect(h.forgotten()).toBe(1);
    // Isolation retried a's events alone (halves), never beside b's abandoned attempt.
    const retry = h.log.findIndex((l, i) => i > h.log.indexOf("start b1,b2") && l.startsWith("start a1"));
    expect(retry).toBeGreaterThan(h.log.indexOf("done b1,b2"));
    // b was processed again after a settled; everything is stored, a's events before b's second time.
    expect(h.log.filter((l) => l === "start b1,b2")).toHaveLength(2);
    expect(h.stored.filter((id) => id.startsWith("a"))).toEqual(["a1", "a2"]);
    expect(h.stored.lastIndexOf("b1")).toBeGreaterThan(h.stored.indexOf("a2"));
    expect(h.stored).toEqual(expect.arrayContaining(["a1", "a2", "b1", "b2", "c1", "c2"]));
    expect(h.maxInFlight()).toBe(2);
  });

  it("a part failing before its release: the next part does not start early", async () => {
    const h = harness([["a1", "a2"], ["b1", "b2"]], { fail: new Map([["a1", { afterRelease: false, times: 1 }]]) });
    await h.run();
    expect(h.log.filter((l) => l === "start b1,b2")).toHaveLength(1);
    expect(h.log.indexOf("start b1,b2")).toBeGreaterThan(h.log.lastIndexOf("done a2"));
    expect(h.forgotten()).toBe(0);
    expect(h.maxInFlight()).toBe(1);
  });

  it("an outage rejects once the next part's attempt has settled", async () => {
    let up = true;
    const h = harness([["a1", "a2"], ["b1", "b2"]], { up: () => up });
    const running = h.run();
    // Storage goes down while a is being written and b has started.
    while (!h.log.includes("start b1,b2")) await tick();
    up = false;
    await expect(running.finally(() => expect(h.inFlight()).toBe(0))).rejects.toThrow("connection refused");
    expect(h.maxInFlight()).toBe(2);
  });
});
