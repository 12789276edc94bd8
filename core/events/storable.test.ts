import { Either } from "effect";
import { describe, expect, it } from "vitest";
import { parseIngestEvent } from "./schema.js";
import { MAX_DEPTH, MAX_KEYS, MAX_STRING_CHARS, makeStorable, repairString } from "./storable.js";

const fieldOf = (input: unknown) => {
  const r = parseIngestEvent(input);
  return Either.isLeft(r) ? r.left.field : "accepted";
};

describe("storable values", () => {
  it("repairs NUL and lone surrogates in strings and keys to U+FFFD, keeping well-formed pairs", () => {
    expect(repairString("a\u0000b\ud800c\udc00d😀")).toBe("a\uFFFDb\uFFFDc\uFFFDd😀");
    const input = { payload: { text: "x\u0000", list: ["ok", "\ud83d"], ["k\u0000"]: { deep: "\udfff" } } };
    expect(makeStorable(input)).toEqual({ payload: { text: "x\uFFFD", list: ["ok", "\uFFFD"], ["k\uFFFD"]: { deep: "\uFFFD" } } });
    expect(input.payload.text).toBe("x\u0000"); // the input is not changed
  });

  it("returns the very same value when nothing needs repair (no copy on the hot path)", () => {
    const v = { payload: { a: [1, "two", { three: null }] } };
    expect(makeStorable(v)).toBe(v);
  });

  it("keeps a __proto__ key a plain key", () => {
    const v = JSON.parse('{"payload":{"__proto__":{"polluted":"\\u0000"},"x":"\\u0000"}}');
    const out = makeStorable(v) as { payload: Record<string, unknown> };
    expect(Object.getPrototypeOf(out.payload)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(out.payload)).toEqual(["__proto__", "x"]);
  });

  it("refuses bad characters in identifiers, naming the field", () => {
    for (const f of ["sdk_run_id", "agent_name", "event_type"]) {
      expect(() => makeStorable({ [f]: "a\u0000" })).toThrow(expect.objectContaining({ field: f }));
    }
    // The same name inside the payload is content, and is repaired.
    expect(makeStorable({ payload: { agent_name: "a\u0000" } })).toEqual({ payload: { agent_name: "a\uFFFD" } });
  });

  it("bounds depth, string length and key count", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < MAX_DEPTH; i++) deep = [deep];
    expect(() => makeStorable({ payload: deep })).toThrow(/nests deeper than 64/);
    let ok: unknown = "leaf";
    for (let i = 0; i < MAX_DEPTH - 2; i++) ok = [ok];
    expect(() => makeStorable({ payload: ok })).not.toThrow();
    expect(() => makeStorable({ payload: { s: "x".repeat(MAX_STRING_CHARS + 1) } })).toThrow(expect.objectContaining({ field: "payload.s" }));
    const many = Object.fromEntries(Array.from({ length: MAX_KEYS + 1 }, (_, i) => [`k${i}`, i]));
    expect(() => makeStorable({ payload: many })).toThrow(/more than 10000 object keys/);
  });

  it("the event schema bounds numbers and dates", () => {
    const step = (extra: Record<string, unknown>, payload: Record<string, unknown> = {}) =>
      ({ event_type: "step", sdk_run_id: "r", ...extra, payload: { node_name: "n", phase: "end", ...payload } });
    expect(fieldOf(step({ occurred_at: "2200-12-31T23:59:59.999Z" }))).toBe("accepted");
    expect(fieldOf(step({ occurred_at: "2201-01-01T00:00:00Z" }))).toBe("occurred_at");
    expect(fieldOf(step({ occurred_at: "1970-01-01T00:00:00Z" }))).toBe("accepted");
    expect(fieldOf(step({ occurred_at: "1969-12-31T23:59:59Z" }))).toBe("occurred_at");
    expect(fieldOf(step({}, { duration_ms: Number.MAX_SAFE_INTEGER }))).toBe("accepted");
    expect(fieldOf(step({}, { duration_ms: 2 ** 53 }))).toBe("payload.duration_ms");
    expect(fieldOf(step({}, { duration_ms: -1 }))).toBe("payload.duration_ms");
    expect(fieldOf(step({ config_version: 4294967295 }))).toBe("accepted");
    expect(fieldOf(step({ config_version: 4294967296 }))).toBe("config_version");
    const end = (payload: Record<string, unknown>) => ({ event_type: "run_end", sdk_run_id: "r", payload });
    expect(fieldOf(end({ cost_usd: 0 }))).toBe("accepted");
    expect(fieldOf(end({ cost_usd: 1e6 }))).toBe("accepted");
    expect(fieldOf(end({ cost_usd: 1e6 + 1 }))).toBe("payload.cost_usd");
    expect(fieldOf(end({ cost_usd: -0.5 }))).toBe("payload.cost_usd");
    expect(fieldOf(end({ prompt_tokens: 1.5 }))).toBe("payload.prompt_tokens");
  });
});
