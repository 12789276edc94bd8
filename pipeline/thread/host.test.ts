/**
 * The pipeline on its own thread (host.ts) over the real embedded adapters: the thread's SQL (procedures
 * included), ClickHouse and pub/sub calls are served by this thread, and a thread that dies mid-batch is
 * replaced without losing or doubling an event. Custom plugins reach the thread both ways a module can be
 * named: RUNWATCH_PLUGINS (the redaction example) and `plugins` in code (the thread-killing test plugin).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventStore } from "../../stores/runs/event-store.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { loadConfig } from "../../core/config.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import type { Pipeline } from "../runner.js";
import { startPipelineThread } from "./host.js";
import { appendEvents } from "../../core/log/events.js";
import { isShared } from "../../core/threads/shared-arena.js";

let dir: string;
let ports: Ports;
let store: EventStore;
let pipeline: Pipeline;
const messages: { channel: string; msg: { runs: { events: { event_id: string }[] }[] } }[] = [];
/** Each insert the thread sent, by table: whether its rows came as a view of the thread's shared arena. */
const inserts: { table: string; shared: boolean }[] = [];

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-pipeline-thread-"));
  const plugin = path.join(path.dirname(new URL(import.meta.url).pathname), "testing/exit-thread-once.ts");
  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error", RUNWATCH_PLUGINS: "./plugins/examples/redact-secrets.ts" }));
  store = createEventStore(ports.clickhouse);
  await ports.pubsub.subscribePrefix("user.", (channel, msg) => messages.push({ channel, msg: JSON.parse(msg) }));
  const insertEncoded = ports.clickhouse.insertEncoded.bind(ports.clickhouse);
  ports.clickhouse.insertEncoded = (table, rows) => {
    inserts.push({ table, shared: isShared(rows.bytes) });
    return insertEncoded(table, rows);
  };
  pipeline = await startPipelineThread(ports, { maxWaitMs: 2, logger: createLogger("error"), plugins: [plugin] });
}, 60_000);

afterAll(async () => {
  await pipeline?.stop();
  await ports?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function createUser(email: string): Promise<number> {
  const rows = await ports.sql.query<{ id: number | string }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ($1, $2, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u", ["T", email]);
  return Number(rows[0]!.id);
}

let clock = Date.parse("2026-11-23T10:00:00.000Z");
function event(userId: number, sdkRunId: string, type: EventType, payload: Record<string, unknown>, agent?: string): LoggedEvent {
  const at = new Date((clock += 1000)).toISOString();
  return {
    event_id: uuidv7(), project_id: userId, user_id: userId, run_id: runIdFor(userId, sdkRunId), sdk_run_id: sdkRunId, event_type: type,
    agent_name: agent ?? null, payload, occurred_at: at, received_at: at, config_version: null,
  };
}

async function settle(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await pipeline.lag()) > 0) {
    if (Date.now() > deadline) throw new Error(`pipeline still lags by ${await pipeline.lag()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("pipeline thread (embedded adapters)", () => {
  it("stores, counts (a procedure run on PGlite by the host) and broadcasts every event", async () => {
    const user = await createUser("thread@example.com");
    const events = [
      event(user, "run-t", "run_start", { framework: "langgraph" }, "thread-bot"),
      event(user, "run-t", "tool_call", { tool_name: "search", phase: "end", output_preview: "ö😀".repeat(400), input_preview: "key sk-proj-abcdefghijklmnopqrstuvwxyz012345" }),
      event(user, "run-t", "run_end", { prompt_tokens: 1000, completion_tokens: 200, model: "gpt-4o" }),
    ];
    for (const e of events) await appendEvents(ports.log, [e]);
    await settle();
    expect(await store.getRun(user, "run-t")).toMatchObject({ status: "success", agent_name: "thread-bot", event_count: 3, model: "gpt-4o" });
    const stored = await store.listEvents(user, runIdFor(user, "run-t"));
    expect(stored.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    expect(String((stored[1]!.payload as { output_preview: string }).output_preview).length).toBeLessThan(1200); // truncated on the thread
    expect((stored[1]!.payload as { input_preview: string }).input_preview).toBe("key [REDACTED]"); // RUNWATCH_PLUGINS ran there too
    const [agent] = await ports.sql.query<{ total_runs: number }>("SELECT total_runs FROM agents WHERE project_id = $1 AND name = 'thread-bot'", [user]);
    expect(Number(agent!.total_runs)).toBe(1);
    const pushed = messages.filter((m) => m.channel === `user.${user}`).flatMap((m) => m.msg.runs.flatMap((r) => r.events.map((e) => e.event_id)));
    expect(pushed).toEqual(events.map((e) => e.event_id));
    // The rows came as views of the thread's arena (no buffer per insert on this thread), and were stored as sent.
    expect(inserts.filter((i) => i.table === "agent_events").length).toBeGreaterThan(0);
    expect(inserts.every((i) => i.shared)).toBe(true);
  });

  it.each([
    ["while processing an event", "exit_thread_marker"],
    ["while its SQL procedure runs on the host", "exit_in_procedure_marker"],
  ])("replaces a thread that dies %s: the batch is retried, every event stored once, counters exact", async (_, markerField) => {
    const user = await createUser(`${markerField}@example.com`);
    const marker = path.join(dir, markerField);
    const events: LoggedEvent[] = [];
    for (let r = 0; r < 20; r++) {
      events.push(event(user, `run-${r}`, "run_start", {}, "crash-bot"));
      for (let i = 0; i < 10; i++) {
        const payload = r === 7 && i === 5 ? { node_name: "n", phase: "start", [markerField]: marker } : { node_name: "n", phase: "start" };
        events.push(event(user, `run-${r}`, "step", payload));
      }
    }
    await appendEvents(ports.log, events);
    await settle();
    expect(await fs.readFile(marker, "utf8")).toBe("exited"); // the first thread did die
    const runs = await store.loadRuns(Array.from({ length: 20 }, (_, r) => ({ project_id: user, external_id: `run-${r}` })));
    expect(runs).toHaveLength(20);
    for (const run of runs) expect(run.event_count).toBe(11);
    const [agent] = await ports.sql.query<{ total_runs: number }>("SELECT total_runs FROM agents WHERE project_id = $1 AND name = 'crash-bot'", [user]);
    expect(Number(agent!.total_runs)).toBe(20);
    // The host serves other callers: no transaction waits on the dead thread.
    expect(await ports.sql.query("SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });
});

describe("custom plugins and the pipeline thread", () => {
  it("refuses a plugin object (it could not cross to the thread) instead of silently dropping it", async () => {
    const object = { name: "in-code" } as unknown as string;
    await expect(startPipelineThread(ports, { plugins: [object] })).rejects.toThrow(/plugins must be module paths/);
  });
});
