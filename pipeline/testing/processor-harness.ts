/**
 * A part processor on the embedded stack (chDB, PGlite) for tests that drive it part by part and count what it
 * asks storage (pipeline/stored-runs.test.ts, pipeline/known-events.test.ts).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createEventStore } from "../../stores/runs/event-store.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { loadConfig } from "../../core/config.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { buildChain } from "../../plugins/index.js";
import type { PluginContext } from "../../plugins/plugin.js";
import { createPartProcessor } from "../part-processor.js";

export const quiet = createLogger("error");

export interface ProcessorHarness {
  readonly ports: Ports;
  readonly store: EventStore;
  createUser(): Promise<number>;
  /** An event of the run, a second after the one before. */
  event(user: number, sdkRunId: string, type: EventType, payload?: Record<string, unknown>): LoggedEvent;
  /** run_start, a step's start and end, run_end. */
  lifecycle(user: number, run: string): LoggedEvent[];
  processorWith(ch: ClickHouse, eventStore: EventStore, sql?: Sql): Promise<ReturnType<typeof createPartProcessor>>;
  close(): Promise<void>;
}

export async function processorHarness(name: string): Promise<ProcessorHarness> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `runwatch-${name}-`));
  const ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
  const store = createEventStore(ports.clickhouse);
  let nextUser = 1;
  let clock = Date.parse("2026-11-26T10:00:00.000Z");
  const event = (user: number, sdkRunId: string, type: EventType, payload: Record<string, unknown> = {}): LoggedEvent => {
    const at = new Date((clock += 1000)).toISOString();
    return {
      event_id: uuidv7(), project_id: user, user_id: user, run_id: runIdFor(user, sdkRunId), sdk_run_id: sdkRunId, event_type: type,
      agent_name: type === "run_start" ? "filtered" : null, payload, occurred_at: at, received_at: at, config_version: null,
    };
  };
  return {
    ports,
    store,
    event,
    async createUser() {
      const rows = await ports.sql.query<{ id: number | string }>(
        "WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Test', $1, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u", [`${name}-${nextUser++}@example.com`]);
      return Number(rows[0]!.id);
    },
    lifecycle: (user, run) => [
      event(user, run, "run_start", { framework: "test" }),
      event(user, run, "step", { node_name: "plan", phase: "start" }),
      event(user, run, "step", { node_name: "plan", phase: "end" }),
      event(user, run, "run_end", {}),
    ],
    async processorWith(ch, eventStore, sql = ports.sql) {
      const ctx: PluginContext = { config: ports.config, logger: quiet, sql, clickhouse: ch, pubsub: ports.pubsub, store: eventStore };
      const chain = await buildChain(ctx);
      for (const p of chain) await p.init?.(ctx);
      return createPartProcessor(ctx, eventStore, chain, 100);
    },
    async close() {
      await ports.close();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** ClickHouse that counts the pipeline's look-ups of events (by run, and by id). */
export function countingLookUps(ch: ClickHouse) {
  const counts = { eventLookUps: 0 };
  const wrapped: ClickHouse = {
    ...ch,
    query: (sql, params) => {
      if (/FROM agent_events\s+WHERE user_id IN/.test(sql)) counts.eventLookUps++;
      return ch.query(sql, params);
    },
  };
  return { ch: wrapped, counts };
}
