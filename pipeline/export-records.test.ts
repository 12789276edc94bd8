/**
 * OTLP export records (otlp/export-record.ts) through the real pipeline over the embedded adapters: expanded into
 * their events, processed at most maxBatch events at a time, stored once however often the record comes, and a
 * record whose body is not an export dead-lettered without holding up the records after it.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventStore } from "../stores/runs/event-store.js";
import type { EventStore } from "../core/ports/event-store.js";
import { loadConfig } from "../core/config.js";
import { encodeBatch, recordAt } from "../core/events/wire.js";
import { runIdFor } from "../core/ids.js";
import { createLogger } from "../core/logger.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { encodeExportRecord, exportRecordKey } from "../core/events/export-record.js";
import type { Plugin } from "../plugins/plugin.js";
import { replayDeadLetters } from "../dead-letters/index.js";
import { addDeadLetters, listDeadLetters } from "../stores/dead-letters.js";
import { agentTrace } from "../test/bench/otlp-payload.js";
import { exportJson, exportProtobuf, type SpanSpec } from "../test/e2e/otlp-fixtures.js";
import { startPipeline, type Pipeline } from "./runner.js";

const MAX_BATCH = 50;
let dir: string;
let ports: Ports;
let store: EventStore;
let pipeline: Pipeline;
/** The number of events of each batch the processor was given (counted by a plugin, in the batch's scratch: the next
 * batch's onEvent may run before this one's afterCommit, overlapped-parts.ts). */
const batchSizes: number[] = [];
const counter: Plugin = {
  name: "batch-size-counter",
  onEvent(_event, _draft, batch) {
    batch.scratch.set("batch-size-counter", ((batch.scratch.get("batch-size-counter") as number | undefined) ?? 0) + 1);
  },
  afterCommit(batch) {
    batchSizes.push(batch.scratch.get("batch-size-counter") as number);
  },
};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-export-records-"));
  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, LOG_LEVEL: "error" }));
  store = createEventStore(ports.clickhouse);
  pipeline = await startPipeline(ports, { plugins: [counter], maxBatch: MAX_BATCH, maxWaitMs: 2, logger: createLogger("error") });
});

afterAll(async () => {
  await pipeline?.stop();
  await ports?.close();
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

async function settle(): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await pipeline.lag()) > 0) {
    if (Date.now() > deadline) throw new Error(`pipeline still lags by ${await pipeline.lag()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function createUser(email: string): Promise<number> {
  const rows = await ports.sql.query<{ id: number | string }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ($1, $2, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u", ["T", email]);
  return Number(rows[0]!.id);
}

async function storedSpans(userId: number, traceId: string): Promise<number> {
  const events = await store.listEvents(userId, runIdFor(userId, traceId), { limit: 1000 });
  return events.filter((e) => e.event_type === "step" || e.event_type === "tool_call").length;
}

describe("OTLP export records in the pipeline", () => {
  it("expands an export into its runs, maxBatch events at a time, and stores a record that comes again once", async () => {
    const user = await createUser("records@example.com");
    const traces = Array.from({ length: 12 }, () => agentTrace(Date.now()));
    const spans: SpanSpec[] = traces.flat();
    const record = encodeExportRecord(exportProtobuf(spans), "protobuf", { projectId: user, userId: user }, Date.now());
    expect(record.keys).toEqual([exportRecordKey(user)]);
    batchSizes.length = 0;
    await ports.log.append(record);
    await settle();
    for (const t of traces) {
      expect(await storedSpans(user, t[0]!.traceId)).toBe(t.length);
      expect((await store.getRun(user, t[0]!.traceId))?.status).toBe("success");
    }
    // 12 traces of 8 spans: 96 span events, 12 run_start and 12 run_end, processed in parts of at most 50.
    expect(batchSizes.reduce((a, b) => a + b, 0)).toBe(120);
    expect(Math.max(...batchSizes)).toBeLessThanOrEqual(MAX_BATCH);

    await ports.log.append(encodeExportRecord(exportProtobuf(spans), "protobuf", { projectId: user, userId: user }, Date.now() + 5000));
    await settle();
    for (const t of traces) expect(await storedSpans(user, t[0]!.traceId)).toBe(t.length);
  });

  it("a record whose body is not an export is dead-lettered; the records beside it are stored", async () => {
    const user = await createUser("bad-record@example.com");
    const [good] = [agentTrace(Date.now())];
    const bad = encodeExportRecord(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), "protobuf", { projectId: user, userId: user }, Date.now());
    const json = encodeExportRecord(Buffer.from(exportJson(good!)), "json", { projectId: user, userId: user }, Date.now());
    const both = encodeBatch([bad.data.subarray(1, bad.data.length - 1), json.data.subarray(1, json.data.length - 1)]);
    await ports.log.append({ ...both, keys: [...bad.keys, ...json.keys] });
    await settle();
    expect(await storedSpans(user, good![0]!.traceId)).toBe(good!.length);
    const letters = await listDeadLetters(ports.sql, {});
    const letter = letters.find((l) => l.error.includes("OTLP export record cannot be mapped"));
    expect(letter?.raw).toContain('"otlp_export":1');
  });
  it("an export record dead-lettered by a pipeline that did not know it (a rolling upgrade) is replayed as the record it was", async () => {
    const user = await createUser("replay@example.com");
    const trace = agentTrace(Date.now());
    const record = encodeExportRecord(exportProtobuf(trace), "protobuf", { projectId: user, userId: user }, Date.now());
    await addDeadLetters(ports.sql, [{ raw: recordAt(record, 0), error: "the log record is JSON but not a Runwatch event" }]);
    const result = await replayDeadLetters(ports.sql, ports.log, {});
    expect(result.skipped).toEqual([]);
    expect(result.replayed).toBeGreaterThanOrEqual(1);
    await settle();
    expect(await storedSpans(user, trace[0]!.traceId)).toBe(trace.length);
  });
});
