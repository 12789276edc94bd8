import { describe, expect, it } from "vitest";
import { decodeBatch, recordAt } from "../core/events/wire.js";
import { exportJson, exportProtobuf, hexId, type SpanSpec } from "../test/e2e/otlp-fixtures.js";
import { eventsOfSpans } from "./export-events.js";
import { encodeExportRecord, isExportRecord } from "../core/events/export-record.js";
import { decodeOtlpExport } from "./export-decode.js";
import { decodeExportBody, expandExportRecord } from "./export-record.js";
import { MalformedExport } from "./trace-model.js";

const t = Date.UTC(2026, 10, 25, 9);
const traceId = hexId(16);
const rootId = hexId(8);
const spans: SpanSpec[] = [
  { traceId, spanId: rootId, name: "invoke_agent bot", startMs: t, endMs: t + 900, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot" } },
  { traceId, spanId: hexId(8), parentSpanId: rootId, name: "chat", startMs: t + 1, endMs: t + 500, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": "héllo 😀 \u0000" } },
];

describe("OTLP export records", () => {
  it("one JSON record per export, keyed by user, whose expansion is the events the receiver would have mapped", () => {
    for (const [format, body] of [["protobuf", exportProtobuf(spans)], ["json", Buffer.from(exportJson(spans))]] as const) {
      const encoded = encodeExportRecord(body, format, { projectId: 42, userId: 42 }, t + 1000);
      expect(encoded.ends).toHaveLength(1);
      expect(encoded.keys).toEqual(["otlp:42"]);
      const record: unknown = JSON.parse(Buffer.from(recordAt(encoded, 0)).toString("utf8"));
      // Framed like any batch: the whole buffer decodes with one JSON.parse, as the pipeline reads it.
      expect(decodeBatch(encoded, () => { throw new Error("undecodable"); })).toEqual([record]);
      expect(isExportRecord(record)).toBe(true);
      if (!isExportRecord(record)) return;
      const expanded = expandExportRecord(record);
      expect(expanded.refused).toEqual([]);
      expect(expanded.events).toEqual(eventsOfSpans(decodeExportBody(body, format), { projectId: 42, userId: 42 }, t + 1000).events);
      expect(expanded.events.map((e) => e.event_type).sort()).toEqual(["run_end", "run_start", "step", "step"]);
      expect(expanded.events.every((e) => e.user_id === 42 && e.received_at === new Date(t + 1000).toISOString())).toBe(true);
      expect(expanded.events.find((e) => e.payload.kind === "llm")!.payload.input_preview).toBe("héllo 😀 \ufffd");
      // The same record expands to the same events: a record handed again is a duplicate, event for event.
      expect(expandExportRecord(record).events).toEqual(expanded.events);
    }
  });

  it("a receiver that logs an export whole answers as one that maps it: the same refusals, and 400 for a body broken deep inside", () => {
    const limits = { maxBytes: 1 << 22, maxSpans: 10_000 };
    const malformed: SpanSpec[] = [
      ...spans,
      { traceId, spanId: "abcd", parentSpanId: rootId, name: "short span id", startMs: t + 2, endMs: t + 3 },
      { traceId, spanId: hexId(8), parentSpanId: rootId, name: "year 2500", startMs: Date.UTC(2500, 0, 1), endMs: Date.UTC(2500, 0, 2) },
    ];
    for (const [format, body] of [["protobuf", exportProtobuf(malformed)], ["json", Buffer.from(exportJson(malformed))]] as const) {
      const whole = decodeOtlpExport(body, format, false, { projectId: 42, userId: 42 }, t, limits, true);
      const mapped = decodeOtlpExport(body, format, false, { projectId: 42, userId: 42 }, t, limits, false);
      expect(whole.ok && mapped.ok).toBe(true);
      if (!whole.ok || !mapped.ok) return;
      expect([whole.records, whole.spans, whole.rejectedSpans]).toEqual([1, 4, 2]);
      expect([mapped.spans, mapped.rejectedSpans]).toEqual([4, 2]);
      expect(Buffer.from(whole.response).equals(Buffer.from(mapped.response))).toBe(true);
    }
    // An attribute key's length pointing past its message: decoding the whole body finds it, however the export is logged.
    const broken = Buffer.from(exportProtobuf(spans));
    const key = broken.indexOf("gen_ai.request.model");
    broken[key - 1] = 0x7f;
    for (const logWhole of [true, false]) {
      const answer = decodeOtlpExport(broken, "protobuf", false, { projectId: 42, userId: 42 }, t, limits, logWhole);
      expect(answer.ok ? 200 : answer.status).toBe(400);
    }
  });

  it("near misses are not export records; a body that is not an export throws MalformedExport", () => {
    const ok = { otlp_export: 1, user_id: 1, received_at_ms: t, format: "protobuf", body: "" };
    expect(isExportRecord(ok)).toBe(true);
    for (const bad of [null, 7, { ...ok, otlp_export: 2 }, { ...ok, user_id: "1" }, { ...ok, user_id: 1.5 }, { ...ok, received_at_ms: null }, { ...ok, format: "xml" }, { ...ok, body: 3 }]) {
      expect(isExportRecord(bad)).toBe(false);
    }
    expect(() => expandExportRecord({ ...ok, body: Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]).toString("base64") } as never)).toThrow(MalformedExport);
  });
});
