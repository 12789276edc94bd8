import path from "node:path";
import { fileURLToPath } from "node:url";
import { Either } from "effect";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { checkBuiltEvent, parseIngestEvent, type IngestEvent } from "../core/events/schema.js";
import { MAX_STRING_CHARS } from "../core/events/storable.js";
import { GEN_AI_OPERATION_KINDS, OPENINFERENCE_KINDS, TRACELOOP_KINDS, VERCEL_AI_KINDS } from "./conventions.js";
import { kindOf, mapExport, type RawEvent } from "./mapping.js";
import { decodeJsonExport, jsonIdHex } from "./otlp-json.js";
import { decodeProtobufExport } from "./otlp-protobuf.js";
import { nanosToMs } from "./trace-model.js";
import type { AttrValue, OtlpSpan } from "./trace-model.js";

const T = "0af7651916cd43dd8448eb211c80319c";
const t0 = Date.UTC(2026, 10, 24, 9, 0, 0);

function span(o: Partial<Omit<OtlpSpan, "attributes">> & { attributes?: Record<string, AttrValue> } = {}): OtlpSpan {
  return {
    traceId: T, spanId: "b7ad6b7169203331", parentSpanId: "", name: "span", startMs: t0, endMs: t0 + 1500,
    statusCode: 0, statusMessage: "", events: [], resource: new Map([["service.name", "checkout"]]), scope: "my.instrumentation",
    ...o,
    attributes: new Map(Object.entries(o.attributes ?? {})),
  };
}
const attrs = (a: Record<string, AttrValue>) => new Map(Object.entries(a));
/** The events of the first trace of an export of these spans. */
function events(...spans: OtlpSpan[]): RawEvent[] {
  const m = mapExport(spans);
  expect(m.refused).toEqual([]);
  return [m.traces[0]!.runStart, ...m.traces[0]!.spans.flatMap((s) => s.events)];
}
const payloadOf = (s: OtlpSpan) => events(s).find((e) => e.span_id === s.spanId)!.payload as Record<string, unknown>;

