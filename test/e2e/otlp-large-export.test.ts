/**
 * Large OTLP exports, on a server with the default limits (otlp-protocol.test.ts lowers them) that logs exports
 * whole (RUNWATCH_OTLP_MAPPING=pipeline): one just under the
 * export-record limit (otlp/export-record.ts MAX_EXPORT_RECORD_BODY_BYTES) is logged whole, a 5.3 MiB record (in
 * scale mode, one Kafka message); one over it, within RUNWATCH_OTLP_MAX_BODY_BYTES (16 MiB by default), is mapped
 * by the receiver, which logs its events. Both are answered and stored alike.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_EXPORT_RECORD_BODY_BYTES } from "../../otlp/export-record.js";
import { decodeProtobufResponse } from "../../otlp/otlp-protobuf.js";
import { bearer, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportProtobuf, hexId, type SpanSpec } from "./otlp-fixtures.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_OTLP_MAPPING: "pipeline" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

/** A trace of a root and `children` LLM calls, each with `contentChars` of input messages and a negative token count. */
function bigTrace(children: number, contentChars: number): { traceId: string; spans: SpanSpec[] } {
  const traceId = hexId(16);
  const rootId = hexId(8);
  const t = Date.now() - 5000;
  const root: SpanSpec = { traceId, spanId: rootId, name: "invoke_agent bot", startMs: t, endMs: t + 4000, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot" } };
  const big = "m".repeat(contentChars);
  const chats: SpanSpec[] = Array.from({ length: children }, (_, i) => ({
    traceId, spanId: hexId(8), parentSpanId: rootId, name: `chat ${i}`, startMs: t + i, endMs: t + i + 100,
    attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": big, "gen_ai.usage.input_tokens": -1, "gen_ai.usage.output_tokens": 2 },
  }));
  return { traceId, spans: [...chats, root] };
}

async function storedChats(traceId: string): Promise<{ name: string; prompt_tokens: number | null; completion_tokens: number | null }[]> {
  await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success", 60_000);
  const spansRes = await fetch(`${srv.url}/api/runs/${traceId}/spans`, bearer(acct.key));
  return ((await spansRes.json()) as { spans: { name: string; prompt_tokens: number | null; completion_tokens: number | null }[] }).spans;
}

describe("large exports", () => {
  it("an export just under the record limit is logged whole and stored", async () => {
    const { traceId, spans } = bigTrace(320, 12_000);
    const body = exportProtobuf(spans);
    expect(body.byteLength).toBeGreaterThan(MAX_EXPORT_RECORD_BODY_BYTES * 0.9);
    expect(body.byteLength).toBeLessThanOrEqual(MAX_EXPORT_RECORD_BODY_BYTES);
    const res = await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${acct.key}` }, body: body as BodyInit });
    expect(res.status).toBe(200);
    const stored = await storedChats(traceId);
    expect(stored).toHaveLength(321);
    expect(stored.filter((s) => s.name.startsWith("chat ")).every((s) => s.prompt_tokens === null && s.completion_tokens === 2)).toBe(true);
  });

  it("one over the record limit is mapped by the receiver and stored like any other: values out of range left out, malformed spans refused", async () => {
    const { traceId, spans } = bigTrace(400, 12_000);
    const root = spans[spans.length - 1]!;
    const body = exportProtobuf([...spans, { ...root, spanId: "", name: "no span id" }]);
    expect(body.byteLength).toBeGreaterThan(MAX_EXPORT_RECORD_BODY_BYTES);

    const res = await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${acct.key}` }, body: body as BodyInit });
    expect(res.status).toBe(200);
    const partial = decodeProtobufResponse(new Uint8Array(await res.arrayBuffer())).partialSuccess;
    expect(partial?.rejectedSpans).toBe(1);
    expect(partial?.errorMessage).toContain("spanId must be 8 bytes");

    const stored = await storedChats(traceId);
    expect(stored).toHaveLength(401);
    expect(stored.filter((s) => s.name.startsWith("chat ")).every((s) => s.prompt_tokens === null && s.completion_tokens === 2)).toBe(true);
  });
});
