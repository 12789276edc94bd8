import { describe, expect, it } from "vitest";
import { decodeBatch, recordAt } from "../core/events/wire.js";
import { exportJson, exportProtobuf, hexId, type SpanSpec } from "../test/e2e/otlp-fixtures.js";
import { eventsOfSpans } from "./export-events.js";
import { encodeExportRecord, isExportRecord } from "../core/events/export-record.js";
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
      const encoded = encodeExportRecord(body, format, 42, t + 1000);
      expect(encoded.ends).toHaveLength(1);
      expect(encoded.keys).toEqual(["otlp:42"]);
      const record: unknown = JSON.parse(Buffer.from(recordAt(encoded, 0)).toString("utf8"));
      // Framed like any batch: the whole buffer decodes with one JSON.parse, as the pipeline reads it.
      expect(decodeBatch(encoded, () => { throw new Error("undecodable"); })).toEqual([record]);
      expect(isExportRecord(record)).toBe(true);
      if (!isExportRecord(record)) return;
      const expanded = expandExportRecord(record);
      expect(expanded.refused).toEqual([]);
      expect(expanded.events).toEqual(eventsOfSpans(decodeExportBody(body, format), 42, t + 1000).events);
      expect(expanded.events.map((e) => e.event_type).sort()).toEqual(["run_end", "run_start", "step", "step"]);
      expect(expanded.events.every((e) => e.user_id === 42 && e.received_at === new Date(t + 1000).toISOString())).toBe(true);
      expect(expanded.events.find((e) => e.payload.kind === "llm")!.payload.input_preview).toBe("héllo 😀 \ufffd");
      // The same record expands to the same events: a record handed again is a duplicate, event for event.
      expect(expandExportRecord(record).events).toEqual(expanded.events);
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
