/**
 * Which bodies decode on the request's thread and which go to the decode threads (real threads: running() counts
 * them), with the same results either way.
 */
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeBatch } from "../../core/events/wire.js";
import { createLogger } from "../../core/logger.js";
import { exportProtobuf, type SpanSpec } from "../../test/e2e/otlp-fixtures.js";
import { threadDecoder } from "./decode-thread.js";
import { smallBodiesInline } from "./small-bodies-inline.js";

const limits = { maxBatchEvents: 1000, otlpMaxBodyBytes: 1 << 20, otlpMaxSpans: 1000, otlpMapping: "pipeline" as const };
const body = (n: number) =>
  new TextEncoder().encode(JSON.stringify({
    events: Array.from({ length: n }, (_, i) => ({ event_type: "step", sdk_run_id: "run-1", payload: { node_name: "plan", phase: "end", output_preview: "x".repeat(150), i } })),
  }));
const spans: SpanSpec[] = [{ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", name: "invoke_agent triage", startMs: Date.now() - 100, endMs: Date.now(), attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage" } }];

/** A decoder on a clock the test moves: each reading advances it by `cost` ms, so an inline decode spends `cost`. */
function withClock(maxBytes: number, budgetMsPerSecond: number, cost = 0) {
  let t = 0;
  const threads = threadDecoder({ ...limits, threads: 1, logger: createLogger("error") });
  const now = () => (t += cost);
  const d = smallBodiesInline(threads, limits, { maxBytes, budgetMsPerSecond }, now);
  return { d, threads, advance: (ms: number) => (t += ms) };
}

describe("small bodies decode on the request's thread", () => {
  it("decodes a small batch here and a large one on a decode thread, with the same results", async () => {
    const { d, threads } = withClock(16 * 1024, 200);
    try {
      const small = await d.decode(body(20), { projectId: 7, userId: 7 }, Date.now());
      expect(d.decodedInline()).toBe(1);
      expect(threads.running()).toBe(0);
      const large = await d.decode(body(200), { projectId: 7, userId: 7 }, Date.now());
      expect(d.decodedInline()).toBe(1);
      expect(threads.running()).toBe(1);
      expect(small.ok && large.ok).toBe(true);
      if (small.ok && large.ok) {
        expect(decodeBatch(small.events, () => {})).toHaveLength(20);
        expect(decodeBatch(large.events, () => {})).toHaveLength(200);
        expect(JSON.parse(small.response)).toMatchObject({ accepted: 20, rejected: 0 });
      }
      // A refused body gets the same answer on either side.
      const bad = new TextEncoder().encode('{"events": [');
      const here = await d.decode(bad, { projectId: 7, userId: 7 }, Date.now());
      const there = await threads.decode(bad.slice(), { projectId: 7, userId: 7 }, Date.now());
      expect(here).toEqual(there);
      expect(here).toMatchObject({ ok: false, status: 400 });
    } finally {
      await d.close();
    }
  });

  it("sends bodies to the threads once this thread has spent its decoding budget for the second", async () => {
    const { d, threads, advance } = withClock(16 * 1024, 10, 4);
    try {
      for (let i = 0; i < 3; i++) await d.decode(body(5), { projectId: 1, userId: 1 }, Date.now()); // 4 + 4 + 4 ms: the third starts at 8 < 10
      expect(d.decodedInline()).toBe(3);
      expect(threads.running()).toBe(0);
      await d.decode(body(5), { projectId: 1, userId: 1 }, Date.now()); // 12 ms spent: over budget
      expect(d.decodedInline()).toBe(3);
      expect(threads.running()).toBe(1);
      advance(1000); // a new second
      await d.decode(body(5), { projectId: 1, userId: 1 }, Date.now());
      expect(d.decodedInline()).toBe(4);
    } finally {
      await d.close();
    }
  });

  it("decodes an OTLP export here unless it is gzipped or large, and never inline when the limit is 0", async () => {
    const { d, threads } = withClock(16 * 1024, 200);
    const off = withClock(0, 200);
    try {
      const bytes = exportProtobuf(spans);
      const plain = await d.decodeOtlp(bytes, "protobuf", false, { projectId: 1, userId: 1 }, Date.now());
      expect(d.decodedInline()).toBe(1);
      const zipped = await d.decodeOtlp(gzipSync(bytes), "protobuf", true, { projectId: 1, userId: 1 }, Date.now());
      expect(d.decodedInline()).toBe(1);
      expect(threads.running()).toBe(1);
      expect(plain.ok && zipped.ok && plain.records === zipped.records && plain.records > 0).toBe(true);
      await off.d.decode(body(1), { projectId: 1, userId: 1 }, Date.now());
      expect(off.d.decodedInline()).toBe(0);
      expect(off.threads.running()).toBe(1);
    } finally {
      await d.close();
      await off.d.close();
    }
  });
});
