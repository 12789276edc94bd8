/**
 * OpenTelemetry's own JS SDK exporting to Runwatch (docs/OTEL.md): OTLP/HTTP JSON (@opentelemetry/exporter-trace-otlp-http),
 * OTLP/HTTP protobuf (-otlp-proto, gzip) and OTLP/gRPC (-otlp-grpc, gzip), each with the GenAI semantic conventions or
 * OpenInference's attributes. A trace becomes a run with its tree of spans, LLM calls counted and priced; the run is
 * live (running) from its first exported span.
 */
import { context, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { CompressionAlgorithm } from "@opentelemetry/otlp-exporter-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

function provider(exporter: SpanExporter, service = "support-service") {
  const p = new BasicTracerProvider({ resource: resourceFromAttributes({ "service.name": service }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { tracer: p.getTracer("runwatch-otlp-test"), flush: () => p.forceFlush(), shutdown: () => p.shutdown() };
}
const child = (tracer: Tracer, parent: Span, name: string, attributes: Record<string, string | number | string[]>): Span =>
  tracer.startSpan(name, { attributes }, trace.setSpan(context.active(), parent));

/** An agent (GenAI conventions): invoke_agent → chat (two models' calls) + execute_tool + embeddings. */
function genAiAgent(tracer: Tracer): string {
  const root = tracer.startSpan("invoke_agent support-bot", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot", "gen_ai.input.messages": '[{"role":"user","parts":[{"type":"text","content":"Where is order 1234?"}]}]' } });
  const chat = child(tracer, root, "chat gpt-4o", {
    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
    "gen_ai.usage.input_tokens": 1000, "gen_ai.usage.output_tokens": 200, "gen_ai.usage.cache_read.input_tokens": 800,
    "gen_ai.response.finish_reasons": ["tool_calls"], "gen_ai.input.messages": '[{"role":"user","content":"Where is order 1234?"}]',
  });
  chat.end();
  const tool = child(tracer, root, "execute_tool orders_api", { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "orders_api", "gen_ai.tool.call.arguments": '{"id":1234}', "gen_ai.tool.call.result": "shipped" });
  tool.end();
  const emb = child(tracer, root, "embeddings text-embedding-3-small", { "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "text-embedding-3-small", "gen_ai.usage.input_tokens": 12 });
  emb.end();
  const answer = child(tracer, root, "chat claude-sonnet-4-5", {
    "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
    "gen_ai.usage.input_tokens": 1500, "gen_ai.usage.output_tokens": 300, "gen_ai.usage.reasoning.output_tokens": 100,
    "gen_ai.output.messages": '[{"role":"assistant","parts":[{"type":"text","content":"It shipped."}]}]',
  });
  answer.end();
  root.setAttribute("gen_ai.output.messages", '[{"role":"assistant","parts":[{"type":"text","content":"It shipped."}]}]');
  root.end();
  return root.spanContext().traceId;
}

/** The same agent as OpenInference (LangChain/LlamaIndex instrumentations) writes it. */
function openInferenceAgent(tracer: Tracer): string {
  const root = tracer.startSpan("LangGraph", { attributes: { "openinference.span.kind": "CHAIN", "input.value": '{"messages":["hi"]}' } });
  const agent = child(tracer, root, "agent", { "openinference.span.kind": "AGENT", "agent.name": "researcher" });
  const llm = child(tracer, agent, "ChatOpenAI", {
    "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.provider": "openai",
    "llm.token_count.prompt": 300, "llm.token_count.completion": 40, "llm.token_count.total": 340,
    "input.value": '{"messages":[{"role":"user","content":"hi"}]}', "output.value": "hello!",
  });
  llm.end();
  const retr = child(tracer, agent, "VectorStoreRetriever", { "openinference.span.kind": "RETRIEVER", "input.value": "hi" });
  retr.end();
  const tool = child(tracer, agent, "search", { "openinference.span.kind": "TOOL", "tool.name": "search", "input.value": "weather", "output.value": "sunny" });
  tool.setStatus({ code: SpanStatusCode.ERROR, message: "rate limited" });
  tool.recordException(Object.assign(new Error("search API rate limited"), { name: "RateLimitError" }));
  tool.end();
  agent.end();
  root.end();
  return root.spanContext().traceId;
}

async function spansOf(traceId: string): Promise<Record<string, any>[]> {
  const res = await fetch(`${srv.url}/api/runs/${traceId}/spans`, bearer(acct.key));
  expect(res.status).toBe(200);
  return ((await res.json()) as { spans: Record<string, any>[] }).spans;
}

describe("OpenTelemetry JS SDK → Runwatch", () => {
  it("OTLP/HTTP JSON, GenAI conventions: a trace is a run with its agent, LLM calls priced, a tool and an embedding under the agent", async () => {
    const otel = provider(new JsonExporter({ url: `${srv.url}/v1/traces`, headers: { Authorization: `Bearer ${acct.key}` } }));
    const traceId = genAiAgent(otel.tracer);
    await otel.shutdown();
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    // SimpleSpanProcessor exports each span on its own, concurrently, so they are stored in any order: wait for all of
    // them to count (the run_start, five span ends, the run_end), not only for the root's run_end.
    const { run } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.event_count === 7);
    expect(run).toMatchObject({ agent_name: "support-bot", llm_calls: 2, prompt_tokens: 2500, completion_tokens: 500, cost_source: "computed", framework: "runwatch-otlp-test" });
    expect(run.cost_usd).toBeGreaterThan(0);
    const spans = await spansOf(traceId);
    const by = (name: string) => spans.find((s) => s.name === name)!;
    const root = by("invoke_agent support-bot");
    expect(root).toMatchObject({ kind: "agent", parent_span_id: null, status: "ok" });
    expect(by("chat gpt-4o")).toMatchObject({ kind: "llm", parent_span_id: root.span_id, model: "gpt-4o-2024-08-06", provider: "openai", prompt_tokens: 1000, cached_tokens: 800 });
    expect(by("chat gpt-4o").input_preview).toContain("Where is order 1234?");
    expect(by("chat claude-sonnet-4-5")).toMatchObject({ kind: "llm", reasoning_tokens: 100 });
    expect(by("orders_api")).toMatchObject({ kind: "tool", parent_span_id: root.span_id, input_preview: '{"id":1234}', output_preview: "shipped" });
    expect(by("embeddings text-embedding-3-small")).toMatchObject({ kind: "embedding", parent_span_id: root.span_id });
  });

  it("OTLP/HTTP protobuf with gzip, OpenInference: kinds from openinference.span.kind, the agent from the AGENT span, a failed tool marks its span, not the run", async () => {
    const otel = provider(new ProtoExporter({ url: `${srv.url}/v1/traces`, headers: { Authorization: `Bearer ${acct.key}` }, compression: CompressionAlgorithm.GZIP }));
    const traceId = openInferenceAgent(otel.tracer);
    await otel.shutdown();
    // Each span's export is its own request (see the first test): the root's can be stored before the AGENT span's.
    const { run } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.run.event_count === 7);
    expect(run).toMatchObject({ agent_name: "researcher", llm_calls: 1, prompt_tokens: 300, completion_tokens: 40 });
    const spans = await spansOf(traceId);
    const kinds = Object.fromEntries(spans.map((s) => [s.name, s.kind]));
    expect(kinds).toEqual({ LangGraph: "chain", agent: "agent", ChatOpenAI: "llm", VectorStoreRetriever: "retrieval", search: "tool" });
    const tool = spans.find((s) => s.name === "search")!;
    expect(tool.status).toBe("error");
    expect(tool.error).toContain("search API rate limited");
  });

  it("OTLP/gRPC with gzip and the key in metadata; the run is running from its first exported span, then ends with its root", async () => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${acct.key}`);
    const grpcUrl = `http://127.0.0.1:${srv.web.otlpGrpcPort}`;
    const otel = provider(new GrpcExporter({ url: grpcUrl, metadata, compression: CompressionAlgorithm.GZIP }), "billing-service");
    const root = otel.tracer.startSpan("handle request");
    const traceId = root.spanContext().traceId;
    const llm = child(otel.tracer, root, "chat gpt-4o-mini", { "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.prompt_tokens": 10, "gen_ai.usage.completion_tokens": 5 });
    llm.end();
    await otel.flush();
    const live = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.llm_calls === 1);
    expect(live.run).toMatchObject({ status: "running", agent_name: "billing-service" });
    root.end();
    await otel.shutdown();
    const { run } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success");
    expect(run).toMatchObject({ prompt_tokens: 10, completion_tokens: 5 });
    expect((await spansOf(traceId)).map((s) => s.name).sort()).toEqual(["chat gpt-4o-mini", "handle request"]);
  });

  it("a root span with status ERROR and an exception ends the run as error with its type, message and stack trace", async () => {
    const otel = provider(new JsonExporter({ url: `${srv.url}/v1/traces`, headers: { Authorization: `Bearer ${acct.key}` } }));
    const root = otel.tracer.startSpan("invoke_agent planner", { attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" } });
    root.recordException(Object.assign(new Error("context window exceeded"), { name: "ContextLengthError" }));
    root.setStatus({ code: SpanStatusCode.ERROR, message: "context window exceeded" });
    root.end();
    await otel.shutdown();
    const traceId = root.spanContext().traceId;
    const { run, events } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "error");
    expect(run).toMatchObject({ agent_name: "planner", error_count: 1, last_error: "context window exceeded" });
    const error = events.find((e) => e.event_type === "error")!;
    expect(error.payload).toMatchObject({ error_type: "ContextLengthError", error_message: "context window exceeded" });
    expect(error.payload.traceback).toContain("otlp-sdk.test.ts");
  });
});
