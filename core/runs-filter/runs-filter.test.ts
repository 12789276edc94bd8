/**
 * The string form of the runs filter: what each token means (a table), the round trip parse(format(f)) = f over
 * filters generated from the RunsFilter Schema itself, and hostile input — every refusal a ValidationError naming
 * the token, never another throw, and quick.
 */
import { Arbitrary, FastCheck as fc, Schema } from "effect";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../errors.js";
import { checkRunsFilter, formatRunsFilter, MAX_FILTER_CHARS, MAX_FILTER_TOKENS, parseRunsFilter, parseRunsSort, RunsFilter, RunsSort } from "./index.js";

const refusal = (input: string): ValidationError => {
  try {
    parseRunsFilter(input);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe("filter");
    return err as ValidationError;
  }
  throw new Error(`${JSON.stringify(input)} was accepted`);
};

describe("parseRunsFilter", () => {
  it.each<[string, RunsFilter]>([
    ["", {}],
    ["   ", {}],
    ["status:error", { status: ["error"] }],
    ["status:error,running", { status: ["error", "running"] }],
    ["-status:error", { status_not: ["error"] }],
    ["status!=success", { status_not: ["success"] }],
    ["agent:refund", { agent: ["refund"] }],
    ['agent:"refund bot"', { agent: ["refund bot"] }],
    ["env:production", { environment: ["production"] }],
    ["environment:staging -env:dev", { environment: ["staging"], environment_not: ["dev"] }],
    ["release:v1.2", { release: ["v1.2"] }],
    ["user:cust-42", { end_user: "cust-42" }],
    ["session:abc", { session: "abc" }],
    ["version:7", { config_version: 7 }],
    ["model:gpt-4o", { model: ["gpt-4o"] }],
    ["-model:gpt-4o-mini", { model_not: ["gpt-4o-mini"] }],
    ["tag:vip", { tags_all: ["vip"] }],
    ["tag:vip tag:beta", { tags_all: ["vip", "beta"] }],
    ["tag:vip,beta", { tags_any: ["vip", "beta"] }],
    ["-tag:vip", { tags_none: ["vip"] }],
    ['tag:"a,b"', { tags_all: ["a,b"] }],
    ["meta.customer:acme", { metadata: [{ key: "customer", op: "=", value: "acme" }] }],
    ["meta.customer!=acme", { metadata: [{ key: "customer", op: "!=", value: "acme" }] }],
    ["-meta.customer:acme", { metadata: [{ key: "customer", op: "!=", value: "acme" }] }],
    ["meta.customer:*", { metadata: [{ key: "customer", op: "exists" }] }],
    ["-meta.customer:*", { metadata: [{ key: "customer", op: "not_exists" }] }],
    ['meta.customer:"*"', { metadata: [{ key: "customer", op: "=", value: "*" }] }],
    ["meta.tier>2", { metadata: [{ key: "tier", op: ">", value: 2 }] }],
    ["meta.tier<=-1.5", { metadata: [{ key: "tier", op: "<=", value: -1.5 }] }],
    ['meta."my key":x', { metadata: [{ key: "my key", op: "=", value: "x" }] }],
    ["meta.a.b:c:d", { metadata: [{ key: "a.b", op: "=", value: "c:d" }] }],
    ["cost>0.05", { cost: { min: 0.05, min_exclusive: true } }],
    ["cost<1", { cost: { max: 1, max_exclusive: true } }],
    ["cost>=$0.05 cost<=1", { cost: { min: 0.05, max: 1 } }],
    ["cost:0", { cost: { min: 0, max: 0 } }],
    ["duration>10s", { duration_ms: { min: 10_000, min_exclusive: true } }],
    ["duration<=1.5m duration>=250ms", { duration_ms: { min: 250, max: 90_000 } }],
    ["duration<2h", { duration_ms: { max: 7_200_000, max_exclusive: true } }],
    ["duration>500", { duration_ms: { min: 500, min_exclusive: true } }],
    ["tokens>=1000", { tokens: { min: 1000 } }],
    ["score.correctness<0.5", { score: [{ name: "correctness", max: 0.5, max_exclusive: true }] }],
    ["score.correctness>0.2 score.correctness<=0.8", { score: [{ name: "correctness", min: 0.2, min_exclusive: true, max: 0.8 }] }],
    ["score.helpful:*", { score: [{ name: "helpful" }] }],
    ['score."my score":1', { score: [{ name: "my score", min: 1, max: 1 }] }],
    ["has:error", { has_error: true }],
    ["-has:error", { has_error: false }],
    ["since:24h", { since: "24h" }],
    ["since:15m", { since: "15m" }],
    ["from:2026-01-01", { from: "2026-01-01T00:00:00.000Z" }],
    ["to:2026-01-02T10:00Z", { to: "2026-01-02T10:00:00.000Z" }],
    ["from:2026-01-02T10:00:00.5+02:00", { from: "2026-01-02T08:00:00.500Z" }],
    ["from:2026-01-02T10:00", { from: "2026-01-02T10:00:00.000Z" }],
    ["id:0a1b", { id_prefix: "0a1b" }],
    ["is:experiment", { include_experiments: true }],
    ["is:judge,experiment", { include_judge: true, include_experiments: true }],
    ["timeout", { text: ["timeout"] }],
    ['"connection reset" refund', { text: ["connection reset", "refund"] }],
    ["-timeout", { text_not: ["timeout"] }],
    ['-"rate limit"', { text_not: ["rate limit"] }],
    ["12:30", { text: ["12:30"] }],
    ['"status:error"', { text: ["status:error"] }],
    ["-", { text: ["-"] }],
    ["a=b", { text: ["a=b"] }],
    ['""', {}],
    ['"a "b" c"', { text: ["a b c"] }],
    ["STATUS:error Agent:x", { status: ["error"], agent: ["x"] }],
    ["status:error\tagent:x\nenv:prod", { status: ["error"], agent: ["x"], environment: ["prod"] }],
    ['agent:"say \\"hi\\"" agent:"back\\\\slash" agent:"c:\\dir"', { agent: ['say "hi"', "back\\slash", "c:\\dir"] }],
    // SQL-looking text is just values: an agent named x' and three free-text words.
    ["agent:x' OR 1=1 --", { agent: ["x'"], text: ["OR", "1=1"], text_not: ["-"] }],
    ["agent:'; DROP TABLE agent_runs; --", { agent: ["';"], text: ["DROP", "TABLE", "agent_runs;"], text_not: ["-"] }],
  ])("%s", (input, expected) => {
    expect(parseRunsFilter(input)).toEqual(expected);
    expect(Schema.is(RunsFilter)(parseRunsFilter(input))).toBe(true);
  });

  it("the team's question reads as one filter", () => {
    expect(parseRunsFilter("status:error agent:refund env:production meta.customer:X since:12h")).toEqual({
      status: ["error"], agent: ["refund"], environment: ["production"], since: "12h",
      metadata: [{ key: "customer", op: "=", value: "X" }],
    });
  });

  it.each<[string, RegExp]>([
    ["colour:red", /^unknown field "colour" in "colour:red"/],
    ["cost>abc", /^cost needs a number: "cost>abc"$/],
    ["status:done", /^status must be one of running, success, error, waiting_for_input: "status:done"$/],
    ["status:", /^status needs a value: "status:"$/],
    ["status:error,,running", /needs a value between the commas/],
    ["duration>fast", /^duration needs a duration like/],
    ["tokens>1e999", /^tokens needs a number/],
    ["from:yesterday", /^from needs a date/],
    ["from:2026-02-30", /^from needs a date/],
    ["from:1960-01-01", /^from needs a date/],
    ["since:2026-01-01", /^since needs a duration/],
    ["since:0h", /^since needs a duration/],
    ["version:0", /^version needs a whole number/],
    ["version:1.5", /^version needs a whole number/],
    ["meta:x", /^meta needs a key/],
    ["meta.:x", /^meta needs a key/],
    ["meta.tier>high", /^meta\.tier> needs a number/],
    ["-meta.tier>2", /^a comparison cannot be negated/],
    ["-cost>1", /^cost cannot be negated/],
    ["cost!=1", /^cost takes :, >, >=, < or <=, not !=/],
    ["cost>1 cost>=2", /^cost has that bound twice/],
    ["-user:x", /^user cannot be negated/],
    ["user:a user:b", /^user is given twice: "user:b"$/],
    ["status>error", /^status takes status: or status!=, not >/],
    ["status.x:y", /^unknown field "status\.x"/],
    ["tag:a,b tag:c,d", /^one tag:a,b list per filter/],
    ["has:score", /^has takes has:error/],
    ["is:prod", /^is takes is:experiment or is:judge/],
    ["score.x!=1", /not !=/],
    ["score:1", /^score needs a name/],
    ['agent:"refund bot', /^unclosed quote in "agent:\\"refund bot"$/],
    ['x "a "b" c', /^unclosed quote in "\\"a \\"b\\" c"$/],
    ["agent:a\u0000b", /control character \(U\+0000\) at position 7/],
    ["agent:\u001b[31m", /control character \(U\+001B\)/],
    ['agent:"a\nb"', /^agent needs a value without control characters/],
    ["agent:\ud800", /lone UTF-16 surrogate/],
    [`agent:${"x".repeat(201)}`, /^a value is over 200 characters in "agent:x{74}…"$/],
    [`${"y".repeat(201)}`, /^free text must be at most 200 characters/],
    [Array.from({ length: MAX_FILTER_TOKENS + 1 }, (_, i) => `w${i}`).join(" "), /^the filter has more than 30 terms$/],
    ["x".repeat(MAX_FILTER_CHARS + 1), /^the filter is 2001 characters long; at most 2000$/],
  ])("refuses %j", (input, message) => {
    expect(refusal(input).message).toMatch(message);
  });

  it("answers hostile input with a ValidationError or a literal value, in bounded time", () => {
    const hostile = [
      "a ".repeat(10_000), // 10,000 tokens: refused on its length before any token is read
      " ".repeat(2_000) + "x",
      '"'.repeat(1_999),
      '"\\"'.repeat(600),
      `agent:${'"a"'.repeat(600)}`,
      "-".repeat(2_000),
      ":".repeat(2_000),
      `meta.${"a.".repeat(900)}:x`,
      "status:" + "error,".repeat(300),
      "\u0000".repeat(2_000),
      "😀".repeat(1_000),
      "agent:x' OR 1=1 --",
      "agent:\\",
      'meta."":x',
      "meta.\"a\":\"\"",
    ];
    const started = performance.now();
    for (const input of hostile) {
      try {
        expect(Schema.is(RunsFilter)(parseRunsFilter(input))).toBe(true);
      } catch (err) {
        expect(err, JSON.stringify(input.slice(0, 50))).toBeInstanceOf(ValidationError);
      }
    }
    // Each is read in one bounded pass: the lot in well under a second, even on a busy machine.
    expect(performance.now() - started).toBeLessThan(1_000);
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 3_000 }), (input) => {
      try {
        return Schema.is(RunsFilter)(parseRunsFilter(input));
      } catch (err) {
        return err instanceof ValidationError && err.field === "filter" && err.message.length < 400;
      }
    }), { numRuns: 2_000 });
    // Long inputs made of the characters the grammar gives a meaning to.
    fc.assert(fc.property(fc.stringMatching(/^[-ab:"\\,. *<>=!]{1000,2100}$/), (input) => {
      try {
        return Schema.is(RunsFilter)(parseRunsFilter(input));
      } catch (err) {
        return err instanceof ValidationError && err.field === "filter";
      }
    }), { numRuns: 300 });
  });
});

