/**
 * The pipeline over the real embedded adapters (file log, chDB, PGlite, in-process pub/sub) in a temp data dir.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventStore } from "../stores/runs/event-store.js";
import type { EventStore } from "../core/ports/event-store.js";
import { loadConfig } from "../core/config.js";
import type { EventType, LoggedEvent } from "../core/events/schema.js";
import { runIdFor, uuidv7 } from "../core/ids.js";
import { createLogger } from "../core/logger.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { buildChain } from "../plugins/index.js";
import type { Plugin, PluginContext } from "../plugins/plugin.js";
import { createPartProcessor, startPipeline, type Pipeline } from "./runner.js";
import { appendEvents } from "../core/log/events.js";

let dir: string;
let ports: Ports;
let store: EventStore;
let pipeline: Pipeline;
const messages: { channel: string; msg: any }[] = [];
let failAfterCommit = 0;

/** A custom plugin passed in code: fails afterCommit on demand, to prove a failed batch is retried, not lost. */
const flaky: Plugin = {
  name: "flaky-test-plugin",
  afterCommit() {
    if (failAfterCommit > 0) {
      failAfterCommit--;
      throw new Error("flaky plugin failure (test)");
    }
  },
};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-pipeline-"));
  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
  store = createEventStore(ports.clickhouse);
  await ports.pubsub.subscribePrefix("user.", (channel, msg) => messages.push({ channel, msg: JSON.parse(msg) }));
  pipeline = await startPipeline(ports, { plugins: [flaky], maxWaitMs: 2, logger: createLogger("error") });
});

