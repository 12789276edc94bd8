/**
 * Known events (run-state.ts, duplicate-index.ts): the part processor finding the duplicates of a run it has stored
 * every event of without asking storage, on a real chDB — a trace sent over many exports, an exporter's retry, a
 * failed part.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventStore } from "../stores/runs/event-store.js";
import type { EventStore } from "../core/ports/event-store.js";
import { runIdFor } from "../core/ids.js";
import type { Sql } from "../core/ports/sql.js";
import { countingLookUps, processorHarness, type ProcessorHarness } from "./testing/processor-harness.js";

describe("the part processor with known events (chDB)", () => {
  let h: ProcessorHarness;
  beforeAll(async () => {
    h = await processorHarness("known-events");
  });
  afterAll(async () => {
    await h?.close();
  });

  /** Sql that counts the agents' run-start transactions (stores/agent-run-starts.ts). */
  const countingRuns = (sql: Sql) => {
    const counts = { agentRunStarts: 0 };
    return { counts, sql: { ...sql, run: ((procedure, args) => (counts.agentRunStarts += procedure.name === "stores.count-agent-runs" ? 1 : 0, sql.run(procedure, args))) as Sql["run"] } };
  };

  it("finds the resent events of a run spread over parts without asking storage, and counts the run and its agent once", async () => {
    const user = await h.createUser();
    const { ch, counts } = countingLookUps(h.ports.clickhouse);
    const { sql, counts: sqlCounts } = countingRuns(h.ports.sql);
    const processor = await h.processorWith(ch, createEventStore(ch), sql);
    await processor.storedRunsRead();
    // As OTLP exports come: every part of the trace repeats its run_start (the same id), one or two spans each.
    const start = h.event(user, "spread", "run_start", { framework: "test" });
    const steps = [1, 2, 3].map((i) => h.event(user, "spread", "step", { node_name: `s${i}`, phase: "end" }));
    await processor.processPart([start, steps[0]!]);
    await processor.processPart([start, steps[1]!]);
    await processor.processPart([start, steps[1]!, steps[2]!]); // an exporter's retry of the last export, with one more span
    expect(counts.eventLookUps).toBe(0);
    expect(sqlCounts.agentRunStarts).toBe(1);
    expect(await h.store.getRun(user, "spread")).toMatchObject({ status: "running", event_count: 4 });
    expect(await h.store.listEvents(user, runIdFor(user, "spread"))).toHaveLength(4);
    const agents = await h.ports.sql.query<{ total_runs: number }>("SELECT total_runs FROM agents WHERE project_id = $1", [user]);
    expect(agents.map((a) => Number(a.total_runs))).toEqual([1]);

    // Once the run has ended it is no longer known: a late resend is looked up, and still stored once.
    const end = h.event(user, "spread", "run_end");
    await processor.processPart([start, end]);
    await processor.processPart([start, end]);
    expect(counts.eventLookUps).toBeGreaterThan(0);
    expect(await h.store.getRun(user, "spread")).toMatchObject({ status: "success", event_count: 5 });
    processor.close();
  });

  it("asks storage again about the runs of a part whose insert failed: it may have stored them all the same", async () => {
    const user = await h.createUser();
    const { ch, counts } = countingLookUps(h.ports.clickhouse);
    let lostAnswer = false;
    const inner = createEventStore(ch);
    // An insert that lands but whose answer is lost (a server transport timing out).
    const store: EventStore = {
      ...inner,
      insertEvents: async (events, json) => {
        await inner.insertEvents(events, json);
        if (lostAnswer) throw new Error("ClickHouse timed out (test)");
      },
    };
    const processor = await h.processorWith(ch, store);
    await processor.storedRunsRead();
    const start = h.event(user, "failing", "run_start", { framework: "test" });
    const step = h.event(user, "failing", "step", { node_name: "a", phase: "end" });
    await processor.processPart([start]);
    lostAnswer = true;
    await expect(processor.processPart([start, step])).rejects.toThrow(/timed out/);
    lostAnswer = false;
    await processor.processPart([start, step]); // the retry
    const before = counts.eventLookUps;
    await processor.processPart([start, step]); // and a resend of the same export later
    expect(counts.eventLookUps).toBeGreaterThan(before);
    expect(await h.store.getRun(user, "failing")).toMatchObject({ event_count: 2 });
    processor.close();
  });
});
