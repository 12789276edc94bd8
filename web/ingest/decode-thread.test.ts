/**
 * Batch bodies decoded on ingest threads give exactly what decoding on the request's thread gives (the HTTP
 * behaviour is tested end to end in web/ingest.test.ts and test/e2e), and a closed decoder answers Unavailable.
 */
import { afterAll, describe, expect, it } from "vitest";
import { decodeBatch } from "../../core/events/wire.js";
import { createLogger } from "../../core/logger.js";
import { exportProtobuf, hexId } from "../../test/e2e/otlp-fixtures.js";
import { inThreadDecoder, threadDecoder } from "./decode-thread.js";

const threads = threadDecoder({ maxBatchEvents: 5, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: "pipeline" as const, threads: 2, logger: createLogger("error") });
const local = inThreadDecoder({ maxBatchEvents: 5, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: "pipeline" });
afterAll(() => threads.close());

const body = (v: unknown) => new TextEncoder().encode(typeof v === "string" ? v : JSON.stringify(v));
const ev = (i: number, extra: Record<string, unknown> = {}) => ({
  event_type: "step",
  sdk_run_id: `run-${i % 2}`,
  event_id: `0190b6a0-0000-7000-8000-${String(i).padStart(12, "0")}`,
  occurred_at: "2026-11-23T10:00:00.000Z",
  payload: { node_name: "plan", phase: "start", note: "é✓😀" },
  ...extra,
});

const cases: [string, Uint8Array][] = [
  ["valid events", body({ events: [ev(1), ev(2), ev(3)] })],
  ["valid and invalid events", body({ events: [ev(1), ev(2, { payload: { phase: "start" } }), ev(3, { event_type: "nope" })] })],
  ["an empty body", body("")],
  ["malformed JSON", body('{"events": [')],
  ["an array body", body([ev(1)])],
  ["no events", body({ events: [] })],
  ["too many events", body({ events: [1, 2, 3, 4, 5, 6].map((i) => ev(i)) })],
];

describe("ingest decode threads", () => {
  it.each(cases)("decode %s as the request thread does", async (_, bytes) => {
    const at = Date.parse("2026-11-23T10:00:01.000Z");
    const [remote, here] = await Promise.all([threads.decode(bytes.slice(), { projectId: 42, userId: 42 }, at), local.decode(bytes.slice(), { projectId: 42, userId: 42 }, at)]);
    if (remote.ok && here.ok) {
      expect(JSON.parse(remote.response)).toEqual(JSON.parse(here.response));
      expect(decodeBatch(remote.events, () => {})).toEqual(decodeBatch(here.events, () => {}));
      expect(remote.events.keys).toEqual(here.events.keys);
    } else {
      expect(remote).toEqual(here);
      expect(remote.ok).toBe(false);
    }
  });

  it("spreads concurrent bodies over its threads and keeps each result with its request", async () => {
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => threads.decode(body({ events: [ev(i)] }), { projectId: i + 1, userId: i + 1 }, Date.now())));
    results.forEach((r, i) => {
      expect(r.ok).toBe(true);
      if (r.ok) expect(decodeBatch(r.events, () => {})[0]).toMatchObject({ user_id: i + 1, sdk_run_id: `run-${i % 2}` });
    });
  });

  it("starts threads with the first body, a second only while the first is busy, and retires them when idle", async () => {
    const d = threadDecoder({ maxBatchEvents: 5, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: "pipeline" as const, threads: 2, logger: createLogger("error"), idleMs: 300 });
    try {
      expect(d.running()).toBe(0);
      expect((await d.decode(body({ events: [ev(1)] }), { projectId: 1, userId: 1 }, Date.now())).ok).toBe(true);
      expect(d.running()).toBe(1);
      await d.decode(body({ events: [ev(2)] }), { projectId: 1, userId: 1 }, Date.now()); // one at a time: the running thread takes it
      expect(d.running()).toBe(1);
      const burst = Array.from({ length: 20 }, (_, i) => d.decode(body({ events: [ev(i)] }), { projectId: 1, userId: 1 }, Date.now()));
      expect(d.running()).toBe(2);
      expect((await Promise.all(burst)).every((r) => r.ok)).toBe(true);
      await expect.poll(() => d.running(), { timeout: 5_000, interval: 50 }).toBe(0);
      expect((await d.decode(body({ events: [ev(3)] }), { projectId: 1, userId: 1 }, Date.now())).ok).toBe(true);
      expect(d.running()).toBe(1);
    } finally {
      await d.close();
    }
  }, 20_000); // two thread start-ups and an idle retirement: several seconds on a loaded machine

  it("RUNWATCH_OTLP_MAPPING: pipeline logs an export whole (one export record), receiver logs its events", async () => {
    const spans = [{ traceId: hexId(16), spanId: hexId(8), name: "root", startMs: Date.now() - 1000, endMs: Date.now(), attributes: { "gen_ai.operation.name": "invoke_agent" } }];
    for (const mapping of ["receiver", "pipeline"] as const) {
      const d = threadDecoder({ maxBatchEvents: 5, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: mapping, threads: 1, logger: createLogger("error") });
      try {
        const r = await d.decodeOtlp(exportProtobuf(spans), "protobuf", false, { projectId: 7, userId: 7 }, Date.now());
        if (!r.ok) throw new Error(r.message);
        if (mapping === "pipeline") {
          expect(r.records).toBe(1);
          expect(r.events.keys).toEqual(["otlp:7"]);
        } else {
          // Its events: run_start, the root's end, run_end, each keyed by user and run.
          expect(r.records).toBe(3);
          expect(decodeBatch(r.events, () => {}).map((e) => e.event_type).sort()).toEqual(["run_end", "run_start", "step"]);
        }
      } finally {
        await d.close();
      }
    }
  });

  it("answers Unavailable once closed", async () => {
    const d = threadDecoder({ maxBatchEvents: 5, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: "pipeline" as const, threads: 1, logger: createLogger("error") });
    await d.close();
    await expect(d.decode(body({ events: [ev(1)] }), { projectId: 1, userId: 1 }, Date.now())).rejects.toMatchObject({ _tag: "Unavailable" });
  });
});
