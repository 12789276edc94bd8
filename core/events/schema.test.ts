import { Either } from "effect";
import { describe, expect, it } from "vitest";
import { decodeStorable, parseIngestEvent } from "./schema.js";
import { makeStorable } from "./storable.js";

const ok = (input: unknown) => {
  const r = parseIngestEvent(input);
  if (Either.isLeft(r)) throw new Error(`expected valid, got ${r.left.message}`);
  return r.right;
};
const fieldOf = (input: unknown) => {
  const r = parseIngestEvent(input);
  if (Either.isRight(r)) throw new Error("expected a validation error");
  return { field: r.left.field, message: r.left.message };
};

describe("parseIngestEvent", () => {
  it("accepts each of the seven event types with their payloads", () => {
    const cases = [
      { event_type: "run_start", agent_name: "a", payload: { framework: "langgraph", input: { q: 1 } } },
      { event_type: "run_end", payload: { output: {}, prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, cost_usd: 0.01, model: "gpt-4o" } },
      { event_type: "error", payload: { error_type: "ValueError", error_message: "x", traceback: "tb" } },
      { event_type: "step", payload: { node_name: "plan", phase: "start", duration_ms: 0, output: {} } },
      { event_type: "tool_call", payload: { tool_name: "search", phase: "end", input_preview: "i", output_preview: "o", duration_ms: 5 } },
      { event_type: "human_input_requested", payload: { question: "ok?", context: { a: 1 }, channel: "dashboard" } },
      { event_type: "human_input_received", payload: { response: "yes", responded_by: "ann" } },
    ];
    for (const c of cases) expect(ok({ sdk_run_id: "r1", ...c }).event_type).toBe(c.event_type);
  });

  it("keeps unknown payload fields", () => {
    expect(ok({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "end", extra: [1] } }).payload.extra).toEqual([1]);
  });

  it("names the field that is wrong", () => {
    expect(fieldOf({ sdk_run_id: "r", payload: {} }).field).toBe("event_type");
    expect(fieldOf({ event_type: "nope", sdk_run_id: "r", payload: {} }).field).toBe("event_type");
    expect(fieldOf({ event_type: "step", payload: {} }).field).toBe("sdk_run_id");
    expect(fieldOf({ event_type: "step", sdk_run_id: "", payload: {} }).field).toBe("sdk_run_id");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r" }).field).toBe("payload");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: [] }).field).toBe("payload");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "middle" } }).field).toBe("payload.phase");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", payload: { phase: "start" } }).field).toBe("payload.node_name");
    expect(fieldOf({ event_type: "run_end", sdk_run_id: "r", payload: { total_tokens: 1.5 } }).field).toBe("payload.total_tokens");
    expect(fieldOf({ event_type: "run_end", sdk_run_id: "r", payload: { cost_usd: -1 } }).field).toBe("payload.cost_usd");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", occurred_at: "yesterday", payload: { node_name: "n", phase: "end" } }).field).toBe("occurred_at");
    expect(fieldOf({ event_type: "human_input_received", sdk_run_id: "r", payload: {} }).field).toBe("payload.response");
  });

  it("requires agent_name with run_start only", () => {
    expect(fieldOf({ event_type: "run_start", sdk_run_id: "r", payload: {} })).toEqual({ field: "agent_name", message: "agent_name is required with run_start" });
    expect(ok({ event_type: "run_end", sdk_run_id: "r", payload: {} }).agent_name).toBeUndefined();
  });

  it("rejects non-objects without throwing", () => {
    for (const bad of [null, 3, "x", [], undefined]) expect(Either.isLeft(parseIngestEvent(bad))).toBe(true);
  });

  it("accepts timestamps with offsets and validates event_id as a UUID", () => {
    expect(ok({ event_type: "step", sdk_run_id: "r", occurred_at: "2026-11-23T10:00:00+02:00", payload: { node_name: "n", phase: "end" } }).occurred_at).toBe("2026-11-23T10:00:00+02:00");
    expect(fieldOf({ event_type: "step", sdk_run_id: "r", event_id: "x", payload: { node_name: "n", phase: "end" } }).field).toBe("event_id");
  });
});