afterAll(async () => {
  await pipeline?.stop();
  await ports?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function createUser(email: string): Promise<number> {
  const rows = await ports.sql.query<{ id: number | string }>(
    "WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ($1, $2, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u",
    ["Test", email],
  );
  return Number(rows[0]!.id);
}

let clock = Date.parse("2026-11-23T10:00:00.000Z");
function event(userId: number, sdkRunId: string, type: EventType, payload: Record<string, unknown>, agent?: string): LoggedEvent {
  clock += 1000;
  const at = new Date(clock).toISOString();
  return {
    event_id: uuidv7(),
    project_id: userId, user_id: userId,
    run_id: runIdFor(userId, sdkRunId),
    sdk_run_id: sdkRunId,
    event_type: type,
    agent_name: agent ?? null,
    payload,
    occurred_at: at,
    received_at: at,
    config_version: null,
  };
}

async function settle(): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await pipeline.lag()) > 0) {
    if (Date.now() > deadline) throw new Error(`pipeline still lags by ${await pipeline.lag()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function totalRuns(userId: number, agent: string): Promise<number> {
  const rows = await ports.sql.query<{ total_runs: number | string }>("SELECT total_runs FROM agents WHERE project_id = $1 AND name = $2", [userId, agent]);
  return rows.length ? Number(rows[0]!.total_runs) : 0;
}

function lifecycle(userId: number, sdkRunId: string, agent: string): LoggedEvent[] {
  return [
    event(userId, sdkRunId, "run_start", { framework: "langgraph", input: { q: "hi" } }, agent),
    event(userId, sdkRunId, "step", { node_name: "plan", phase: "start" }),
    event(userId, sdkRunId, "tool_call", { tool_name: "search", phase: "end", input_preview: "i".repeat(800), output_preview: "ö😀".repeat(400), duration_ms: 12 }),
    event(userId, sdkRunId, "human_input_requested", { question: "Proceed?", channel: "slack" }),
    event(userId, sdkRunId, "human_input_received", { response: "yes", responded_by: "ana" }),
    event(userId, sdkRunId, "run_end", { output: {}, prompt_tokens: 1000, completion_tokens: 200, model: "gpt-4o" }),
  ];
}

describe("pipeline (embedded adapters)", () => {
  it("moves a run running → waiting_for_input → running → success, stores each event once, truncates, counts, broadcasts", async () => {
    const user = await createUser("flow@example.com");
    const events = lifecycle(user, "run-a", "support-bot");
    for (const e of events) await appendEvents(ports.log, [e]); // one request per event, as single ingest does
    await settle();

    const run = await store.getRun(user, "run-a");
    expect(run).toMatchObject({
      status: "success", agent_name: "support-bot", framework: "langgraph", event_count: 6, error_count: 0,
      model: "gpt-4o", prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200, cost_source: "computed",
      pending_question: "",
    });
    expect(run!.cost_usd).toBeCloseTo(1000 * 2.5e-6 + 200 * 10e-6, 9);
    expect(run!.started_at).toBe(events[0]!.occurred_at);
    expect(run!.ended_at).toBe(events[5]!.occurred_at);

    const stored = await store.listEvents(user, runIdFor(user, "run-a"));
    expect(stored.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    const tool = stored.find((e) => e.event_type === "tool_call")!;
    expect([...(tool.payload.input_preview as string)]).toHaveLength(500);
    expect([...(tool.payload.output_preview as string)]).toHaveLength(500);
    expect(tool.payload).toMatchObject({ input_preview_truncated: true, input_preview_length: 800, output_preview_length: 800 });

    expect(await totalRuns(user, "support-bot")).toBe(1);

    const mine = messages.filter((m) => m.channel === `user.${user}`).map((m) => m.msg);
    expect(mine.every((m) => m.type === "events" && m.user_id === user)).toBe(true);
    const entries = mine.flatMap((m) => m.runs);
    const pushed = entries.flatMap((r) => r.events);
    expect(pushed.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    // However the pipeline grouped the events into parts, each run entry carries the run after its last event.
    const statusAfter = ["running", "running", "running", "waiting_for_input", "running", "success"];
    let upTo = 0;
    for (const r of entries) {
      upTo += r.events.length;
      expect(r.run.status).toBe(statusAfter[upTo - 1]);
      expect(r.run.event_count).toBe(upTo);
      if (upTo === 4) expect(r.run.pending_question).toBe("Proceed?");
    }
    expect(entries.at(-1).run).toMatchObject({ sdk_run_id: "run-a", event_count: 6, duration_ms: 5000, total_tokens: 1200 });
    expect(pushed[2].payload.input_preview).toHaveLength(500);
  });

  it("ends a run with an error event in error", async () => {
    const user = await createUser("err@example.com");
    await appendEvents(ports.log, [
      event(user, "run-e", "run_start", { framework: "custom" }, "etl"),
      event(user, "run-e", "step", { node_name: "load", phase: "start" }),
      event(user, "run-e", "error", { error_type: "KeyError", error_message: "missing column 'id'", traceback: "..." }),
    ]);
    await settle();
    expect(await store.getRun(user, "run-e")).toMatchObject({ status: "error", error_count: 1, last_error: "missing column 'id'", event_count: 3 });
  });

  it("stores and counts replayed and retried events exactly once (client retry, failed hook, restart)", async () => {
    const user = await createUser("replay@example.com");
    const events = lifecycle(user, "run-r", "replayer");
    await appendEvents(ports.log, events.slice(0, 3));
    await settle();
    // A client re-sends events with the same event_id, and a hook fails once: the batch is retried.
    failAfterCommit = 1;
    await appendEvents(ports.log, [...events.slice(2), events[0]!]);
    await settle();
    expect(failAfterCommit).toBe(0);
    let run = await store.getRun(user, "run-r");
    expect(run).toMatchObject({ status: "success", event_count: 6 });
    expect(await store.listEvents(user, runIdFor(user, "run-r"))).toHaveLength(6);
    expect(await totalRuns(user, "replayer")).toBe(1);

    // A restart replays a whole batch on a cold cache: still exactly once.
    const ctx: PluginContext = { config: ports.config, logger: createLogger("error"), sql: ports.sql, clickhouse: ports.clickhouse, pubsub: ports.pubsub, store };
    const chain = await buildChain(ctx);
    for (const p of chain) await p.init?.(ctx);
    const afterRestart = createPartProcessor(ctx, store, chain, 2); // a cache smaller than the batch's runs
    await afterRestart.processPart(structuredClone([...events, ...lifecycle(user, "run-x1", "other"), ...lifecycle(user, "run-x2", "other")]));
    expect(await store.getRun(user, "run-x2")).toMatchObject({ status: "success", event_count: 6 });
    run = await store.getRun(user, "run-r");
    expect(run).toMatchObject({ status: "success", event_count: 6, error_count: 0 });
    expect(await store.listEvents(user, runIdFor(user, "run-r"))).toHaveLength(6);
    expect(await totalRuns(user, "replayer")).toBe(1);

    // The narrow crash window: events stored, run row not yet written. The retry must still count them once.
    const failing: EventStore = { ...store, upsertRuns: async () => { throw new Error("ClickHouse went away (test)"); } };
    const window = lifecycle(user, "run-w", "replayer");
    await expect(createPartProcessor(ctx, failing, chain, 100).processPart(structuredClone(window.slice(0, 2)))).rejects.toThrow(/went away/);
    const processor = createPartProcessor(ctx, store, chain, 100);
    await processor.processPart(structuredClone(window.slice(0, 2)));
    await processor.processPart(structuredClone(window.slice(2)));
    expect(await store.listEvents(user, runIdFor(user, "run-w"))).toHaveLength(6);
    expect(await store.getRun(user, "run-w")).toMatchObject({ status: "success", event_count: 6 });
    const failingOnce = { ...store, calls: 0 } as EventStore & { calls: number };
    failingOnce.upsertRuns = async (runs) => {
      if (failingOnce.calls++ === 0) throw new Error("ClickHouse went away (test)");
      return store.upsertRuns(runs);
    };
    const sameCache = createPartProcessor(ctx, failingOnce, chain, 100);
    const more = [event(user, "run-w", "step", { node_name: "after", phase: "start" }), event(user, "run-w", "error", { error_message: "late" })];
    await expect(sameCache.processPart(structuredClone(more))).rejects.toThrow(/went away/);
    await sameCache.processPart(structuredClone(more)); // the log's retry of the same batch, same process
    expect(await store.getRun(user, "run-w")).toMatchObject({ event_count: 8, error_count: 1, status: "error" });

    // A second run of the same agent counts once more.
    await appendEvents(ports.log, lifecycle(user, "run-r2", "replayer"));
    await settle();
    expect(await totalRuns(user, "replayer")).toBe(3); // run-r, run-w, run-r2
  });

  it("afterEventsStored runs once the events are stored, beside the runs' write; a failed runs write is retried without broadcasting again", async () => {
    const user = await createUser("stored-stage@example.com");
    const ctx: PluginContext = { config: ports.config, logger: createLogger("error"), sql: ports.sql, clickhouse: ports.clickhouse, pubsub: ports.pubsub, store };
    const seen: { stored: number; runsWritten: boolean }[] = [];
    let runsWritten = false;
    let releaseRuns!: () => void;
    const runsGate = new Promise<void>((r) => (releaseRuns = r));
    // The runs' write waits until the hook has run: with the hook after it, this batch would never finish.
    const gated: EventStore = { ...store, upsertRuns: async (runs) => { await runsGate; await store.upsertRuns(runs); runsWritten = true; } };
    const probe: Plugin = {
      name: "stored-probe",
      async afterEventsStored(batch) {
        seen.push({ stored: (await store.listEvents(user, runIdFor(user, "run-s"))).length, runsWritten });
        releaseRuns();
        expect(batch.events).toHaveLength(2);
      },
    };
    const initChain = async (extra: Plugin[] = []) => {
      const chain = [...(await buildChain(ctx)), ...extra];
      for (const p of chain) await p.init?.(ctx);
      return chain;
    };
    const chain = await initChain([probe]);
    const events = lifecycle(user, "run-s", "stager").slice(0, 2);
    await createPartProcessor(ctx, gated, chain, 100).processPart(structuredClone(events));
    expect(seen).toEqual([{ stored: 2, runsWritten: false }]);
    expect(await store.getRun(user, "run-s")).toMatchObject({ status: "running", event_count: 2 });

    // The runs' write fails once: the batch is retried, its events are now stored (duplicates), no second frame.
    const frames = () => messages.filter((m) => m.channel === `user.${user}`).flatMap((m) => m.msg.runs)
      .filter((r) => r.run.sdk_run_id === "run-t").reduce((n, r) => n + r.events.length, 0);
    let failures = 1;
    const failingOnce: EventStore = { ...store, upsertRuns: async (runs) => { if (failures-- > 0) throw new Error("ClickHouse went away (test)"); await store.upsertRuns(runs); } };
    const processor = createPartProcessor(ctx, failingOnce, await initChain(), 100);
    const batch = lifecycle(user, "run-t", "stager").slice(0, 3);
    await expect(processor.processPart(structuredClone(batch))).rejects.toThrow(/went away/);
    await processor.processPart(structuredClone(batch));
    await new Promise((r) => setTimeout(r, 50)); // in-process pub/sub delivers on a later turn
    expect(frames()).toBe(3);
    expect(await store.getRun(user, "run-t")).toMatchObject({ status: "running", event_count: 3 });
  });

  it("counts each LLM call once into its run's totals across a crash window and a restart replay", async () => {
    const user = await createUser("llm-replay@example.com");
    const ctx: PluginContext = { config: ports.config, logger: createLogger("error"), sql: ports.sql, clickhouse: ports.clickhouse, pubsub: ports.pubsub, store };
    const chain = await buildChain(ctx);
    for (const p of chain) await p.init?.(ctx);
    const call = (model: string, prompt: number, completion: number) =>
      event(user, "run-llm", "step", { kind: "llm", node_name: "chat", phase: "end", model, provider: "openai", prompt_tokens: prompt, completion_tokens: completion });
    const events = [event(user, "run-llm", "run_start", { framework: "test" }, "caller"), call("gpt-4o", 1000, 200), call("gpt-4o-mini", 300, 50), event(user, "run-llm", "run_end", { prompt_tokens: 1, completion_tokens: 1 })];
    const expected = { llm_calls: 2, prompt_tokens: 1300, completion_tokens: 250, total_tokens: 1550, cost_source: "computed" };
    await createPartProcessor(ctx, store, chain, 100).processPart(structuredClone(events.slice(0, 2)));
    // The second call's event is stored but the run row is not (a crash between the two writes) ...
    const failing: EventStore = { ...store, upsertRuns: async () => { throw new Error("ClickHouse went away (test)"); } };
    await expect(createPartProcessor(ctx, failing, chain, 100).processPart(structuredClone(events.slice(2, 3)))).rejects.toThrow(/went away/);
    // ... and a new process (cold cache) gets the batch again: the stored calls are summed, none twice.
    await createPartProcessor(ctx, store, chain, 100).processPart(structuredClone(events.slice(2)));
    const run = await store.getRun(user, "run-llm");
    expect(run).toMatchObject(expected);
    // A restart replays everything: still the same totals.
    await createPartProcessor(ctx, store, chain, 1).processPart(structuredClone(events));
    expect(await store.getRun(user, "run-llm")).toMatchObject({ ...expected, cost_usd: run!.cost_usd });
    expect(run!.cost_usd).toBeGreaterThan(0);
  });

  it("reloads runs after a rebalance instead of trusting a cache another worker made stale", async () => {
    const user = await createUser("rebalance@example.com");
    const ctx: PluginContext = { config: ports.config, logger: createLogger("error"), sql: ports.sql, clickhouse: ports.clickhouse, pubsub: ports.pubsub, store };
    const chain = await buildChain(ctx);
    for (const p of chain) await p.init?.(ctx);
    const workerA = createPartProcessor(ctx, store, chain, 100);
    const workerB = createPartProcessor(ctx, store, chain, 100);
    const [start, step, failure, restart] = [
      event(user, "run-moved", "run_start", { framework: "test" }, "mover"),
      event(user, "run-moved", "step", { node_name: "a", phase: "start" }),
      event(user, "run-moved", "error", { error_message: "boom" }),
      event(user, "run-moved", "run_start", { framework: "test" }, "mover"),
    ];
    await Promise.all([workerA.storedRunsRead(), workerB.storedRunsRead()]);
    await workerA.processPart([start!]);
    // The partition moves to B, which processes two events, then comes back to A (what the log's onRebalance does).
    // Each reads the stored runs again first, so each knows the run the other stored and looks it up.
    workerB.storageChanged();
    await workerB.storedRunsRead();
    await workerB.processPart([step!, failure!]);
    workerA.storageChanged();
    await workerA.storedRunsRead();
    await workerA.processPart([restart!]);
    expect(await store.getRun(user, "run-moved")).toMatchObject({ event_count: 4, error_count: 1, status: "running" });
  });

  it("writes a run's cost row only when its cost facts change, and the folded row matches the run", async () => {
    const user = await createUser("costrows@example.com");
    // Rows are counted as written: no background merge may fold versions meanwhile.
    await ports.clickhouse.exec("SYSTEM STOP MERGES run_costs");
    try {
    const costRows = async () =>
      ports.clickhouse.query<{ version: string; status: string; model: string; total_tokens: string; cost_usd: number; day: string }>(
        "SELECT toString(version) AS version, status, model, total_tokens, cost_usd, toString(day) AS day FROM run_costs WHERE user_id = {u:UInt64} AND external_id = 'run-c' ORDER BY version",
        { u: user },
      );
    const send = async (type: EventType, payload: Record<string, unknown>, agent?: string) => {
      await appendEvents(ports.log, [event(user, "run-c", type, payload, agent)]);
      await settle();
    };
    await send("run_start", { framework: "custom" }, "coster");
    expect(await costRows()).toHaveLength(1);
    // Steps and tool calls change the run (event_count, last_event_at) but not its costs: no new cost row.
    await send("step", { node_name: "plan", phase: "start" });
    await send("tool_call", { tool_name: "search", phase: "end", duration_ms: 3 });
    expect(await costRows()).toHaveLength(1);
    expect((await store.getRun(user, "run-c"))!.event_count).toBe(3);
    // Tokens and the end do.
    await send("step", { node_name: "answer", phase: "end", kind: "llm", model: "gpt-4o", prompt_tokens: 1000, completion_tokens: 200 });
    await send("run_end", { output: {} });
    const rows = await costRows();
    expect(rows).toHaveLength(3);
    const run = (await store.getRun(user, "run-c"))!;
    const [folded] = await ports.clickhouse.query<{ version: string; status: string; model: string; total_tokens: string; cost_usd: number; day: string }>(
      "SELECT toString(version) AS version, status, model, total_tokens, cost_usd, toString(day) AS day FROM run_costs FINAL WHERE user_id = {u:UInt64} AND external_id = 'run-c'",
      { u: user },
    );
    expect(folded).toMatchObject({ version: String(run.version), status: "success", model: "gpt-4o", total_tokens: "1200", day: run.started_at!.slice(0, 10) });
    expect(folded!.cost_usd).toBeCloseTo(run.cost_usd, 12);
    expect(run.cost_usd).toBeGreaterThan(0);
    } finally {
      await ports.clickhouse.exec("SYSTEM START MERGES run_costs");
    }
  });
});
