/**
 * A realistic OTLP trace export for benchmarks: agent traces as GenAI-instrumented frameworks emit them — an
 * invoke_agent root, three chat calls (messages in and out, token usage), two tool calls, a retrieval and an
 * embeddings call — 8 spans per trace, 64 traces per export (512 spans: the Python SDK's BatchSpanProcessor default
 * export size). BENCH_CONTENT=0 leaves out messages and tool arguments/results, as instrumentations do unless asked
 * to record content (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT).
 */
import { hexId, type SpanSpec } from "../e2e/otlp-fixtures.js";

export const SPANS_PER_TRACE = 8;
const WITH_CONTENT = process.env.BENCH_CONTENT !== "0";
export const TRACES_PER_EXPORT = 64;
export const SPANS_PER_EXPORT = SPANS_PER_TRACE * TRACES_PER_EXPORT;

const QUESTION = "Where is my order #1234? It was supposed to arrive yesterday and the tracking page shows no update since Monday.";
const ANSWER = "Your order #1234 left our warehouse on Monday and is with the carrier; the carrier reports a one-day delay, delivery is expected tomorrow before noon.";

export function agentTrace(now: number): SpanSpec[] {
  const traceId = hexId(16);
  const root = hexId(8);
  const at = (ms: number) => now - 2000 + ms;
  const chat = (name: string, start: number, end: number, output: string): SpanSpec => ({
    traceId, spanId: hexId(8), parentSpanId: root, name: `chat ${name}`, startMs: at(start), endMs: at(end),
    attributes: {
      "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": name, "gen_ai.response.model": name,
      "gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 180, "gen_ai.usage.cache_read.input_tokens": 1024,
      "gen_ai.response.finish_reasons": ["stop"],
      ...(WITH_CONTENT ? {
        "gen_ai.input.messages": JSON.stringify([{ role: "system", content: "You are a support agent." }, { role: "user", content: QUESTION }]),
        "gen_ai.output.messages": JSON.stringify([{ role: "assistant", content: output }]),
      } : {}),
    },
  });
  const tool = (name: string, start: number, end: number): SpanSpec => ({
    traceId, spanId: hexId(8), parentSpanId: root, name: `execute_tool ${name}`, startMs: at(start), endMs: at(end),
    attributes: {
      "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
      ...(WITH_CONTENT ? { "gen_ai.tool.call.arguments": '{"order_id": 1234}', "gen_ai.tool.call.result": '{"status": "in_transit", "eta": "tomorrow"}' } : {}),
    },
  });
  return [
    chat("gpt-4o-mini", 10, 400, "Let me look up the order."),
    tool("orders_api", 410, 520),
    tool("carrier_tracking", 530, 700),
    { traceId, spanId: hexId(8), parentSpanId: root, name: "embeddings text-embedding-3-small", startMs: at(710), endMs: at(760), attributes: { "gen_ai.operation.name": "embeddings", "gen_ai.request.model": "text-embedding-3-small", "gen_ai.usage.input_tokens": 30 } },
    { traceId, spanId: hexId(8), parentSpanId: root, name: "retrieval policies", startMs: at(770), endMs: at(840), attributes: { "gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "policies" } },
    chat("gpt-4o", 850, 1500, ANSWER),
    chat("gpt-4o-mini", 1510, 1800, "Anything else?"),
    { traceId, spanId: root, name: "invoke_agent support-bot", startMs: at(0), endMs: at(1900), attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot", "gen_ai.conversation.id": "conv-1" } },
  ];
}

/** The spans of one export: TRACES_PER_EXPORT new traces. */
export function exportSpans(now = Date.now()): SpanSpec[] {
  return Array.from({ length: TRACES_PER_EXPORT }, () => agentTrace(now)).flat();
}

/**
 * `count` exports as an SDK's BatchSpanProcessor sends them under load (BENCH_SPREAD=1 in bench:otlp): spans are
 * exported as they end, so a trace's spans are spread over the exports of the ~2 s it lasts, each export mixing the
 * spans of hundreds of traces, and its root (the run's end) comes last. Traces start at an even pace,
 * TRACES_PER_EXPORT per export's worth of time; the exports are the spans in order of their end, 512 at a time.
 * The exports' first traces are missing their earliest spans and the last ones their latest (as when a bench
 * starts and stops in the middle of a stream).
 */
export function spreadExports(count: number, now = Date.now()): SpanSpec[][] {
  const spans = count * SPANS_PER_EXPORT;
  // Spans end at SPANS_PER_EXPORT per export's worth of time; a trace lasts ~1.9 s, ~75 exports' worth at 20,000
  // spans/s, so that many exports' traces are under way at any time.
  const exportMs = 1000 / (20_000 / SPANS_PER_EXPORT);
  const underWay = Math.ceil(2000 / exportMs);
  const traces = Math.ceil(spans / SPANS_PER_TRACE) + 2 * underWay * TRACES_PER_EXPORT;
  const ending: { at: number; span: SpanSpec }[] = [];
  for (let i = 0; i < traces; i++) {
    const startedAt = (i * exportMs) / TRACES_PER_EXPORT;
    for (const span of agentTrace(now)) ending.push({ at: startedAt + span.endMs! - (now - 2000), span });
  }
  ending.sort((a, b) => a.at - b.at);
  const skip = underWay * SPANS_PER_EXPORT; // start in the middle of the stream: traces already under way
  return Array.from({ length: count }, (_, k) => ending.slice(skip + k * SPANS_PER_EXPORT, skip + (k + 1) * SPANS_PER_EXPORT).map((e) => e.span));
}
