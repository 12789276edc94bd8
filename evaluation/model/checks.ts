/**
 * Built-in evaluators (docs/EVALUATION.md): checks that need no LLM, each a pure function of the judged run.
 * What they compare is the run's output as text (strings as they are, anything else as JSON); `expected` defaults
 * to the dataset item's expected output where there is one. Regular expressions run on RE2 (re2js: linear time,
 * so no pattern a member writes can hold the event loop), and values are cut to MAX_CHECKED_CHARS first.
 */
import { Either } from "effect";
import { distance } from "fastest-levenshtein";
import { RE2JS } from "re2js";
import { schemaProblem, validatorOf } from "../../core/json-schema.js";
import { ValidationError } from "../../core/errors.js";
import type { OutputDefinition, Verdict } from "./output.js";
import type { EvaluationSubject } from "./subject.js";
import type { CheckDefinition } from "../../stores/evaluation/shapes.js";
export type { CheckDefinition } from "../../stores/evaluation/shapes.js";


export const CHECK_KINDS = ["exact_match", "contains", "regex", "json_valid", "json_schema", "numeric_closeness", "string_similarity", "latency_below", "cost_below"] as const;
export const MAX_CHECKED_CHARS = 100_000;
/** Levenshtein distance is quadratic: similarity compares at most this much of each side. */
export const MAX_SIMILARITY_CHARS = 5_000;
const MAX_PATTERN_CHARS = 1_000;

/** The score a check gives: a similarity is a number from 0 to 1, every other check true or false. */
export const checkOutput = (c: CheckDefinition): OutputDefinition => (c.kind === "string_similarity" ? { type: "numeric", min: 0, max: 1 } : { type: "boolean" });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const finite = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** Reads `check` of a POST /api/evaluators body; a ValidationError names the field. */
export function parseCheck(raw: unknown): CheckDefinition {
  const fail = (field: string, message: string): never => {
    throw new ValidationError({ field: `check${field}`, message: `check${field} ${message}` });
  };
  if (!isObject(raw)) return fail("", `must be an object like {"kind": "contains", "value": "…"}; kinds: ${CHECK_KINDS.join(", ")}`);
  switch (raw.kind) {
    case "exact_match":
      return { kind: "exact_match", ...(raw.expected !== undefined ? { expected: raw.expected } : {}) };
    case "contains":
      if (typeof raw.value !== "string" || raw.value === "" || raw.value.length > 1_000) return fail(".value", "must be text of 1 to 1000 characters");
      return { kind: "contains", value: raw.value, case_sensitive: raw.case_sensitive === true };
    case "regex":
      if (typeof raw.pattern !== "string" || raw.pattern === "" || raw.pattern.length > MAX_PATTERN_CHARS) return fail(".pattern", `must be a regular expression of 1 to ${MAX_PATTERN_CHARS} characters`);
      try {
        RE2JS.compile(raw.pattern);
      } catch (err) {
        return fail(".pattern", `is not a regular expression RE2 accepts (no backreferences or lookaround): ${(err as Error).message.slice(0, 200)}`);
      }
      return { kind: "regex", pattern: raw.pattern };
    case "json_valid":
      return { kind: "json_valid" };
    case "json_schema":
      validatorOf(raw.schema, "check.schema");
      return { kind: "json_schema", schema: raw.schema as Record<string, unknown> };
    case "numeric_closeness":
      if (!finite(raw.tolerance) || raw.tolerance < 0) return fail(".tolerance", "must be a number of at least 0");
      if (raw.expected !== undefined && !finite(raw.expected)) return fail(".expected", "must be a finite number");
      return { kind: "numeric_closeness", tolerance: raw.tolerance, ...(raw.expected !== undefined ? { expected: raw.expected as number } : {}) };
    case "string_similarity":
      if (raw.expected !== undefined && typeof raw.expected !== "string") return fail(".expected", "must be text");
      return { kind: "string_similarity", ...(raw.expected !== undefined ? { expected: raw.expected as string } : {}) };
    case "latency_below":
      if (!finite(raw.max_ms) || raw.max_ms <= 0) return fail(".max_ms", "must be a number of milliseconds above 0");
      return { kind: "latency_below", max_ms: raw.max_ms };
    case "cost_below":
      if (!finite(raw.max_usd) || raw.max_usd < 0) return fail(".max_usd", "must be a number of dollars of at least 0");
      return { kind: "cost_below", max_usd: raw.max_usd };
  }
  return fail(".kind", `must be one of ${CHECK_KINDS.join(", ")}`);
}

