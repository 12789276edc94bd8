/**
 * Run labels from OpenTelemetry traces, through the real OTLP/HTTP receiver (protobuf and JSON) and read back from
 * GET /api/runs/{trace id} (docs/OTEL.md, "Tags, metadata, end user, environment, release"): OpenInference's
 * tag.tags, metadata and user.id; the resource's deployment.environment(.name) and service.version; the Vercel AI
 * SDK's ai.telemetry.metadata.*; Langfuse's langfuse.trace.tags, langfuse.trace.metadata.*, langfuse.user.id,
 * langfuse.environment and langfuse.release. Spans of one trace over several exports fold into one run; values past a
 * bound are cut, never refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, exportProtobuf, hexId, type ResourceAttributes, type SpanSpec } from "./otlp-fixtures.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

type Encoding = "protobuf" | "json";
async function send(spans: SpanSpec[], encoding: Encoding, resource?: ResourceAttributes): Promise<void> {
  const res = await fetch(`${srv.url}/v1/traces`, {
    method: "POST",
    headers: { "content-type": encoding === "json" ? "application/json" : "application/x-protobuf", authorization: `Bearer ${acct.key}` },
    body: (encoding === "json" ? exportJson(spans, "labelled-service", resource) : exportProtobuf(spans, "labelled-service", resource)) as BodyInit,
  });
  expect(res.status).toBe(200);
}

/** A trace: a root agent span with `rootAttributes` and an LLM call under it with `childAttributes`. */
function trace(rootAttributes: SpanSpec["attributes"], childAttributes: SpanSpec["attributes"] = {}): { traceId: string; spans: SpanSpec[] } {
  const traceId = hexId(16);
  const root = hexId(8);
  const t = Date.now() - 1000;
  return {
    traceId,
    spans: [
      { traceId, spanId: hexId(8), parentSpanId: root, name: "chat gpt-4o", startMs: t + 10, endMs: t + 400, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", ...childAttributes } },
      { traceId, spanId: root, name: "invoke_agent bot", startMs: t, endMs: t + 500, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot", ...rootAttributes } },
    ],
  };
}

const finished = async (traceId: string) => (await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success")).run;

describe.each(["protobuf", "json"] as const)("run labels from OTLP/HTTP %s", (encoding) => {
  it("OpenInference: tag.tags, metadata (a JSON object as text) and user.id; session.id still the session", async () => {
    const { traceId, spans } = trace(
      { "tag.tags": ["vip", "beta"], metadata: '{"customer":"acme","tier":2,"trial":true}', "user.id": "cust-42", "session.id": "conv-1" },
      { "tag.tags": ["llm"] },
    );
    await send(spans, encoding);
    const run = await finished(traceId);
    expect(run).toMatchObject({ tags: ["beta", "llm", "vip"], end_user: "cust-42", session_id: "conv-1" });
    expect(run.metadata).toStrictEqual({ customer: "acme", tier: 2, trial: true });
  });

  it("the resource: deployment.environment.name and service.version; the older deployment.environment", async () => {
    const a = trace({});
    await send(a.spans, encoding, { "deployment.environment.name": "production", "service.version": "1.4.2" });
    expect(await finished(a.traceId)).toMatchObject({ environment: "production", release: "1.4.2", tags: [], metadata: {}, end_user: null });
    const b = trace({});
    await send(b.spans, encoding, { "deployment.environment": "staging" });
    expect(await finished(b.traceId)).toMatchObject({ environment: "staging", release: null });
  });

  it("the Vercel AI SDK: ai.telemetry.metadata.<key>", async () => {
    const { traceId, spans } = trace(
      { "ai.operationId": "ai.generateText", "ai.telemetry.functionId": "support", "ai.telemetry.metadata.customer": "acme", "ai.telemetry.metadata.plan": "pro" },
      { "ai.telemetry.metadata.customer": "acme", "ai.telemetry.metadata.attempt": 2 },
    );
    await send(spans, encoding);
    expect((await finished(traceId)).metadata).toStrictEqual({ customer: "acme", plan: "pro", attempt: 2 });
  });

  it("Langfuse: trace tags, trace metadata per key, user, environment and release", async () => {
    const { traceId, spans } = trace({
      "langfuse.trace.tags": ["refunds", "eu"], "langfuse.trace.metadata.customer": "acme", "langfuse.trace.metadata.priority": "high",
      "langfuse.user.id": "lf-user-7", "langfuse.environment": "canary", "langfuse.release": "2026.11.3",
    });
    await send(spans, encoding, { "deployment.environment.name": "production" });
    const run = await finished(traceId);
    expect(run).toMatchObject({ tags: ["eu", "refunds"], end_user: "lf-user-7", environment: "canary", release: "2026.11.3" });
    expect(run.metadata).toStrictEqual({ customer: "acme", priority: "high" });
    // Tags as JSON text, as some Langfuse SDKs send them.
    const text = trace({ "langfuse.trace.tags": '["from-json","vip"]' });
    await send(text.spans, encoding);
    expect((await finished(text.traceId)).tags).toEqual(["from-json", "vip"]);
  });

  it("a trace over several exports folds into one run; oversized values are cut, not refused", async () => {
    const { traceId, spans } = trace(
      { "tag.tags": ["late"], "user.id": "u".repeat(300), metadata: JSON.stringify({ note: "n".repeat(3000), nested: { a: [1] } }) },
      { "tag.tags": Array.from({ length: 60 }, (_, i) => `early-${String(i).padStart(2, "0")}`) },
    );
    await send([spans[0]!], encoding); // the child first, in an export of its own
    await send([spans[1]!], encoding);
    const run = await finished(traceId);
    expect(run.tags).toHaveLength(50);
    expect(run.tags).not.toContain("late"); // the run's 50 were taken by the first export's span
    expect(run.end_user).toBe("u".repeat(200));
    expect(run.metadata).toStrictEqual({ note: "n".repeat(1024), nested: '{"a":[1]}' });
  });
});
