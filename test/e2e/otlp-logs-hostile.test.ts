/**
 * Log and metric exports a receiver must answer clearly and survive (docs/OTEL.md, Logs and Metrics): a body over the
 * limit, a million records in one export, malformed ids (partial_success naming them, the rest stored), records of
 * spans that never come, a structured body nested deeper than any value is kept and a huge one (cut), an export too
 * large for one log record (split), and metrics from the JS SDK over HTTP and gRPC (answered, counted, not kept).
 */
import { OTLPMetricExporter as GrpcMetricExporter } from "@opentelemetry/exporter-metrics-otlp-grpc";
import { OTLPMetricExporter as ProtoMetricExporter } from "@opentelemetry/exporter-metrics-otlp-proto";
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeSignalResponse, encodeProtobufLogs } from "../../otlp/otlp-logs.js";
import { decodeRpcStatus } from "../../otlp/otlp-protobuf.js";
import { bearer, json, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let acct: TestAccount;
const MAX_BODY = 8 * 1024 * 1024;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000", RUNWATCH_OTLP_MAX_BODY_BYTES: String(MAX_BODY) } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

const hex = (bytes: number) => Array.from({ length: bytes * 2 }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");
const text = (v: string) => ({ stringValue: v });
const jsonExport = (records: Record<string, unknown>[]) => ({ resourceLogs: [{ resource: { attributes: [{ key: "service.name", value: text("hostile") }] }, scopeLogs: [{ scope: { name: "t" }, logRecords: records }] }] });

async function post(path: string, body: unknown, type = "application/json"): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${srv.url}${path}`, {
    method: "POST", headers: { authorization: `Bearer ${acct.key}`, "content-type": type },
    body: type === "application/json" ? JSON.stringify(body) : Buffer.from(body as Uint8Array),
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (type === "application/json") return { status: res.status, body: JSON.parse(Buffer.from(bytes).toString("utf8") || "{}") };
  if (res.status !== 200) return { status: res.status, body: decodeRpcStatus(bytes) };
  return { status: res.status, body: decodeSignalResponse(path === "/v1/logs" ? "logs" : "metrics", bytes) };
}
async function runLogs(traceId: string): Promise<Record<string, any>[]> {
  const res = await fetch(`${srv.url}/api/runs/${traceId}/logs?limit=1000`, bearer(acct.key));
  expect(res.status).toBe(200);
  return ((await res.json()) as { logs: Record<string, any>[] }).logs;
}

describe("hostile OTLP log exports", () => {
  it("NUL bytes, lone surrogates, out-of-range numbers: never a 5xx; what is kept reads back clean; strangers see nothing; valid data flows after", async () => {
    const traceId = hex(16);
    const r = await post("/v1/logs", jsonExport([
      { traceId, body: text("nul a\u0000b"), attributes: [{ key: "k\ud800", value: text("v\udc00") }], severityNumber: 999 },
      { traceId, body: text("lone \ud800 surrogate"), severityNumber: -5, timeUnixNano: "-1" },
      { traceId, body: { intValue: "99999999999999999999" }, timeUnixNano: "99999999999999999999999" },
      { traceId, body: { doubleValue: -1e308 }, observedTimeUnixNano: "1e400" },
    ]));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({}); // no record refused
    const kept = await until("the kept records", () => runLogs(traceId), (l) => l.length === 4);
    // Every text read back, keys included, is free of U+0000 and lone surrogates (JSON.stringify would hide one as "\\ud800").
    const texts = (v: unknown): string[] =>
      typeof v === "string" ? [v] : Array.isArray(v) ? v.flatMap(texts) : v && typeof v === "object" ? Object.entries(v).flatMap(([k, x]) => [k, ...texts(x)]) : [];
    for (const t of texts(kept)) expect(!t.includes("\u0000") && t.isWellFormed(), JSON.stringify(t)).toBe(true);
    expect(kept.some((l) => typeof l.body === "string" && l.body.startsWith("nul a"))).toBe(true);

    // A stranger: no key, a made-up key, another tenant's key — nothing sent, nothing read.
    const noKey = await fetch(`${srv.url}/v1/logs`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(jsonExport([{ traceId, body: text("x") }])) });
    expect(noKey.status).toBe(401);
    expect((await fetch(`${srv.url}/api/logs?trace_id=${traceId}`, bearer("rw_madeup"))).status).toBe(401);
    const other = await srv.account();
    const theirs = (await (await fetch(`${srv.url}/api/logs?trace_id=${traceId}`, bearer(other.key))).json()) as { logs: unknown[] };
    expect(theirs.logs).toEqual([]);
    expect([200, 404]).toContain((await fetch(`${srv.url}/api/runs/${traceId}/logs`, bearer(other.key))).status);

    // Valid data sent afterwards still arrives: a log line and an ingest event that makes a run on the dashboard.
    expect((await post("/v1/logs", jsonExport([{ traceId, body: text("after the hostile export") }]))).status).toBe(200);
    await until("the valid record", () => runLogs(traceId), (l) => l.some((x) => x.body === "after the hostile export"));
    expect((await fetch(`${srv.url}/api/ingest`, json(acct.key, { event_type: "run_start", sdk_run_id: "after-hostile-logs", agent_name: "bot", payload: {} }))).status).toBe(202);
    await waitForRun(srv.url, acct.key, "after-hostile-logs", (b) => b.run.status === "running");
  });

  it("a body over RUNWATCH_OTLP_MAX_BODY_BYTES is a 413 naming the limit", async () => {
    const r = await post("/v1/logs", jsonExport([{ body: text("x".repeat(MAX_BODY)) }]));
    expect(r.status).toBe(413);
    expect(r.body.message).toContain("RUNWATCH_OTLP_MAX_BODY_BYTES");
  });

  it("a million records in one export is a 413 saying how many are taken at once; the next export flows", async () => {
    const million = encodeProtobufLogs({ resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 1_000_000 }, () => ({})) }] }] });
    expect(million.byteLength).toBeLessThan(MAX_BODY);
    const r = await post("/v1/logs", million, "application/x-protobuf");
    expect(r.status).toBe(413);
    expect(r.body.message).toContain("1000000 log records");
    const traceId = hex(16);
    expect((await post("/v1/logs", jsonExport([{ traceId, body: text("after the flood") }]))).status).toBe(200);
    await until("the next export's record", () => runLogs(traceId), (l) => l.length === 1);
  });

  it("malformed ids are refused in partial_success by record; the other records, unknown span ids included, are stored", async () => {
    const traceId = hex(16);
    const r = await post("/v1/logs", jsonExport([
      { traceId: "abc", body: text("bad trace id") },
      { traceId, spanId: "0102", body: text("bad span id") },
      { spanId: hex(8), body: text("a span without a trace") },
      { traceId, spanId: hex(8), body: text("a span that never comes") },
      { traceId, body: text("the run's line") },
    ]));
    expect(r.status).toBe(200);
    expect(r.body.partialSuccess.rejectedLogRecords).toBe("3");
    expect(r.body.partialSuccess.errorMessage).toMatch(/log record 0: traceId.*log record 1: spanId.*log record 2: a spanId needs a traceId/);
    const logs = await until("the stored records", () => runLogs(traceId), (l) => l.length === 2);
    expect(logs.map((l) => l.body).sort()).toEqual(["a span that never comes", "the run's line"]);
    // The project's search, a page at a time (newest first), and its refusals.
    const page = async (q: string) => {
      const res = await fetch(`${srv.url}/api/logs?${q}`, bearer(acct.key));
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const first = await page(`trace_id=${traceId}&limit=1`);
    expect(first.body.logs).toHaveLength(1);
    const second = await page(`trace_id=${traceId}&limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.logs).toHaveLength(1);
    expect(second.body.next_cursor).toBeNull();
    expect(new Set([first.body.logs[0].log_id, second.body.logs[0].log_id]).size).toBe(2);
    expect((await page("q=NEVER%20COMES")).body.logs.map((l: any) => l.body)).toContain("a span that never comes");
    for (const [q, field] of [["limit=0", "limit"], ["cursor=nope", "cursor"], [`q=${"x".repeat(201)}`, "q"]]) {
      const r = await page(q!);
      expect(r.status, q).toBe(422);
      expect(r.body.error.field, q).toBe(field);
    }
  });

  it("deep and huge bodies and attributes are kept cut; an export larger than a log record is split and stored whole", async () => {
    const traceId = hex(16);
    let deep: Record<string, unknown> = text("bottom");
    for (let i = 0; i < 200; i++) deep = { kvlistValue: { values: [{ key: "k", value: deep }] } };
    const big = Array.from({ length: 60 }, (_, i) => ({ traceId, body: text(`record ${i} `.padEnd(100_000, "z")) }));
    const r = await post("/v1/logs", jsonExport([{ traceId, body: deep, attributes: [{ key: "deep", value: deep }] }, ...big]));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({});
    const logs = await until("all 61 records", () => runLogs(traceId), (l) => l.length === 61);
    for (const l of logs) expect(JSON.stringify(l.body).length).toBeLessThanOrEqual(16_384 + 2);
    expect(logs.filter((l) => typeof l.body === "string" && l.body.startsWith("record ")).length).toBe(60);
  });
});