describe("formatRunsFilter", () => {
  /** A generated filter with a few of its fields, whose string form is within the bounds the parser enforces. */
  const filters = Arbitrary.make(RunsFilter).chain((f) =>
    fc.shuffledSubarray(Object.keys(f), { maxLength: 6 }).map((keys) => Object.fromEntries(keys.map((k) => [k, f[k as keyof RunsFilter]])) as RunsFilter),
  ).filter((f) => {
    const s = formatRunsFilter(f);
    return s.length <= MAX_FILTER_CHARS && s.split(" ").length <= MAX_FILTER_TOKENS; // a quoted space only makes the count safer
  });

  it("gives a string that parses back to the same filter, for every filter the Schema accepts", () => {
    fc.assert(fc.property(filters, (f) => {
      expect(Schema.is(RunsFilter)(f)).toBe(true);
      expect(parseRunsFilter(formatRunsFilter(f))).toStrictEqual(f);
    }), { numRuns: 1_500 });
  });

  it("formats what the parser read as one canonical string", () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (input) => {
      let f: RunsFilter;
      try {
        f = parseRunsFilter(input);
      } catch {
        return;
      }
      const once = formatRunsFilter(f);
      expect(parseRunsFilter(once)).toStrictEqual(f);
      expect(formatRunsFilter(parseRunsFilter(once))).toBe(once);
    }), { numRuns: 2_000 });
  });

  it.each<[RunsFilter, string]>([
    [{}, ""],
    [{ status: ["error"], agent: ["refund"], environment: ["production"], metadata: [{ key: "customer", op: "=", value: "X" }], since: "12h" },
      "since:12h status:error agent:refund env:production meta.customer:X"],
    [{ agent: ["refund bot"], text: ["a:b", "-x"], text_not: ["y z"] }, 'agent:"refund bot" "a:b" "-x" -"y z"'],
    [{ cost: { min: 0.05, min_exclusive: true, max: 1 }, duration_ms: { min: 90_000 }, tokens: { max: 5, max_exclusive: true } }, "cost>0.05 cost<=1 duration>=90s tokens<5"],
    [{ duration_ms: { min: 1500, max: 1500 } }, "duration:1500ms"],
    [{ from: "2026-01-01T00:00:00.000Z", to: "2026-01-02T10:00:00.000Z" }, "from:2026-01-01 to:2026-01-02T10:00Z"],
    [{ metadata: [{ key: "my key", op: "exists" }, { key: "t", op: "=", value: "*" }] }, 'meta."my key":* meta.t:"*"'],
    [{ score: [{ name: "c" }], has_error: false, include_judge: true }, "score.c:* -has:error is:judge"],
  ])("%j → %s", (f, s) => {
    expect(formatRunsFilter(f)).toBe(s);
    expect(parseRunsFilter(s)).toEqual(f);
  });
});

