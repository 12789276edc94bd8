/**
 * A bounded fuzz of the OTLP/HTTP receiver (400 exports, JSON and protobuf; seeded: FUZZ_SEED reproduces a run)
 * against a real server with the pipeline. The spans are well-formed, their attributes are not: the GenAI and
 * OpenInference keys the mapping reads, with counts as text, doubles, huge and negative numbers, cache reads past
 * the prompt, NUL and lone surrogates, long and nested values, failed spans and evaluation events. Every answer is a
 * 200 whose partial_success counts the spans it refused; every other span is stored, none is dead-lettered; a valid
 * export afterwards is stored within seconds.
 */
import { describe, expect, it } from "vitest";
import { listDeadLetters } from "../../stores/dead-letters.js";
import { waitForRun } from "./harness.js";
import { useFuzzTarget } from "./fuzz-target.js";
import { fuzzSeed, seededRandom } from "./seeded-random.js";
import { decodeProtobufResponse } from "../../otlp/otlp-protobuf.js";
import { exportJson, exportProtobuf, hexId, type AttrInput, type SpanSpec } from "./otlp-fixtures.js";

const SEED = fuzzSeed();
const EXPORTS = 400;

const server = useFuzzTarget();

const KEYS = [
  "gen_ai.operation.name", "gen_ai.agent.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.provider.name", "gen_ai.system",
  "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_creation.input_tokens",
  "gen_ai.usage.reasoning.output_tokens", "gen_ai.usage.prompt_tokens", "gen_ai.response.finish_reasons", "gen_ai.input.messages",
  "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.conversation.id",
  "openinference.span.kind", "llm.model_name", "llm.provider", "llm.token_count.prompt", "llm.token_count.completion", "input.value",
  "output.value", "session.id", "traceloop.span.kind", "llm.input_messages.0.message.content", "gen_ai.prompt.0.content", "tool.name",
];

function fuzzer(seed: number) {
  const r = seededRandom(seed);
  const text = (): string =>
    r.pick([
      () => "a\u0000b", () => "x\ud800", () => "ok", () => "", () => "z".repeat(r.int(20_000)), () => "1200", () => " 12 ", () => "-5", () => "1e400",
      () => r.pick(["chat", "embeddings", "execute_tool", "invoke_agent", "retrieval", "LLM", "TOOL", "AGENT", "tool", "workflow"]),
      () => r.pick(["gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro", "openai", "anthropic", "__proto__", "constructor"]),
      () => JSON.stringify([{ role: "user", content: "hi\u0000" }]),
      () => Array.from({ length: r.int(30) }, () => String.fromCharCode(r.int(0x10000))).join(""),
    ])();
  const value = (): AttrInput =>
    r.pick([
      text, text, text,
      () => r.pick([0, 1, -1, 12, 1500, 9000, 2 ** 31, 2 ** 53 - 1, 2 ** 62, -(2 ** 62), 1.5, 1e300, -0.25]),
      () => r.next() < 0.5,
      () => Array.from({ length: r.int(4) }, text),
    ])();
  const span = (traceId: string, spanId: string, parentSpanId: string | undefined, t0: number): SpanSpec => {
    const attributes: Record<string, AttrInput> = {};
    for (let i = 0, n = r.int(9); i < n; i++) attributes[r.pick(KEYS)] = value();
    const events: NonNullable<SpanSpec["events"]>[number][] = [];
    if (r.next() < 0.2) events.push({ name: "exception", attributes: { "exception.type": text(), "exception.message": text(), "exception.stacktrace": text() } });
    if (r.next() < 0.2) {
      events.push({ name: "gen_ai.evaluation.result", attributes: { "gen_ai.evaluation.name": text(), "gen_ai.evaluation.score.value": value(), "gen_ai.evaluation.score.label": text() } });
    }
    const start = t0 + r.int(1000);
    return {
      traceId, spanId, parentSpanId, name: text().slice(0, 300), attributes, events, startMs: start, endMs: start + r.int(5000),
      ...(r.next() < 0.2 ? { status: { code: 2, message: text() } } : {}),
    };
  };
  /** One export: 1–3 traces of 1–6 spans, the first of each its root (sometimes left out: a child-only export). */
  return (): { spans: SpanSpec[]; protobuf: boolean } => {
    const spans: SpanSpec[] = [];
    for (let t = 0, traces = 1 + r.int(3); t < traces; t++) {
      const traceId = hexId(16);
      const root = hexId(8);
      const t0 = Date.now() - 60_000;
      if (r.next() < 0.8) spans.push(span(traceId, root, undefined, t0));
      for (let i = 0, n = r.int(6); i < n; i++) spans.push(span(traceId, hexId(8), root, t0));
    }
    return { spans, protobuf: r.next() < 0.5 };
  };
}

describe(`OTLP fuzz (seed ${SEED})`, () => {
  it("every export is answered 200 with the refused spans counted; every other span is stored, none dead-lettered", async () => {
    const { srv, key, userId } = server;
    const next = fuzzer(SEED);
    const problems: string[] = [];
    let sentSpans = 0;
    let rejected = 0;
    let sent = 0;
    const worker = async () => {
      while (sent < EXPORTS) {
        sent++;
        const { spans, protobuf } = next();
        const res = await fetch(`${srv.url}/v1/traces`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": protobuf ? "application/x-protobuf" : "application/json" },
          body: protobuf ? (exportProtobuf(spans) as Uint8Array<ArrayBuffer>) : exportJson(spans),
        });
        const body = new Uint8Array(await res.arrayBuffer());
        if (res.status !== 200) {
          problems.push(`${res.status}: ${Buffer.from(body).toString("utf8").slice(0, 300)}`);
          continue;
        }
        sentSpans += spans.length;
        const partial = protobuf
          ? decodeProtobufResponse(body).partialSuccess
          : (JSON.parse(Buffer.from(body).toString("utf8")) as { partialSuccess?: { rejectedSpans?: string | number } }).partialSuccess;
        rejected += Number(partial?.rejectedSpans ?? 0);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    console.log(`otlp fuzz seed ${SEED}: ${sent} exports, ${sentSpans} spans, ${rejected} refused in partial_success`);
    expect(problems).toEqual([]);

    // A valid export afterwards is stored.
    const after = hexId(16);
    const ok = await fetch(`${srv.url}/v1/traces`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: exportJson([{ traceId: after, spanId: hexId(8), name: "after the fuzz", attributes: { "gen_ai.operation.name": "invoke_agent" } }]),
    });
    expect(ok.status).toBe(200);
    await waitForRun(srv.url, key, after, (b) => b.run.status === "success", 20_000);

    // Each taken span has exactly one end event (a step or tool_call with its span id); refused spans have none.
    const deadline = Date.now() + 30_000;
    let stored = 0;
    let letters: string[] = [];
    for (;;) {
      const rows = await srv.ports.clickhouse.query<{ n: unknown }>(
        "SELECT count(DISTINCT span_id) AS n FROM agent_events WHERE user_id = {uid:UInt64} AND event_type IN ('step', 'tool_call') AND sdk_run_id != {after:String}",
        { uid: userId, after },
      );
      stored = Number(rows[0]!.n);
      letters = (await listDeadLetters(srv.ports.sql, { projectId: userId, limit: 1000 })).map((d) => `${d.event_type} ${d.error}`);
      if (stored + rejected === sentSpans || Date.now() > deadline) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    expect(letters).toEqual([]);
    expect(stored).toBe(sentSpans - rejected);
  }, 150_000);
});
