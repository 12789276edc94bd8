/**
 * The OTLP receivers' answers as opentelemetry-proto's specification.md requires them, over real HTTP and gRPC:
 * partial_success, 400 / INVALID_ARGUMENT, 401 / UNAUTHENTICATED, 413, 415, 429 / RESOURCE_EXHAUSTED with
 * Retry-After / RetryInfo; a resent export stored once; hostile exports (NUL, lone surrogates, a gzip bomb, another
 * tenant's trace id) handled without a 5xx.
 */
import { gzipSync } from "node:zlib";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeProtobufResponse, decodeRpcStatus, encodeRpcStatus } from "../../otlp/otlp-protobuf.js";
import { hashApiKey } from "../../core/ids.js";
import { findActiveKeyByHash } from "../../stores/accounts/api-keys.js";
import { bearer, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, exportProtobuf, hexId, traceExportClient, type SpanSpec } from "./otlp-fixtures.js";

let srv: TestServer;
let acct: TestAccount;
const RATE_LIMIT = 100_000;

beforeAll(async () => {
  // The receiver maps exports here (RUNWATCH_OTLP_MAPPING=receiver); the fuzz and large-export suites log them whole.
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT), RUNWATCH_OTLP_MAX_BODY_BYTES: "200000", RUNWATCH_OTLP_MAX_SPANS: "100", RUNWATCH_OTLP_MAPPING: "receiver" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

/** A new account whose key has one request left this minute (the limiter is the server's own: memory or Redis). */
async function accountWithOneRequestLeft(): Promise<TestAccount> {
  const a = await srv.account();
  const { keyId } = (await findActiveKeyByHash(srv.ports.sql, hashApiKey(a.key)))!;
  await srv.ports.limiter.consume(`ingest:${keyId}`, RATE_LIMIT - 1);
  return a;
}

const post = (server: TestServer, key: string | undefined, body: Uint8Array | string, type: string, extra: Record<string, string> = {}) =>
  fetch(`${server.url}/v1/traces`, {
    method: "POST",
    headers: { "content-type": type, ...(key ? { authorization: `Bearer ${key}` } : {}), ...extra },
    body: body as BodyInit,
  });
const PB = "application/x-protobuf";

const clientFor = (server: TestServer) => traceExportClient(`127.0.0.1:${server.web.otlpGrpcPort}`);
const JSON_TYPE = "application/json";

/** A trace: a root agent span and an LLM call under it. */
function smallTrace(traceId = hexId(16), extra: Partial<SpanSpec> = {}): SpanSpec[] {
  const root = hexId(8);
  const t = Date.now() - 1000; // fixed times: a resent export carries the very same spans
  return [
    { traceId, spanId: hexId(8), parentSpanId: root, name: "chat gpt-4o", startMs: t + 10, endMs: t + 400, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2 }, ...extra },
    { traceId, spanId: root, name: "invoke_agent bot", startMs: t, endMs: t + 500, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot" } },
  ];
}

describe("OTLP/HTTP answers", () => {
  it("200 with an empty ExportTraceServiceResponse in the request's format; a resent export is stored once", async () => {
    const spans = smallTrace();
    const traceId = spans[0]!.traceId;
    const pb = exportProtobuf(spans);
    const first = await post(srv, acct.key, pb, PB);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe(PB);
    expect((await first.arrayBuffer()).byteLength).toBe(0); // no partial_success
    const { run } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success");
    expect(run.event_count).toBe(4); // run_start, two spans, run_end
    // The exporter retries the same export (e.g. its first answer was lost), once as protobuf, once as JSON.
    expect((await post(srv, acct.key, pb, PB)).status).toBe(200);
    const again = await post(srv, acct.key, exportJson(spans), JSON_TYPE);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({});
    const marker = smallTrace();
    await post(srv, acct.key, exportJson(marker), JSON_TYPE);
    await waitForRun(srv.url, acct.key, marker[0]!.traceId, (b) => b.run.status === "success"); // processed after the resends
    const after = await waitForRun(srv.url, acct.key, traceId, () => true);
    expect(after.run).toMatchObject({ event_count: 4, llm_calls: 1, prompt_tokens: 10 });
    expect(after.events).toHaveLength(4);
    // Derived ids keep a run's events in time order: the start first, the run's end last.
    expect(after.events.map((e) => e.event_type)).toEqual(["run_start", "step", "step", "run_end"]);
  });

  it("exports of one trace in any order end the run with its root, even a child dated after the root's end (clock skew)", async () => {
    const [chat, root] = smallTrace();
    // The child's clock runs ahead: it starts and ends after the root's end. Its export is processed first.
    const skewed = { ...chat!, startMs: root!.endMs! + 20, endMs: root!.endMs! + 30 };
    expect((await post(srv, acct.key, exportJson([skewed]), JSON_TYPE)).status).toBe(200);
    await waitForRun(srv.url, acct.key, root!.traceId, (b) => b.run.llm_calls === 1);
    expect((await post(srv, acct.key, exportProtobuf([root!]), PB)).status).toBe(200);
    const { run } = await waitForRun(srv.url, acct.key, root!.traceId, (b) => b.run.event_count === 4);
    expect(run).toMatchObject({ status: "success", agent_name: "bot", started_at: new Date(root!.startMs!).toISOString() });
  });

  it("gzip bodies are taken; a body that is not gzip is 400; one that inflates past the limit is 413", async () => {
    const spans = smallTrace();
    const ok = await post(srv, acct.key, gzipSync(exportProtobuf(spans)), PB, { "content-encoding": "gzip" });
    expect(ok.status).toBe(200);
    await waitForRun(srv.url, acct.key, spans[0]!.traceId, (b) => b.run.status === "success");
    const notGzip = await post(srv, acct.key, exportJson(spans), JSON_TYPE, { "content-encoding": "gzip" });
    expect(notGzip.status).toBe(400);
    expect(await notGzip.json()).toMatchObject({ code: 3, error: { code: "malformed_export" } });
    const bomb = gzipSync(Buffer.alloc(50_000_000, 0x20)); // ~50 KB that inflates to 50 MB
    const boom = await post(srv, acct.key, bomb, JSON_TYPE, { "content-encoding": "gzip" });
    expect(boom.status).toBe(413);
    expect((await boom.json()).message).toContain("decompressed");
    expect((await post(srv, acct.key, exportJson(spans), JSON_TYPE, { "content-encoding": "br" })).status).toBe(415);
  });

  it("partial_success counts the refused spans and names why; the others are stored, a value out of range left out", async () => {
    const traceId = hexId(16);
    const good = smallTrace(traceId);
    const negative = { ...good[0]!, spanId: hexId(8), name: "bad tokens", attributes: { "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": -5, "gen_ai.usage.output_tokens": 3 } };
    const badId = { ...good[0]!, traceId: "abc", spanId: hexId(8), name: "bad trace id" };
    const badTime = { ...good[0]!, spanId: hexId(8), name: "bad time", endMs: 1e15 };
    const res = await post(srv, acct.key, exportJson([...good, negative, badId, badTime]), JSON_TYPE);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { partialSuccess: { rejectedSpans: string; errorMessage: string } };
    expect(body.partialSuccess.rejectedSpans).toBe("2");
    expect(body.partialSuccess.errorMessage).toContain("traceId must be 16 bytes");
    expect(body.partialSuccess.errorMessage).toContain("endTimeUnixNano must be a time");
    const { events } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.events.length >= 4);
    expect(events.map((e) => e.payload.node_name).filter(Boolean).sort()).toEqual(["bad tokens", "chat gpt-4o", "invoke_agent bot"]);
    // A negative token count is not a count: the span is kept, the count left out.
    const taken = events.find((e) => e.payload.node_name === "bad tokens")!;
    expect(taken.payload.prompt_tokens).toBeUndefined();
    expect(taken.payload.completion_tokens).toBe(3);

    // In protobuf the answer is an ExportTraceServiceResponse with partial_success.
    const pbRes = await post(srv, acct.key, exportProtobuf([{ ...badId, spanId: hexId(8) }]), PB);
    expect(pbRes.status).toBe(200);
    expect(decodeProtobufResponse(new Uint8Array(await pbRes.arrayBuffer())).partialSuccess?.rejectedSpans).toBe(1);
  });

  it("400 for a body that is not an export, with a google.rpc.Status in the request's format", async () => {
    const pb = await post(srv, acct.key, new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]), PB);
    expect(pb.status).toBe(400);
    expect(pb.headers.get("content-type")).toBe(PB);
    const status = decodeRpcStatus(new Uint8Array(await pb.arrayBuffer()));
    expect(status.code).toBe(3);
    expect(status.message).toContain("not an OTLP ExportTraceServiceRequest");
    const json = await post(srv, acct.key, "{not json", JSON_TYPE);
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ code: 3, error: { code: "malformed_export" } });
    const shape = await post(srv, acct.key, '{"resourceSpans": 5}', JSON_TYPE);
    expect(shape.status).toBe(400);
    expect((await shape.json()).message).toContain("resourceSpans must be an array");
    expect((await post(srv, acct.key, "x", "text/plain")).status).toBe(415);
    expect((await fetch(`${srv.url}/v1/traces`)).status).toBe(405);
  });

  it("401 without a key or with a bad one, in either format", async () => {
    const body = exportJson(smallTrace());
    const none = await post(srv, undefined, body, JSON_TYPE);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ code: 16, error: { code: "missing_api_key" } });
    const bad = await post(srv, "f".repeat(64), exportProtobuf(smallTrace()), PB);
    expect(bad.status).toBe(401);
    expect(decodeRpcStatus(new Uint8Array(await bad.arrayBuffer())).code).toBe(16);
  });

  it("413 over RUNWATCH_OTLP_MAX_BODY_BYTES", async () => {
    const big = exportJson(smallTrace(hexId(16), { attributes: { "input.value": "x".repeat(300_000) } }));
    const res = await post(srv, acct.key, big, JSON_TYPE);
    expect(res.status).toBe(413);
    expect((await res.json()).message).toContain("RUNWATCH_OTLP_MAX_BODY_BYTES");
  });

  it("413 (gRPC: RESOURCE_EXHAUSTED, no RetryInfo) for more spans than RUNWATCH_OTLP_MAX_SPANS; the request thread stays free", async () => {
    const traceId = hexId(16);
    const many = Array.from({ length: 101 }, (_, i) => ({ traceId, spanId: hexId(8), name: `s${i}` }));
    const probe = (async () => { const t = performance.now(); await fetch(`${srv.url}/healthz`); return performance.now() - t; })();
    const res = await post(srv, acct.key, exportProtobuf(many), PB);
    expect(res.status).toBe(413);
    expect(decodeRpcStatus(new Uint8Array(await res.arrayBuffer())).message).toContain("at most 100 (RUNWATCH_OTLP_MAX_SPANS)");
    expect(await probe).toBeLessThan(500);
    const client = clientFor(srv);
    const err = await client.send(exportProtobuf(many), acct.key);
    expect(err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(err?.metadata.get("grpc-status-details-bin")).toEqual([]); // not retryable: no RetryInfo
    client.close();
    expect((await fetch(`${srv.url}/api/runs/${traceId}`, bearer(acct.key))).status).toBe(404);
  });

  it("429 with Retry-After once the key's rate limit is spent", async () => {
    const body = exportJson(smallTrace());
    const limitedAcct = await accountWithOneRequestLeft();
    const answers = [];
    for (let i = 0; i < 2; i++) answers.push(await post(srv, limitedAcct.key, body, JSON_TYPE));
    expect(answers.map((r) => r.status)).toEqual([200, 429]);
    expect(answers[0]!.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(answers[1]!.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await answers[1]!.json()).toMatchObject({ code: 8, error: { code: "rate_limited" } });
  });

  it("hostile values: NUL and lone surrogates are repaired in content; another tenant's trace id is another run", async () => {
    const traceId = hexId(16);
    const spans = smallTrace(traceId, { attributes: { "gen_ai.operation.name": "chat", "gen_ai.input.messages": "a\u0000b\ud800c", "gen_ai.request.model": "gpt-4o" } });
    expect((await post(srv, acct.key, exportJson(spans), JSON_TYPE)).status).toBe(200);
    const other = await srv.account();
    const theirs = smallTrace(traceId).map((s) => ({ ...s, name: `their ${s.name}` }));
    expect((await post(srv, other.key, exportProtobuf(theirs), PB)).status).toBe(200);
    const mine = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success");
    const their = await waitForRun(srv.url, other.key, traceId, (b) => b.run.status === "success");
    expect(mine.run.run_id).not.toBe(their.run.run_id);
    expect(mine.events.find((e) => e.payload.kind === "llm")!.payload.input_preview).toBe("a\ufffdb\ufffdc");
    expect(their.events.every((e) => !e.payload.node_name || String(e.payload.node_name).startsWith("their"))).toBe(true);
    const spansRes = await fetch(`${srv.url}/api/runs/${traceId}/spans`, bearer(acct.key));
    expect(((await spansRes.json()) as { spans: unknown[] }).spans).toHaveLength(2);
  });

  it("protobuf strings that are not UTF-8 (how the JS exporters encode a lone surrogate) are repaired, not a 400 for the whole export", async () => {
    const traceId = hexId(16);
    const spans = smallTrace(traceId, { attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.output.messages": "cut short \ud83d" } });
    const body = exportProtobuf(spans);
    // protobufjs writes the lone surrogate as ED A0 BD, bytes no UTF-8 decoder takes.
    expect(Buffer.from(body).includes(Buffer.from([0xed, 0xa0, 0xbd]))).toBe(true);
    const res = await post(srv, acct.key, body, PB);
    expect(res.status).toBe(200);
    const { events } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success");
    expect(events.find((e) => e.payload.kind === "llm")!.payload.output_preview).toBe("cut short \ufffd\ufffd\ufffd");
  });
});

describe("OTLP/gRPC answers", () => {
  const retryDelay = (err: grpc.ServiceError) => {
    const details = err.metadata.get("grpc-status-details-bin")[0] as Buffer;
    return decodeRpcStatus(details).retryDelaySeconds;
  };

  it("OK, then UNAUTHENTICATED, INVALID_ARGUMENT and, over the rate limit, RESOURCE_EXHAUSTED with RetryInfo", async () => {
    const client = clientFor(srv);
    const spans = smallTrace();
    expect(await client.send(exportProtobuf(spans), acct.key)).toBeNull();
    await waitForRun(srv.url, acct.key, spans[0]!.traceId, (b) => b.run.status === "success");
    expect((await client.send(exportProtobuf(spans)))?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect((await client.send(exportProtobuf(spans), "0".repeat(64)))?.code).toBe(grpc.status.UNAUTHENTICATED);
    const garbage = await client.send(new Uint8Array([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]), acct.key);
    expect(garbage?.code).toBe(grpc.status.INVALID_ARGUMENT);
    client.close();

    const limitedAcct = await accountWithOneRequestLeft();
    const small = clientFor(srv);
    expect((await small.send(exportProtobuf(smallTrace()), limitedAcct.key))).toBeNull();
    const refused = (await small.send(exportProtobuf(smallTrace()), limitedAcct.key))!;
    expect(refused.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(retryDelay(refused)).toBeGreaterThan(0);
    small.close();
  });

  it("a message over the size limit is RESOURCE_EXHAUSTED", async () => {
    const client = clientFor(srv);
    const big = exportProtobuf(smallTrace(hexId(16), { attributes: { "input.value": "x".repeat(300_000) } }));
    expect((await client.send(big, acct.key))?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    client.close();
  });

  it("google.rpc.Status with RetryInfo round-trips (the encoding both receivers use)", () => {
    expect(decodeRpcStatus(encodeRpcStatus(8, "slow down", 7))).toEqual({ code: 8, message: "slow down", retryDelaySeconds: 7 });
  });
});

describe("the event log cannot take events (runs last: it closes the log)", () => {
  it("OTLP/HTTP answers 503 with Retry-After and OTLP/gRPC UNAVAILABLE with RetryInfo; nothing is acknowledged", async () => {
    await srv.ports.log.close();
    const res = await post(srv, acct.key, exportJson(smallTrace()), JSON_TYPE);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ code: 14, error: { code: "service_unavailable" } });
    const client = clientFor(srv);
    const err = await client.send(exportProtobuf(smallTrace()), acct.key);
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
    expect(decodeRpcStatus(err!.metadata.get("grpc-status-details-bin")[0] as Buffer).retryDelaySeconds).toBeGreaterThan(0);
    client.close();
  });
});
