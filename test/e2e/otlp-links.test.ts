/**
 * Span links (docs/OTEL.md, Span links) from OpenTelemetry's JS SDK over OTLP/HTTP protobuf, and as OTLP/JSON and
 * protobuf fixtures: stored with the span and answered by its read, each with `run` when the linked trace is a run of
 * the same project; a link to another project's run or to an unknown trace shows its ids only.
 */
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportJson, exportProtobuf, hexId } from "./otlp-fixtures.js";
import { bearer, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

async function span(traceId: string, spanId: string, key = acct.key): Promise<Record<string, any>> {
  const res = await fetch(`${srv.url}/api/runs/${traceId}/spans/${spanId}`, bearer(key));
  expect(res.status).toBe(200);
  return (await res.json()) as Record<string, any>;
}

describe("span links", () => {
  it("the JS SDK's links: to a run of the project (with its sdk_run_id), to another project's run and to an unknown trace (ids only)", async () => {
    const other = await srv.account();
    const theirs = { traceId: hexId(16), spanId: hexId(8) };
    const post = (key: string, body: string) => fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body });
    expect((await post(other.key, exportJson([{ ...theirs, name: "their batch" }]))).status).toBe(200);
    await waitForRun(srv.url, other.key, theirs.traceId, (b) => b.run.status === "success");

    const p = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url: `${srv.url}/v1/traces`, headers: { Authorization: `Bearer ${acct.key}` } }))] });
    const tracer = p.getTracer("links-test");
    const planner = tracer.startSpan("invoke_agent planner", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" } });
    planner.end();
    const unknown = { traceId: hexId(16), spanId: hexId(8), traceFlags: 1 };
    const worker = tracer.startSpan("invoke_agent worker", {
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "worker" },
      links: [
        { context: planner.spanContext(), attributes: { "link.kind": "handoff" } },
        { context: { ...theirs, traceFlags: 1 } },
        { context: unknown },
      ],
    });
    worker.end();
    await p.shutdown();
    const workerTrace = worker.spanContext().traceId;
    await waitForRun(srv.url, acct.key, workerTrace, (b) => b.run.status === "success");
    await waitForRun(srv.url, acct.key, planner.spanContext().traceId, (b) => b.run.status === "success");
    const read = await span(workerTrace, worker.spanContext().spanId);
    expect(read.links).toEqual([
      { trace_id: planner.spanContext().traceId, span_id: planner.spanContext().spanId, attributes: { "link.kind": "handoff" }, run: planner.spanContext().traceId, agent_name: "planner" },
      { trace_id: theirs.traceId, span_id: theirs.spanId, attributes: {}, run: null, agent_name: null },
      { trace_id: unknown.traceId, span_id: unknown.spanId, attributes: {}, run: null, agent_name: null },
    ]);
    expect(read.metadata.links).toBeUndefined();
  });

  it("OTLP/JSON and protobuf links are stored alike; malformed link ids are left out, not the span", async () => {
    for (const format of ["json", "protobuf"] as const) {
      const traceId = hexId(16);
      const spanId = hexId(8);
      const target = { traceId: hexId(16), spanId: hexId(8) };
      const specs = [{ traceId, spanId, name: "batch", links: [target, { traceId: "zz", spanId: "01" }] }];
      const res = await fetch(`${srv.url}/v1/traces`, {
        method: "POST", headers: { authorization: `Bearer ${acct.key}`, "content-type": format === "json" ? "application/json" : "application/x-protobuf" },
        body: format === "json" ? exportJson(specs) : Buffer.from(exportProtobuf(specs.slice(0, 1).map((s) => ({ ...s, links: [target] })))),
      });
      expect(res.status, format).toBe(200);
      await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success");
      expect((await span(traceId, spanId)).links, format).toEqual([{ trace_id: target.traceId, span_id: target.spanId, attributes: {}, run: null, agent_name: null }]);
    }
  });
});