describe("the run's tags, metadata, end user, environment and release", () => {
  const step = { event_type: "step", sdk_run_id: "r", payload: { node_name: "n", phase: "end" } };

  it("are taken on any event, as sent", () => {
    const e = ok({ ...step, tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, trial: false }, end_user: "cust-42", environment: "production", release: "v1.2.0" });
    expect(e).toMatchObject({ tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2, trial: false }, end_user: "cust-42", environment: "production", release: "v1.2.0" });
    expect(ok({ ...step, tags: [], metadata: {} })).toMatchObject({ tags: [], metadata: {} });
    const at = (n: number, c = "x") => c.repeat(n);
    ok({ ...step, tags: Array.from({ length: 50 }, (_, i) => `${i}${at(197)}`), end_user: at(200), environment: at(100), release: at(200) });
    ok({ ...step, metadata: Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}${at(197)}`, at(1024)])) });
  });

  it("over a bound, or of another type, are refused naming the field", () => {
    const refused = (fields: Record<string, unknown>) => fieldOf({ ...step, ...fields });
    expect(refused({ tags: Array.from({ length: 51 }, (_, i) => `t${i}`) })).toEqual({ field: "tags", message: "tags: must hold at most 50 tags" });
    expect(refused({ tags: "vip" })).toEqual({ field: "tags", message: "tags: must be an array of strings" });
    expect(refused({ tags: ["ok", ""] }).field).toBe("tags.1");
    expect(refused({ tags: ["ok", "x".repeat(201)] })).toEqual({ field: "tags.1", message: "tags.1: must be at most 200 characters" });
    expect(refused({ tags: [3] })).toEqual({ field: "tags.0", message: "tags.0: must be a string" });
    for (const nested of [{ a: 1 }, [1], null, "x".repeat(1025), Number.NaN]) {
      expect(refused({ metadata: { ok: 1, customer: nested } }).field, JSON.stringify(nested)).toBe("metadata.customer");
    }
    expect(refused({ metadata: { customer: { a: 1 } } }).message).toMatch(/^metadata\.customer: must be a string of at most 1024 characters, a finite number or a boolean/);
    expect(refused({ metadata: { ["k".repeat(201)]: 1 } }).field).toBe(`metadata.${"k".repeat(201)}`);
    expect(refused({ metadata: { "": 1 } })).toEqual({ field: "metadata", message: "metadata: a metadata key must not be empty" });
    expect(refused({ metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, i])) })).toEqual({ field: "metadata", message: "metadata: must hold at most 64 keys" });
    expect(refused({ metadata: ["a"] })).toEqual({ field: "metadata", message: "metadata: must be a JSON object" });
    expect(refused({ end_user: "" })).toEqual({ field: "end_user", message: "end_user: must not be empty" });
    expect(refused({ end_user: "u".repeat(201) }).field).toBe("end_user");
    expect(refused({ environment: "e".repeat(101) })).toEqual({ field: "environment", message: "environment: must be at most 100 characters" });
    expect(refused({ release: 3 })).toEqual({ field: "release", message: "release: must be a string" });
    // Identifiers: a repaired end user would name another.
    expect(refused({ end_user: "cust\u0000" }).field).toBe("end_user");
  });
});

describe("parseIngestEvent's guard path", () => {
  /** A small deterministic PRNG, so a failure names a reproducible case. */
  const random = (() => {
    let x = 0x9e3779b9;
    return () => ((x = (x * 1664525 + 1013904223) >>> 0) / 2 ** 32);
  })();
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  const values = [
    undefined, null, true, 0, 1, -1, 1.5, 2 ** 53, 2 ** 53 - 1, 1e308, 1_000_001, 0.01, "", "x", "end", "start", "middle", "llm", "gpt-4o",
    "a".repeat(300), "2026-11-23T10:00:00Z", "2026-11-23T10:00:00+02:00", "2026-13-45T99:00:00Z", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z",
    "0190a6b2-7c1e-7d2f-8a3b-123456789abc", "not-a-uuid", [], [1], {}, { a: 1 }, "run_start", "step", "nope",
    ["vip", "beta"], [""], { customer: "acme", n: 2, ok: true }, { customer: { nested: 1 } }, { "": 1 },
  ];
  const fields: Record<string, readonly string[]> = {
    envelope: [
      "event_type", "sdk_run_id", "payload", "occurred_at", "agent_name", "event_id", "span_id", "parent_span_id", "session_id", "config_version", "extra",
      "tags", "metadata", "end_user", "environment", "release",
    ],
    payload: [
      "node_name", "phase", "kind", "output", "input", "model", "provider", "duration_ms", "prompt_tokens", "completion_tokens", "total_tokens",
      "cached_tokens", "cost_usd", "finish_reason", "tool_name", "input_preview", "output_preview", "question", "context", "channel", "response",
      "responded_by", "error_type", "error_message", "traceback", "framework", "unknown_field",
    ],
  };
  const bases = [
    { event_type: "run_start", sdk_run_id: "r", agent_name: "a", payload: { framework: "langgraph", input: { q: 1 } } },
    { event_type: "run_end", sdk_run_id: "r", payload: { output: {}, prompt_tokens: 1, completion_tokens: 2, cost_usd: 0.01, model: "gpt-4o" } },
    { event_type: "error", sdk_run_id: "r", payload: { error_type: "ValueError", error_message: "x" } },
    { event_type: "step", sdk_run_id: "r", span_id: "s1", payload: { node_name: "call", phase: "end", kind: "llm", model: "m", prompt_tokens: 3, duration_ms: 4 } },
    { event_type: "tool_call", sdk_run_id: "r", payload: { tool_name: "search", phase: "end", input_preview: "i", duration_ms: 5 } },
    { event_type: "human_input_requested", sdk_run_id: "r", payload: { question: "ok?", context: { a: 1 } } },
    { event_type: "human_input_received", sdk_run_id: "r", payload: { response: "yes" } },
  ];
  /** The base with one to three fields (of the envelope or the payload) set to another value or removed. */
  const mutant = (): Record<string, unknown> => {
    const e = structuredClone(pick(bases)) as Record<string, unknown>;
    for (let n = 1 + Math.floor(random() * 3); n > 0; n--) {
      const inPayload = random() < 0.6 && typeof e.payload === "object" && e.payload !== null && !Array.isArray(e.payload);
      const target = (inPayload ? e.payload : e) as Record<string, unknown>;
      const key = pick(fields[inPayload ? "payload" : "envelope"]!);
      const v = pick(values);
      if (v === undefined) delete target[key];
      else target[key] = structuredClone(v);
    }
    return e;
  };

  it("accepts and refuses exactly as the decoding walk does, with the same value and the same named field", () => {
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const input = mutant();
      const fast = parseIngestEvent(structuredClone(input));
      let slow: ReturnType<typeof decodeStorable>;
      try {
        slow = decodeStorable(makeStorable(structuredClone(input)));
      } catch (err) {
        expect(Either.isLeft(fast), JSON.stringify(input)).toBe(true);
        expect(Either.isLeft(fast) && fast.left.message).toBe((err as Error).message);
        refused++;
        continue;
      }
      expect(Either.isRight(fast), JSON.stringify(input)).toBe(Either.isRight(slow));
      if (Either.isRight(fast) && Either.isRight(slow)) {
        expect(fast.right, JSON.stringify(input)).toEqual(slow.right);
        accepted++;
      } else if (Either.isLeft(fast) && Either.isLeft(slow)) {
        expect({ field: fast.left.field, message: fast.left.message }, JSON.stringify(input)).toEqual({ field: slow.left.field, message: slow.left.message });
        refused++;
      }
    }
    // Both kinds are well represented, so the comparison means something either way.
    expect(accepted).toBeGreaterThan(3000);
    expect(refused).toBeGreaterThan(3000);
  });
});
