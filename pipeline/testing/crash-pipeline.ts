/**
 * Test fixture for the pipeline crash test (pipeline/crash.test.ts): runs the embedded stack (file log, chDB,
 * PGlite) on the data dir argv[2], keeps appending events of many runs while the pipeline processes them, and
 * prints each acknowledged event as "<sdk_run_id> <event_id>" (synchronously). The test kills it with SIGKILL.
 */
import { writeSync } from "node:fs";
import { loadConfig } from "../../core/config.js";
import type { EventType, LoggedEvent } from "../../core/events/schema.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { createLogger } from "../../core/logger.js";
import { openPorts } from "../../core/runtime.js";
import { startPipeline } from "../runner.js";
import { appendEvents } from "../../core/log/events.js";

const dir = process.argv[2]!;
const round = process.argv[3] ?? "0";
const ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
const existing = await ports.sql.query<{ id: string }>("SELECT id FROM users WHERE email = 'crash@example.com'");
const userId = Number(
  existing[0]?.id ??
    (await ports.sql.query<{ id: string }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Crash', 'crash@example.com', 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u"))[0]!.id,
);
await startPipeline(ports, { maxBatch: 300, maxWaitMs: 2, logger: createLogger("error") });
writeSync(1, `user ${userId}\n`);

const types: [EventType, Record<string, unknown>][] = [
  ["step", { node_name: "plan", phase: "start" }],
  ["tool_call", { tool_name: "search", phase: "end", output_preview: "o".repeat(700) }],
  ["error", { error_type: "E", error_message: "boom" }],
];
function event(sdk: string, i: number): LoggedEvent {
  const at = new Date().toISOString();
  const [type, payload] = i === 0 ? (["run_start", { framework: "f" }] as [EventType, Record<string, unknown>]) : types[i % 3]!;
  return {
    event_id: uuidv7(), project_id: userId, user_id: userId, run_id: runIdFor(userId, sdk), sdk_run_id: sdk, event_type: type,
    agent_name: i === 0 ? `agent-${sdk.length % 3}` : null, payload, occurred_at: at, received_at: at, config_version: null,
  };
}

// 8 writers; each writes runs of 12 events, in single appends and small bursts.
await Promise.all(
  Array.from({ length: 8 }, async (_, w) => {
    for (let r = 0; ; r++) {
      const sdk = `c${round}-w${w}-r${r}`;
      for (let i = 0; i < 12; ) {
        const n = i % 4 === 1 ? 3 : 1;
        const batch = Array.from({ length: Math.min(n, 12 - i) }, (_, k) => event(sdk, i + k));
        await appendEvents(ports.log, batch);
        writeSync(1, batch.map((e) => `${sdk} ${e.event_id}`).join("\n") + "\n");
        i += batch.length;
      }
    }
  }),
);
