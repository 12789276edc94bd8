import { describe, expect, it } from "vitest";
import { checkBuiltEvent, type IngestEvent } from "../core/events/schema.js";
import { Either } from "effect";
import type { LogLine } from "../stores/otel-logs.js";
import { contentOfLogs } from "./log-content.js";
import { mapLogs, MAX_LOG_TEXT } from "./logs-mapping.js";
import { splitLogsBody } from "./logs-split.js";
import { mapExport } from "./mapping.js";
import { decodeJsonLogs, decodeProtobufLogs, encodeProtobufLogs } from "./otlp-logs.js";
import type { OtlpSpan } from "./trace-model.js";

const T = "0af7651916cd43dd8448eb211c80319c";
const S = "b7ad6b7169203331";
const record = { project_id: 7, user_id: 3, received_at_ms: Date.UTC(2026, 10, 24, 9, 0, 0) };
const text = (v: string) => ({ stringValue: v });
const exportOf = (records: Record<string, unknown>[]) => ({ resourceLogs: [{ resource: { attributes: [{ key: "service.name", value: text("svc") }] }, scopeLogs: [{ scope: { name: "sc" }, logRecords: records }] }] });
const json = (records: Record<string, unknown>[]) => Buffer.from(JSON.stringify(exportOf(records)));

describe("log records → rows", () => {
  it("JSON and protobuf decode alike: ids, times (observed when unset), severity, event name (or event.name), body, attributes", () => {
    const ns = String(BigInt(record.received_at_ms) * 1_000_000n);
    const j = decodeJsonLogs(json([
      { traceId: T, spanId: S, timeUnixNano: ns, severityNumber: "SEVERITY_NUMBER_WARN2", severityText: "WARN", eventName: "gen_ai.choice", body: { kvlistValue: { values: [{ key: "message", value: text("hi") }] } } },
      { observedTimeUnixNano: ns, attributes: [{ key: "event.name", value: text("legacy.event") }], body: text("line") },
    ]));
    const p = decodeProtobufLogs(encodeProtobufLogs({ resourceLogs: [{ resource: { attributes: [{ key: "service.name", value: text("svc") }] }, scopeLogs: [{ scope: { name: "sc" }, logRecords: [
      { traceId: Buffer.from(T, "hex"), spanId: Buffer.from(S, "hex"), timeUnixNano: ns, severityNumber: 14, severityText: "WARN", eventName: "gen_ai.choice", body: { kvlistValue: { values: [{ key: "message", value: text("hi") }] } } },
      { observedTimeUnixNano: ns, attributes: [{ key: "event.name", value: text("legacy.event") }], body: text("line") },
    ] }] }] }));
    expect(p).toEqual(j);
    expect(j[0]).toMatchObject({ traceId: T, spanId: S, timeMs: record.received_at_ms, severityNumber: 14, eventName: "gen_ai.choice", body: { message: "hi" }, scope: "sc" });
    expect(j[1]).toMatchObject({ traceId: "", spanId: "", eventName: "legacy.event", body: "line" });
  });

  it("rows: malformed ids skipped, texts cut and repaired, the same record the same id, an evaluation a score of its span", () => {
    const logs = decodeJsonLogs(json([
      { traceId: "zz", body: text("bad") },
      { traceId: T, spanId: S, body: text("x".repeat(MAX_LOG_TEXT * 2)), attributes: [{ key: "big", value: text("y".repeat(MAX_LOG_TEXT)) }, { key: "small", value: text("ok") }] },
      { traceId: T, spanId: S, eventName: "gen_ai.evaluation.result", attributes: [{ key: "gen_ai.evaluation.name", value: text("tone") }, { key: "gen_ai.evaluation.score.label", value: text("polite") }] },
      { body: text("nul \u0000 and \ud800 lone") },
    ]));
    const a = mapLogs(logs, record);
    expect(a.rows).toHaveLength(3);
    expect(a.rows[0]!.body).toHaveLength(MAX_LOG_TEXT);
    expect(JSON.parse(a.rows[0]!.attributes)).toEqual({ "runwatch.attributes_cut": true });
    expect(a.rows[2]!.body).toBe("nul \uFFFD and \uFFFD lone");
    expect(a.rows[2]).toMatchObject({ trace_id: "", span_id: "", service_name: "svc", project_id: 7, user_id: 3 });
    expect(a.scores).toEqual([expect.objectContaining({ name: "tone", value_type: "string", value_string: "polite", span_id: S, sdk_run_id: T, source: "otel", project_id: 7 })]);
    // A record read twice (a replayed batch) writes the same rows.
    expect(mapLogs(logs, record)).toEqual(a);
    expect(new Set(a.rows.map((r) => r.log_id)).size).toBe(3);
  });

  it("an export too large for one record is split into parts that each fit, holding every record; one record alone too large is refused", () => {
    const records = Array.from({ length: 40 }, (_, i) => ({ traceId: T, body: text(`r${i} `.padEnd(1000, "z")) }));
    for (const format of ["json", "protobuf"] as const) {
      const body = format === "json" ? json(records) : encodeProtobufLogs(exportOf(records.map((r) => ({ ...r, traceId: Buffer.from(T, "hex") }))));
      const split = splitLogsBody(body, format, 8_000);
      expect(split.refused).toEqual([]);
      expect(split.bodies.length).toBeGreaterThan(4);
      for (const b of split.bodies) expect(b.byteLength).toBeLessThanOrEqual(8_000);
      const back = split.bodies.flatMap((b) => (format === "json" ? decodeJsonLogs(b) : decodeProtobufLogs(b)));
      expect(back.map((l) => l.body)).toEqual(records.map((r) => r.body.stringValue));
      expect(back.every((l) => l.resource.get("service.name") === "svc" && l.scope === "sc")).toBe(true);
    }
    expect(splitLogsBody(json([{ body: text("x".repeat(10_000)) }, { body: text("small") }]), "json", 8_000).refused).toEqual(["log record 0: larger than 8000 bytes on its own"]);
  });
});