describe("checkRunsFilter", () => {
  it("takes a filter given as data, and refuses one the string form could not hold, naming the field", () => {
    const f = { status: ["error"], metadata: [{ key: "tier", op: ">", value: 2 }], cost: { min: 0.05, min_exclusive: true } };
    expect(checkRunsFilter(f)).toEqual(f);
    for (const [bad, field] of [
      [{ status: ["done"] }, "filter.status.0"],
      [{ since: "yesterday" }, "filter.since"],
      [{ agent: [] }, "filter.agent"],
      [{ agent: ["a\u0000"] }, "filter.agent.0"],
      [{ cost: {} }, "filter.cost"],
      [{ cost: { min_exclusive: true, max: 1 } }, "filter.cost"],
      [{ metadata: [{ key: "k", op: ">", value: "x" }] }, "filter.metadata.0"],
      [{ from: "2026-01-01" }, "filter.from"],
      [{ colour: "red" }, "filter.colour"],
      ["status:error", "filter"],
    ] as const) {
      try {
        checkRunsFilter(bad);
        throw new Error(`accepted ${JSON.stringify(bad)}`);
      } catch (err) {
        expect(err, JSON.stringify(bad)).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).field, JSON.stringify(bad)).toMatch(new RegExp(`^${field.replaceAll(".", "\\.")}`));
      }
    }
  });
});

describe("parseRunsSort", () => {
  it("reads each sort and order, start_time desc by default", () => {
    expect(parseRunsSort(undefined, undefined)).toEqual({ field: "start_time", order: "desc" });
    for (const field of ["start_time", "duration", "cost", "tokens", "score.correctness", "score.my score"]) {
      for (const order of ["asc", "desc"]) {
        expect(parseRunsSort(field, order)).toEqual({ field, order });
        expect(Schema.is(RunsSort)(parseRunsSort(field, order))).toBe(true);
      }
    }
  });

  it.each([["colour", undefined, "sort"], ["score.", undefined, "sort"], [`score.${"x".repeat(201)}`, undefined, "sort"], ["cost", "up", "order"]])(
    "refuses sort=%s order=%s naming %s", (sort, order, field) => {
      expect(() => parseRunsSort(sort, order)).toThrow(ValidationError);
      try {
        parseRunsSort(sort, order);
      } catch (err) {
        expect((err as ValidationError).field).toBe(field);
      }
    });
});
