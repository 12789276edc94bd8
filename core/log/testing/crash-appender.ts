/**
 * Test fixture for the crash test (file-log.test.ts): appends bursts of events from several concurrent writers
 * to the file log in argv[2] and prints "round:writer:seq" on stdout (synchronously) after each append resolves, i.e.
 * after it is acknowledged as durable. The test kills this process with SIGKILL mid-burst.
 */
import { writeSync } from "node:fs";
import { openFileLog } from "../file-log.js";
import type { LoggedEvent } from "../../events/schema.js";
import { appendEvents } from "../events.js";

const dir = process.argv[2]!;
const writers = Number(process.argv[3] ?? 8);
const round = process.argv[4] ?? "0";
const log = await openFileLog(dir, { segmentBytes: 256 * 1024 });

const event = (writer: number, seq: number): LoggedEvent => ({
  event_id: `${round}:${writer}:${seq}`,
  project_id: 1, user_id: 1,
  run_id: "00000000-0000-5000-8000-000000000000",
  sdk_run_id: `writer-${writer}`,
  event_type: "step",
  agent_name: null,
  payload: { node_name: "n", phase: "start", pad: "x".repeat(200 + ((seq * 37) % 300)) },
  occurred_at: new Date().toISOString(),
  received_at: new Date().toISOString(),
  config_version: null,
});

writeSync(1, "ready\n");
await Promise.all(
  Array.from({ length: writers }, async (_, w) => {
    for (let seq = 0; ; ) {
      // Alternate single appends and bursts, as single and batch ingest do.
      const n = seq % 5 === 0 ? 50 : 1;
      const batch = Array.from({ length: n }, (_, i) => event(w, seq + i));
      await appendEvents(log, batch);
      writeSync(1, batch.map((e) => e.event_id).join("\n") + "\n");
      seq += n;
    }
  }),
);
