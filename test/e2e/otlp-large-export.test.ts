/**
 * An OTLP export larger than an export record may be (otlp/export-record.ts MAX_EXPORT_RECORD_BODY_BYTES) but within
 * RUNWATCH_OTLP_MAX_BODY_BYTES (16 MiB by default): the receiver maps it itself and logs its events; it is answered
 * and stored exactly like an export logged whole. A server with the default limits (otlp-protocol.test.ts lowers them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_EXPORT_RECORD_BODY_BYTES } from "../../otlp/export-record.js";
import { decodeProtobufResponse } from "../../otlp/otlp-protobuf.js";
import { bearer, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportProtobuf, hexId, type SpanSpec } from "./otlp-fixtures.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

describe("an export too large to log whole", () => {
  it("is mapped by the receiver and stored like any other: values out of range left out, malformed spans refused", async () => {
    const traceId = hexId(16);
    const rootId = hexId(8);
    const t = Date.now() - 5000;
    const root: SpanSpec = { traceId, spanId: rootId, name: "invoke_agent bot", startMs: t, endMs: t + 4000, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot" } };
    const big = "m".repeat(12_000);
    const chats: SpanSpec[] = Array.from({ length: 400 }, (_, i) => ({
      traceId, spanId: hexId(8), parentSpanId: rootId, name: `chat ${i}`, startMs: t + i, endMs: t + i + 100,
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": big, "gen_ai.usage.input_tokens": -1, "gen_ai.usage.output_tokens": 2 },
    }));
    const body = exportProtobuf([...chats, root, { ...root, spanId: "", name: "no span id" }]);
    expect(body.byteLength).toBeGreaterThan(MAX_EXPORT_RECORD_BODY_BYTES);

    const res = await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${acct.key}` }, body: body as BodyInit });
    expect(res.status).toBe(200);
    const partial = decodeProtobufResponse(new Uint8Array(await res.arrayBuffer())).partialSuccess;
    expect(partial?.rejectedSpans).toBe(1);
    expect(partial?.errorMessage).toContain("spanId must be 8 bytes");

    await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success", 60_000);
    const spansRes = await fetch(`${srv.url}/api/runs/${traceId}/spans`, bearer(acct.key));
    const spans = ((await spansRes.json()) as { spans: { name: string; prompt_tokens: number | null; completion_tokens: number | null }[] }).spans;
    expect(spans).toHaveLength(401);
    const stored = spans.filter((s) => s.name.startsWith("chat "));
    expect(stored.every((s) => s.prompt_tokens === null && s.completion_tokens === 2)).toBe(true);
  });
});