const line = (o: Partial<LogLine>): LogLine => ({ log_id: "", time: "", trace_id: T, span_id: S, severity_number: 0, severity_text: "", event_name: null, body: null, attributes: {}, service_name: "", scope: "", ...o });

describe("a span's content from its log records", () => {
  it("operation details first (messages as JSON text parsed, with system instructions); else message events and choices", () => {
    expect(contentOfLogs([line({ event_name: "gen_ai.client.inference.operation.details", attributes: {
      "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]',
      "gen_ai.system_instructions": '[{"type":"text","content":"be brief"}]',
      "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"reasoning","content":"…"},{"type":"text","content":"hello"}]}]',
    } })])).toEqual({
      input: { system_instructions: [{ type: "text", content: "be brief" }], messages: [{ role: "user", parts: [{ type: "text", content: "hi" }] }] },
      output: [{ role: "assistant", parts: [{ type: "reasoning", content: "…" }, { type: "text", content: "hello" }] }],
    });
    expect(contentOfLogs([
      line({ event_name: "gen_ai.system.message", body: { content: "be brief" } }),
      line({ event_name: "gen_ai.user.message", attributes: { content: "hi" } }),
      line({ event_name: "gen_ai.choice", body: { index: 0, message: { role: "assistant", content: "hello" } } }),
      line({ body: "plain line" }),
    ])).toEqual({ input: [{ role: "system", content: "be brief" }, { role: "user", content: "hi" }], output: { role: "assistant", content: "hello" } });
    expect(contentOfLogs([line({ body: "plain line" })])).toEqual({});
  });
});

describe("span links", () => {
  it("are kept in the span's payload, bounded, without malformed ids; the event passes the schema", () => {
    const links = Array.from({ length: 40 }, (_, i) => ({ traceId: T, spanId: S, attributes: new Map<string, never>(i === 0 ? [["k", "v" as never], ["n", 1 as never]] : []) }));
    const span: OtlpSpan = {
      traceId: "1".repeat(32), spanId: "2".repeat(16), parentSpanId: "", name: "s", startMs: record.received_at_ms, endMs: record.received_at_ms + 1,
      attributes: new Map(), statusCode: 0, statusMessage: "", events: [], resource: new Map(), scope: "",
      links: [{ traceId: null, spanId: S, attributes: new Map() }, ...links],
    };
    const end = mapExport([span]).traces[0]!.spans[0]!.events[0]!;
    const stored = (end.payload as { links: unknown[] }).links;
    expect(stored).toHaveLength(32);
    expect(stored[0]).toEqual({ trace_id: T, span_id: S, attributes: { k: "v", n: 1 } });
    expect(stored[1]).toEqual({ trace_id: T, span_id: S });
    expect(Either.isRight(checkBuiltEvent(end as unknown as IngestEvent))).toBe(true);
  });
});