describe("span kinds", () => {
  it("every gen_ai.operation.name, openinference.span.kind and traceloop.span.kind of the tables", () => {
    for (const [op, kind] of Object.entries(GEN_AI_OPERATION_KINDS)) expect(kindOf(attrs({ "gen_ai.operation.name": op }))).toBe(kind);
    for (const [k, kind] of Object.entries(OPENINFERENCE_KINDS)) expect(kindOf(attrs({ "openinference.span.kind": k }))).toBe(kind);
    for (const [k, kind] of Object.entries(TRACELOOP_KINDS)) expect(kindOf(attrs({ "traceloop.span.kind": k }))).toBe(kind);
    for (const [k, kind] of Object.entries(VERCEL_AI_KINDS)) expect(kindOf(attrs({ "ai.operationId": k }))).toBe(kind);
    expect(kindOf(attrs({ "gen_ai.operation.name": "summon_familiar", "openinference.span.kind": "AGENT" }))).toBe("agent"); // unknown op: next convention
    expect(kindOf(attrs({ "llm.model_name": "gpt-4o" }))).toBe("llm"); // a model and nothing else: an LLM call
    expect(kindOf(attrs({ "http.method": "GET" }))).toBe("step");
  });

  it("a tool span is a tool_call with the tool's name, arguments and result", () => {
    const s = span({ parentSpanId: "00f067aa0ba902b7", name: "execute_tool get_weather", attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.arguments": { city: "Paris" }, "gen_ai.tool.call.result": "sunny" } });
    const e = events(s).find((x) => x.span_id === s.spanId)!;
    expect(e).toMatchObject({ event_type: "tool_call", parent_span_id: "00f067aa0ba902b7", payload: { tool_name: "get_weather", phase: "end", duration_ms: 1500, input_preview: '{"city":"Paris"}', output_preview: "sunny" } });
  });
});

describe("LLM calls", () => {
  it("GenAI attributes: response model over request model, provider, all token kinds, finish reason, time to first chunk", () => {
    const p = payloadOf(span({ parentSpanId: "00f067aa0ba902b7", attributes: {
      "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06", "gen_ai.provider.name": "openai", "gen_ai.system": "ignored",
      "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 20, "gen_ai.usage.cache_read.input_tokens": 60, "gen_ai.usage.cache_write.input_tokens": 30,
      "gen_ai.usage.reasoning.output_tokens": 8, "gen_ai.response.finish_reasons": ["stop"], "gen_ai.response.time_to_first_chunk": 0.25,
      "gen_ai.input.messages": '[{"role":"user"}]', "gen_ai.system_instructions": "Be brief.",
    } }));
    expect(p).toMatchObject({ kind: "llm", model: "gpt-4o-2024-08-06", provider: "openai", prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60, cache_write_tokens: 30, reasoning_tokens: 8, finish_reason: "stop", time_to_first_token_ms: 250 });
    expect(JSON.parse(p.input_preview as string)).toEqual({ system_instructions: "Be brief.", messages: '[{"role":"user"}]' });
  });

  it("older and other names: gen_ai.system, prompt/completion tokens, cache_creation, llm.* (OpenInference), flattened gen_ai.prompt.N", () => {
    expect(payloadOf(span({ parentSpanId: "00f067aa0ba902b7", attributes: {
      "gen_ai.operation.name": "chat", "gen_ai.system": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.completion_tokens": "3", "gen_ai.usage.cache_creation.input_tokens": 2,
      "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "hi", "gen_ai.prompt.1.role": "assistant", "gen_ai.completion.0.content": "hello",
    } }))).toMatchObject({ provider: "anthropic", model: "claude-sonnet-4-5", prompt_tokens: 7, completion_tokens: 3, cache_write_tokens: 2,
      input_preview: '[{"role":"user","content":"hi"},{"role":"assistant"}]', output_preview: '[{"content":"hello"}]' });
    expect(payloadOf(span({ parentSpanId: "00f067aa0ba902b7", attributes: {
      "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.provider": "openai", "llm.token_count.prompt": 5, "llm.token_count.completion": 1,
      "llm.token_count.total": 6, "llm.token_count.prompt_details.cache_read": 4, "llm.cost.total": 0.5, "input.value": "q", "output.value": "a",
    } }))).toMatchObject({ kind: "llm", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 5, completion_tokens: 1, total_tokens: 6, cached_tokens: 4, cost_usd: 0.5, input_preview: "q", output_preview: "a" });
    // OpenInference's flattened messages read better than input.value (the framework's serialised call).
    expect(payloadOf(span({ parentSpanId: "00f067aa0ba902b7", attributes: {
      "openinference.span.kind": "LLM", "input.value": '{"lc": 1, "kwargs": {}}', "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": "Plan a trip",
      "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather", "llm.token_count.prompt": "120",
    } }))).toMatchObject({ prompt_tokens: 120, input_preview: '[{"role":"user","content":"Plan a trip"}]', output_preview: '[{"role":"assistant","tool_calls.0.tool_call.function.name":"get_weather"}]' });
  });
});

describe("runs", () => {
  it("a trace is a run: run_start with the agent and the earliest start, the root's end is run_end; ids derive from trace + span + phase", () => {
    const root = span({ name: "invoke_agent", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support-bot", "input.value": "hi", "output.value": "bye" } });
    const kid = span({ spanId: "1111111111111111", parentSpanId: root.spanId, startMs: t0 - 10, endMs: t0 + 5 });
    const evs = events(kid, root);
    expect(evs.map((e) => e.event_type)).toEqual(["run_start", "step", "step", "run_end"]);
    expect(evs[0]).toMatchObject({ sdk_run_id: T, agent_name: "support-bot", occurred_at: new Date(t0 - 10).toISOString(), payload: { framework: "my.instrumentation", input: "hi" } });
    expect(evs[3]).toMatchObject({ agent_name: "support-bot", occurred_at: new Date(t0 + 1500).toISOString(), payload: { output: "bye" } });
    expect(events(kid, root).map((e) => e.event_id)).toEqual(evs.map((e) => e.event_id)); // stable
    expect(new Set(evs.map((e) => e.event_id)).size).toBe(4);
  });

  it("the agent name: the root's, else the earliest agent span's, else service.name", () => {
    const agent = (name: string, start: number) => span({ spanId: `${start}`.padStart(16, "a"), parentSpanId: "00f067aa0ba902b7", startMs: t0 + start, attributes: { "openinference.span.kind": "AGENT", "agent.name": name } });
    expect(events(agent("inner", 5), agent("outer", 1))[0]!.agent_name).toBe("outer");
    expect(events(span({ parentSpanId: "00f067aa0ba902b7" }))[0]!.agent_name).toBe("checkout");
    expect(events(span({ parentSpanId: "00f067aa0ba902b7", resource: new Map() }))[0]!.agent_name).toBe("unknown_service");
  });

  it("status ERROR: the span carries the exception; a failed root is an error event instead of run_end", () => {
    const failing = (parentSpanId: string) => span({
      parentSpanId, statusCode: 2, statusMessage: "boom",
      events: [{ name: "exception", timeMs: t0, attributes: attrs({ "exception.type": "ValueError", "exception.message": "bad input", "exception.stacktrace": "Traceback…" }) }],
    });
    const child = events(failing("00f067aa0ba902b7"));
    expect(child.map((e) => e.event_type)).toEqual(["run_start", "step"]);
    expect(child[1]!.payload).toMatchObject({ error: { error_type: "ValueError", error_message: "bad input", traceback: "Traceback…" } });
    const root = events(failing(""));
    expect(root.map((e) => e.event_type)).toEqual(["run_start", "step", "error"]);
    expect(root[2]!.payload).toEqual({ error_type: "ValueError", error_message: "bad input", traceback: "Traceback…" });
    expect(events(span({ statusCode: 2, statusMessage: "timed out" }))[2]!.payload).toEqual({ error_type: "Error", error_message: "timed out" });
  });

  it("gen_ai.evaluation.result events become the span's scores (source otel): value, else label; cut to the API's lengths", () => {
    const evaluation = (a: Record<string, AttrValue>) => ({ name: "gen_ai.evaluation.result", timeMs: t0, attributes: attrs(a) });
    const evaluated = span({
      parentSpanId: "00f067aa0ba902b7",
      attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" },
      events: [
        evaluation({ "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9, "gen_ai.evaluation.score.label": "relevant", "gen_ai.evaluation.explanation": "answers the question" }),
        evaluation({ "gen_ai.evaluation.name": "toxicity", "gen_ai.evaluation.score.label": "x".repeat(300) }),
        evaluation({ "gen_ai.evaluation.name": "n".repeat(150), "gen_ai.evaluation.score.value": "3", "gen_ai.evaluation.explanation": "e".repeat(3000) }),
        evaluation({ "gen_ai.evaluation.name": "no score" }),
        evaluation({ "gen_ai.evaluation.score.value": 1 }),
        evaluation({ "gen_ai.evaluation.name": "nan", "gen_ai.evaluation.score.value": Number.NaN }),
        { name: "exception", timeMs: t0, attributes: attrs({ "exception.message": "not a score" }) },
      ],
    });
    expect(payloadOf(evaluated).scores).toEqual([
      { name: "relevance", value: 0.9, comment: "relevant: answers the question", source: "otel" },
      { name: "toxicity", value: "x".repeat(200), source: "otel" },
      { name: "n".repeat(100), value: 3, comment: "e".repeat(2000), source: "otel" },
    ]);
    expect(payloadOf(span({ parentSpanId: "00f067aa0ba902b7" }))).not.toHaveProperty("scores");
  });

  it("the session: gen_ai.conversation.id or session.id, the root's first; one that cannot be an identifier is left out", () => {
    const runStart = (...spans: OtlpSpan[]) => mapExport(spans).traces[0]!.runStart;
    const child = span({ spanId: "1111111111111111", parentSpanId: "b7ad6b7169203331", attributes: { "session.id": "from-child" } });
    expect(runStart(child).session_id).toBe("from-child");
    expect(runStart(child, span({ attributes: { "gen_ai.conversation.id": "from-root" } })).session_id).toBe("from-root");
    expect(runStart(span({ attributes: { "gen_ai.conversation.id": "x".repeat(300) } })).session_id).toBe("x".repeat(200));
    expect(runStart(span({ attributes: { "session.id": "bad\u0000id" } }))).not.toHaveProperty("session_id");
    expect(runStart(span())).not.toHaveProperty("session_id");
  });

  it("malformed spans are refused with the reason; the rest of the export maps", () => {
    const m = mapExport([span({ traceId: "" }), span({ spanId: null }), span({ parentSpanId: null }), span({ endMs: NaN }), span({ startMs: Date.UTC(2300, 0, 1) }), span()]);
    expect(m.refused.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]);
    expect(m.refused[0]!.reason).toContain("traceId");
    expect(m.refused[3]!.reason).toContain("endTimeUnixNano");
    expect(m.traces).toHaveLength(1);
  });
});

describe("OTLP/JSON", () => {
  it("ids in hex or base64; int64 as strings or numbers; snake_case names; enums as names; unknown fields ignored", () => {
    const b64Trace = Buffer.from(T, "hex").toString("base64");
    expect(jsonIdHex(T.toUpperCase(), 16)).toBe(T);
    expect(jsonIdHex(b64Trace, 16)).toBe(T);
    expect(jsonIdHex("0".repeat(32), 16)).toBe("");
    expect(jsonIdHex("xyz", 16)).toBeNull();
    const body = JSON.stringify({
      resource_spans: [{ resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] }, futureField: 1,
        scope_spans: [{ scope: { name: "s" }, spans: [{
          trace_id: b64Trace, span_id: "b7ad6b7169203331", name: "x", start_time_unix_nano: "1764000000000000000", endTimeUnixNano: 1764000001000000000,
          attributes: [{ key: "n", value: { intValue: "42" } }, { key: "l", value: { arrayValue: { values: [{ boolValue: true }] } } }, { key: "__proto__", value: { kvlistValue: { values: [{ key: "a", value: { doubleValue: 1.5 } }] } } }],
          status: { code: "STATUS_CODE_ERROR", message: "m" },
        }] }] }],
    });
    const [s] = decodeJsonExport(new TextEncoder().encode(body));
    expect(s).toMatchObject({ traceId: T, spanId: "b7ad6b7169203331", parentSpanId: "", startMs: 1764000000000, endMs: 1764000001000, statusCode: 2, scope: "s" });
    expect(s!.attributes.get("n")).toBe(42);
    expect(s!.attributes.get("l")).toEqual([true]);
    expect(s!.attributes.get("__proto__")).toEqual({ a: 1.5 });
    expect(s!.resource.get("service.name")).toBe("svc");
  });
});

describe("OTLP protobuf", () => {
  it("decodes every AnyValue kind as an SDK encodes it (the stock schema, with its oneof), zero values and an empty AnyValue included", () => {
    // Encoded with the unmodified .proto files, as every SDK's encoder does; decoded by ours (AnyValue without its oneof).
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => path.join(path.dirname(fileURLToPath(import.meta.url)), "proto", target);
    root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto");
    const request = root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
    const attrs: [string, Record<string, unknown>][] = [
      ["s", { stringValue: "text" }], ["empty", { stringValue: "" }], ["i", { intValue: 42 }], ["zero", { intValue: 0 }], ["neg", { intValue: -7 }],
      ["d", { doubleValue: 1.5 }], ["d0", { doubleValue: 0 }], ["t", { boolValue: true }], ["f", { boolValue: false }],
      ["bytes", { bytesValue: Buffer.from([1, 2, 255]) }], ["none", {}],
      ["list", { arrayValue: { values: [{ stringValue: "a" }, { intValue: 1 }, { boolValue: false }] } }],
      ["kv", { kvlistValue: { values: [{ key: "x", value: { doubleValue: 2.5 } }, { key: "__proto__", value: { stringValue: "" } }] } }],
    ];
    const body = request.encode(request.fromObject({
      resourceSpans: [{ resource: { attributes: [{ key: "service.name", value: { stringValue: "svc" } }] }, scopeSpans: [{ scope: { name: "s" }, spans: [{
        traceId: Buffer.from(T, "hex"), spanId: Buffer.from("b7ad6b7169203331", "hex"), name: "x", startTimeUnixNano: "1764000000000000000", endTimeUnixNano: "1764000001000000000",
        attributes: attrs.map(([key, value]) => ({ key, value })),
      }] }] }],
    })).finish();
    const [s] = decodeProtobufExport(body);
    expect(Object.fromEntries(s!.attributes)).toEqual({
      s: "text", empty: "", i: 42, zero: 0, neg: -7, d: 1.5, d0: 0, t: true, f: false, bytes: "AQL/", none: null,
      list: ["a", 1, false], kv: Object.fromEntries([["x", 2.5], ["__proto__", ""]]),
    });
    expect(s!.resource.get("service.name")).toBe("svc");
  });
});

describe("the mapping is total: only malformed spans are refused", () => {
  it("every event it maps passes checkBuiltEvent and parseIngestEvent alike; values out of range are left out or cut, not refused", () => {
    const values: AttrValue[] = [0, 7, 2 ** 53, -1, 1.5, 1e300, "12", "x", null, true];
    const huge = "y".repeat(MAX_STRING_CHARS + 10);
    const names = ["ok", "a\u0000b", "x\ud800", `${"n".repeat(199)}😀`, huge];
    for (const v of values) {
      for (const name of names) {
        const evaluations = Array.from({ length: 150 }, (_, i) => ({
          name: "gen_ai.evaluation.result", timeMs: t0, attributes: attrs({ "gen_ai.evaluation.name": `e${i}`, "gen_ai.evaluation.score.value": v }),
        }));
        const evs = events(
          span({
            name, statusCode: 2, statusMessage: huge, resource: attrs({ "service.name": name }), events: evaluations, scope: huge,
            attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name, "gen_ai.conversation.id": name, "gen_ai.input.messages": huge, "gen_ai.system_instructions": huge },
          }),
          span({
            spanId: "1111111111111111", parentSpanId: "b7ad6b7169203331", name,
            attributes: { "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": v, "gen_ai.usage.cost": v, "gen_ai.response.time_to_first_chunk": v, "gen_ai.input.messages": "a\u0000b" },
          }),
          span({ spanId: "2222222222222222", parentSpanId: "b7ad6b7169203331", attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name, "gen_ai.tool.call.result": { deep: v } } }),
        );
        for (const e of evs) {
          const full = parseIngestEvent(e);
          const fast = checkBuiltEvent(e as unknown as IngestEvent);
          if (Either.isLeft(full)) throw new Error(`${String(e.event_type)} refused by the schema: ${full.left.message}`);
          if (Either.isLeft(fast)) throw new Error(`${String(e.event_type)} refused by checkBuiltEvent: ${fast.left.message}`);
          expect(fast.right.payload).toEqual(full.right.payload);
        }
        const llm = evs.find((e) => e.span_id === "1111111111111111")!.payload as Record<string, unknown>;
        expect(llm.prompt_tokens).toBe(v === 0 || v === 7 || v === "12" ? Number(v) : undefined);
        const agent = evs[0]!.agent_name as string;
        expect(agent).toBe(name === "ok" ? "ok" : name.startsWith("nnn") ? "n".repeat(199) : name === huge ? huge.slice(0, 200) : "unknown_service");
      }
    }
  });
});

describe("hostile values through the framework conventions", () => {
  it("message events, node ids, smolagents' span names and the AI SDK's usage: every event passes the schema; a name that is no identifier is passed over", () => {
    const huge = "y".repeat(MAX_STRING_CHARS + 10);
    const deep = JSON.parse("[".repeat(200) + "1" + "]".repeat(200)) as AttrValue;
    for (const bad of ["a\u0000b", "x\ud800", huge]) {
      for (const n of [-1, 1.5, 2 ** 60, 1e300, "NaN"] as AttrValue[]) {
        const ev = (name: string, a: Record<string, AttrValue>) => ({ name, timeMs: t0, attributes: attrs(a) });
        const evs = events(
          span({ name: `${bad}.run`, scope: "openinference.instrumentation.smolagents", resource: attrs({ "service.name": "svc" }), attributes: { "openinference.span.kind": "AGENT", "graph.node.id": bad } }),
          span({
            spanId: "1111111111111111", parentSpanId: "b7ad6b7169203331", name: "chat",
            attributes: { "ai.operationId": "ai.generateText.doGenerate", "ai.usage.inputTokens": n, "ai.usage.inputTokenDetails.cacheReadTokens": n, "ai.response.msToFirstChunk": n },
            events: [ev("gen_ai.user.message", { content: bad }), ev("gen_ai.user.message", { content: deep }), ev("gen_ai.choice", { message: huge })],
          }),
          span({ spanId: "2222222222222222", parentSpanId: "b7ad6b7169203331", attributes: { "ai.operationId": "ai.toolCall", "ai.toolCall.name": bad, "ai.toolCall.args": deep }, events: [ev("gen_ai.choice", { message: bad })] }),
        );
        for (const e of evs) {
          const full = parseIngestEvent(e);
          const fast = checkBuiltEvent(e as unknown as IngestEvent);
          if (Either.isLeft(full)) throw new Error(`${String(e.event_type)} refused by the schema: ${full.left.message}`);
          if (Either.isLeft(fast)) throw new Error(`${String(e.event_type)} refused by checkBuiltEvent: ${fast.left.message}`);
        }
        // A node id or span name that could not be an identifier names no agent: the run takes the service's name.
        expect(evs[0]!.agent_name).toBe(bad === huge ? huge.slice(0, 200) : "svc");
        const llm = evs.find((e) => e.span_id === "1111111111111111")!.payload as Record<string, unknown>;
        // Counts must be whole and at most 2^53 - 1; a time to first chunk in ms is rounded (1.5 ms → 2).
        expect([llm.prompt_tokens, llm.cached_tokens, llm.time_to_first_token_ms]).toEqual([undefined, undefined, n === 1.5 ? 2 : undefined]);
      }
    }
  });
});

describe("times", () => {
  it("nanoseconds past 2^53 convert exactly: a span ending at .123 ms stays in that millisecond", () => {
    expect(nanosToMs("1764000000123000000")).toBe(1764000000123);
    expect(Math.floor(nanosToMs("1764000000122999000"))).toBe(1764000000122); // 1 µs before the next ms
    expect(nanosToMs({ toNumber: () => 0, toString: () => "1764000000123000001" })).toBeCloseTo(1764000000123.000001, 6);
    expect(nanosToMs("12abc")).toBeNaN();
    expect(nanosToMs("")).toBeNaN();
    expect(nanosToMs(1.5e6)).toBe(1.5);
  });

  it("a protobuf fixed64 (high and low words) converts as its exact integer does, up to 2^64 - 1", () => {
    const viaBigInt = (high: number, low: number) => {
      const ns = (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
      return Number(ns / 1_000_000n) + Number(ns % 1_000_000n) / 1e6;
    };
    const words = [0, 1, 999_999, 1_000_000, 0x7fffffff, 0x80000000, 0xffffffff, -1, 410_000_000, 1_764_000_000];
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 0x7fffffff) * 2;
    for (let i = 0; i < 2000; i++) words.push(random() | 0);
    for (let i = 0; i < words.length; i++) {
      for (const high of [words[i]!, 410_000_000 + (i % 1000), 0xffffffff]) {
        const low = words[(i * 7) % words.length]!;
        expect(nanosToMs({ high, low, unsigned: true }), `${high} ${low}`).toBe(viaBigInt(high, low));
      }
    }
  });
});

describe("which failure fails the run", () => {
  const ROOT = "00f067aa0ba902b7";
  const AGENT = "b7ad6b7169203331";
  const failed = { statusCode: 2, statusMessage: "Error in agent run: 500" };
  const runEnd = (...spans: OtlpSpan[]) => events(...spans).find((e) => e.event_type === "run_end" || e.event_type === "error")!;

  it("an OK workflow root around a failed named agent (the OpenAI Agents SDK): the run fails with the agent's error", () => {
    const root = span({ spanId: ROOT, name: "Agent workflow", attributes: { "openinference.span.kind": "AGENT" } });
    const agent = span({ parentSpanId: ROOT, name: "support-bot", attributes: { "openinference.span.kind": "AGENT", "agent.name": "support-bot" }, ...failed });
    expect(runEnd(root, agent)).toMatchObject({ event_type: "error", payload: { error_message: "Error in agent run: 500" } });
  });

  it("a failed sub-agent under a named agent that ended OK, and a failed tool, leave the run successful", () => {
    const root = span({ spanId: ROOT, name: "invoke_agent planner", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" } });
    const sub = span({ parentSpanId: ROOT, name: "invoke_agent searcher", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "searcher" }, ...failed });
    expect(runEnd(root, sub).event_type).toBe("run_end");
    const workflow = span({ spanId: ROOT, name: "workflow" });
    const agent = span({ spanId: AGENT, parentSpanId: ROOT, name: "invoke_agent planner", attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner" } });
    const nested = span({ spanId: "1111111111111111", parentSpanId: AGENT, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "searcher" }, ...failed });
    const tool = span({ spanId: "2222222222222222", parentSpanId: ROOT, attributes: { "gen_ai.operation.name": "execute_tool" }, ...failed });
    expect(runEnd(workflow, agent, nested, tool).event_type).toBe("run_end");
  });

  it("the Vercel AI SDK: the functionId names the agent, the call's usage on ai.generateText is not an LLM call of its own", () => {
    const root = span({ spanId: ROOT, name: "ai.generateText", attributes: { "ai.operationId": "ai.generateText", "ai.telemetry.functionId": "support-bot", "ai.model.id": "gpt-4o-mini", "ai.usage.inputTokens": 221, "ai.prompt": '{"prompt":"hi"}', "ai.response.text": "hello" } });
    const call = span({ parentSpanId: ROOT, name: "ai.generateText.doGenerate", attributes: { "ai.operationId": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini", "ai.model.provider": "openai.chat", "ai.usage.inputTokens": 107, "ai.usage.outputTokens": 13, "ai.usage.inputTokenDetails.cacheReadTokens": 64, "ai.usage.outputTokenDetails.reasoningTokens": 5, "ai.response.msToFirstChunk": 250.4 } });
    const all = events(root, call);
    expect(all[0]).toMatchObject({ event_type: "run_start", agent_name: "support-bot", payload: { input: '{"prompt":"hi"}' } });
    expect(all.find((e) => e.span_id === call.spanId)!.payload).toMatchObject({ kind: "llm", model: "gpt-4o-mini", provider: "openai.chat", prompt_tokens: 107, completion_tokens: 13, cached_tokens: 64, reasoning_tokens: 5, time_to_first_token_ms: 250 });
    expect(all.find((e) => e.span_id === ROOT && e.event_type === "step")!.payload).toMatchObject({ kind: "agent" });
    expect(all.find((e) => e.span_id === ROOT && e.event_type === "step")!.payload).not.toHaveProperty("prompt_tokens");
    expect(runEnd(root, call)).toMatchObject({ agent_name: "support-bot", payload: { output: "hello" } });
  });
});

describe("content and agents from framework conventions", () => {
  const ev = (name: string, a: Record<string, AttrValue>) => ({ name, timeMs: t0, attributes: attrs(a) });

  it("messages sent as span events (Strands): the LLM call's input messages and answer, a tool's arguments and result", () => {
    const chat = span({ name: "chat", attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini" }, events: [
      ev("gen_ai.system.message", { content: "Answer briefly." }), ev("gen_ai.user.message", { content: '[{"text": "Weather?"}]' }),
      ev("gen_ai.choice", { message: '[{"text": "Sunny."}]', finish_reason: "end_turn" }),
    ] });
    expect(payloadOf(chat)).toMatchObject({
      input_preview: JSON.stringify([{ role: "system", content: "Answer briefly." }, { role: "user", content: '[{"text": "Weather?"}]' }]),
      output_preview: '[{"text": "Sunny."}]',
    });
    const tool = span({ name: "execute_tool weather", attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather" }, events: [
      ev("gen_ai.tool.message", { content: '{"city": "Paris"}', role: "tool" }), ev("gen_ai.choice", { message: "sunny" }),
    ] });
    expect(payloadOf(tool)).toMatchObject({ tool_name: "weather", input_preview: '{"city": "Paris"}', output_preview: "sunny" });
  });

  it("smolagents names its agent only in the run span's name", () => {
    const root = span({ name: "support_bot.run", scope: "openinference.instrumentation.smolagents", attributes: { "openinference.span.kind": "AGENT" } });
    expect(events(root)[0]).toMatchObject({ agent_name: "support_bot" });
    const other = span({ name: "support_bot.run", attributes: { "openinference.span.kind": "AGENT" } }); // another scope: not a name
    expect(events(other)[0]).toMatchObject({ agent_name: "checkout" });
  });
});