const asText = (v: unknown): string => (typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v) ?? "");
const cut = (s: string, max = MAX_CHECKED_CHARS) => (s.length > max ? s.slice(0, max) : s);

/** Runs a check on a subject: the verdict, or why it could not be judged (no output, no expected value). */
export function runCheck(c: CheckDefinition, s: EvaluationSubject): Either.Either<Verdict, string> {
  const ok = (value: number | boolean, explanation: string) => Either.right<Verdict>({ value, explanation });
  const output = s.output;
  const text = cut(asText(output));
  const expected = "expected" in c && c.expected !== undefined ? c.expected : s.expected_output;
  switch (c.kind) {
    case "latency_below":
      if (s.duration_ms === null) return Either.left("the run has not ended: it has no duration");
      return ok(s.duration_ms < c.max_ms, `took ${s.duration_ms} ms; the limit is ${c.max_ms} ms`);
    case "cost_below":
      return ok(s.cost_usd < c.max_usd, `cost $${s.cost_usd}; the limit is $${c.max_usd}`);
  }
  if (output === undefined) return Either.left("the run has no output to check");
  switch (c.kind) {
    case "exact_match": {
      if (expected === undefined) return Either.left("no expected value: give check.expected, or judge a dataset item's run");
      const same = typeof expected === "string" ? text === expected : JSON.stringify(output) === JSON.stringify(expected);
      return ok(same, same ? "the output equals the expected value" : "the output differs from the expected value");
    }
    case "contains": {
      const found = c.case_sensitive ? text.includes(c.value) : text.toLowerCase().includes(c.value.toLowerCase());
      return ok(found, `the output ${found ? "contains" : "does not contain"} ${JSON.stringify(c.value)}`);
    }
    case "regex": {
      const found = RE2JS.compile(c.pattern).matcher(text).find();
      return ok(found, `the output ${found ? "matches" : "does not match"} /${c.pattern}/`);
    }
    case "json_valid":
    case "json_schema": {
      let value: unknown = output;
      if (typeof output === "string") {
        try {
          value = JSON.parse(output);
        } catch {
          return ok(false, "the output is not valid JSON");
        }
      }
      if (c.kind === "json_valid") return ok(true, "the output is valid JSON");
      const problem = schemaProblem(c.schema, value, "check.schema");
      return ok(problem === undefined, problem ? `the output does not match the schema: ${problem}` : "the output matches the schema");
    }
    case "numeric_closeness": {
      const got = typeof output === "number" ? output : Number(text.trim());
      const want = typeof expected === "number" ? expected : Number(asText(expected).trim());
      if (expected === undefined || !Number.isFinite(want)) return Either.left("no expected number: give check.expected, or judge a dataset item's run");
      if (!Number.isFinite(got)) return ok(false, "the output is not a number");
      const close = Math.abs(got - want) <= c.tolerance;
      return ok(close, `${got} is ${Math.abs(got - want)} from ${want}; the tolerance is ${c.tolerance}`);
    }
    case "string_similarity": {
      if (expected === undefined) return Either.left("no expected text: give check.expected, or judge a dataset item's run");
      const a = text.slice(0, MAX_SIMILARITY_CHARS);
      const b = asText(expected).slice(0, MAX_SIMILARITY_CHARS);
      const longest = Math.max(a.length, b.length);
      const similarity = longest === 0 ? 1 : 1 - distance(a, b) / longest;
      return ok(Math.round(similarity * 1e4) / 1e4, `normalised Levenshtein similarity to the expected text`);
    }
  }
}