describe("OTLP metrics", () => {
  it("JSON: answered with partial_success counting the data points not kept", async () => {
    const point = { asInt: "3", timeUnixNano: String(Date.now() * 1e6) };
    const r = await post("/v1/metrics", {
      resourceMetrics: [{ scopeMetrics: [{ metrics: [
        { name: "gen_ai.client.token.usage", histogram: { dataPoints: [{ count: "1", sum: 10 }, { count: "2", sum: 5 }] } },
        { name: "requests", sum: { dataPoints: [point] } },
      ] }] }],
    });
    expect(r.status).toBe(200);
    expect(r.body.partialSuccess).toMatchObject({ rejectedDataPoints: "3" });
    expect(r.body.partialSuccess.errorMessage).toContain("does not store OTLP metrics");
    expect((await post("/v1/metrics", { resourceMetrics: "nope" })).status).toBe(400);
  });

  it("the JS SDK's metric exporters over HTTP protobuf and gRPC export without an error", async () => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${acct.key}`);
    const exporters: PushMetricExporter[] = [
      new ProtoMetricExporter({ url: `${srv.url}/v1/metrics`, headers: { Authorization: `Bearer ${acct.key}` } }),
      new GrpcMetricExporter({ url: `http://127.0.0.1:${srv.web.otlpGrpcPort}`, metadata }),
    ];
    for (const exporter of exporters) {
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 600_000 });
      const provider = new MeterProvider({ readers: [reader] });
      const meter = provider.getMeter("runwatch-metrics-test");
      meter.createHistogram("gen_ai.client.token.usage").record(42, { "gen_ai.token.type": "input" });
      meter.createHistogram("gen_ai.client.operation.duration").record(0.5);
      // Exported by hand: the reader's own export swallows a failure.
      const { resourceMetrics } = await reader.collect();
      const result = await new Promise<{ code: number; error?: Error }>((resolve) => exporter.export(resourceMetrics, resolve));
      expect(result.error).toBeUndefined();
      expect(result.code).toBe(0); // ExportResultCode.SUCCESS
      await provider.shutdown();
    }
  });
});
