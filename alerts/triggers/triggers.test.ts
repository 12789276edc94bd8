/** Trigger configs (effect Schemas, errors naming the field) and the event evaluators' decisions. */
import { describe, expect, it } from "vitest";
import { Either } from "effect";
import { newRunRecord } from "../../core/events/run.js";
import type { AlertRule } from "../model.js";
import type { PipelineEvent } from "../../core/events/schema.js";
import { TriggerRegistry } from "../registry.js";
import { decodeTriggerConfig } from "./define.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { parseRuleForm } from "../rules.js";
import { toolFailure } from "./tool-error.js";
import { periodStart } from "./agent-budget-exceeded.js";
import { checkScoreAverage } from "./score-below.js";
import { loadNotificationSettings } from "../settings.js";

const triggers = new TriggerRegistry();
const def = (t: string) => triggers.get(t)!;
const rule = (trigger_type: string, raw: Record<string, unknown> = {}): AlertRule => ({
  id: 1, project_id: 7, name: "r", trigger_type, channel: "dashboard", target: "",
  config: Either.getOrThrow(decodeTriggerConfig(def(trigger_type), raw)),
});
const run = (over: Partial<ReturnType<typeof newRunRecord>> = {}) => ({ ...newRunRecord({ project_id: 7, user_id: 7 }, "run-1", "0190a0a0-0000-7000-8000-00000000000a", "2026-11-23T10:00:00.000Z"), agent_name: "planner", ...over });
let n = 0;
const ev = (event_type: PipelineEvent["event_type"], payload: Record<string, unknown>): PipelineEvent => ({
  event_id: `0190a0a0-0000-7000-8000-${String(++n).padStart(12, "0")}`, project_id: 7, user_id: 7, run_id: "0190a0a0-0000-7000-8000-00000000000a", sdk_run_id: "run-1",
  event_type, agent_name: null, payload, occurred_at: "2026-11-23T10:00:01.000Z", received_at: "2026-11-23T10:00:01.000Z", config_version: null, duplicate: false,
});

describe("trigger configs", () => {
  it("every trigger decodes an empty-but-valid config or names the missing field", () => {
    for (const t of triggers.all()) {
      const r = decodeTriggerConfig(t, {});
      if (Either.isLeft(r)) expect(r.left.field, t.type).toMatch(/^config\.\w+$/);
    }
  });

  it("defaults are applied and bad values are refused with the field's label", () => {
    expect(Either.getOrThrow(decodeTriggerConfig(def("error_rate_above"), { threshold_pct: 20 }))).toMatchObject({ threshold_pct: 20, window_minutes: 15, min_runs: 10 });
    expect(Either.getOrThrow(decodeTriggerConfig(def("agent_budget_exceeded"), {}))).toMatchObject({ period: "day" });
    expect(decodeTriggerConfig(def("run_cost_above"), { threshold_usd: 0 })).toEqual(Either.left({ field: "config.threshold_usd", message: "Threshold (USD): the threshold must be greater than 0" }));
    expect(decodeTriggerConfig(def("run_duration_above"), {})).toEqual(Either.left({ field: "config.seconds", message: "Longer than (seconds) is required" }));
    expect(decodeTriggerConfig(def("agent_budget_exceeded"), { period: "week" })).toEqual(Either.left({ field: "config.period", message: 'Budget period: must be "day" or "month"' }));
    expect(Either.isLeft(decodeTriggerConfig(def("run_error"), { cooldown_seconds: -1 }))).toBe(true);
    expect(Either.isLeft(decodeTriggerConfig(def("error_rate_above"), { threshold_pct: 101 }))).toBe(true);
    expect(Either.getOrThrow(decodeTriggerConfig(def("anomaly"), { metric: "latency_p95" }))).toMatchObject({ metric: "latency_p95", sensitivity: "medium", window_minutes: 30, min_runs: 10 });
    expect(decodeTriggerConfig(def("anomaly"), {})).toEqual(Either.left({ field: "config.metric", message: "Metric is required" }));
    expect(Either.getOrThrow(decodeTriggerConfig(def("anomaly"), { metric: "error_rate", environment: "production" }))).toMatchObject({ environment: "production" });
    expect(decodeTriggerConfig(def("anomaly"), { metric: "error_rate", environment: " production" })).toEqual(Either.left({ field: "config.environment", message: "Environment: must not start or end with spaces" }));
    expect(decodeTriggerConfig(def("anomaly"), { metric: "error_rate", environment: "e".repeat(101) })).toEqual(Either.left({ field: "config.environment", message: "Environment: must be at most 100 characters" }));
  });

  it("the rule form: numbers parsed, unknown trigger/channel and bad targets refused", async () => {
    const s = loadNotificationSettings({});
    const ok = await parseRuleForm({ name: " Costly ", trigger_type: "run_cost_above", channel: "email", target: "a@example.com; b@example.com", "config.threshold_usd": "1.5", enabled: "on" }, s, triggers);
    expect(ok).toEqual({ ok: true, value: { name: "Costly", trigger_type: "run_cost_above", channel: "email", target: "a@example.com, b@example.com", config: { threshold_usd: 1.5 }, enabled: true } });
    const bad = await parseRuleForm({ name: "x", trigger_type: "nope", channel: "pager", target: "" }, s, triggers);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(Object.keys(bad.errors).sort()).toEqual(["channel", "trigger_type"]);
    const priv = await parseRuleForm({ name: "x", trigger_type: "run_error", channel: "webhook", target: "http://127.0.0.1:8080/hook" }, s, triggers);
    expect(priv.ok ? "" : priv.errors.target).toMatch(/host 127\.0\.0\.1 is not allowed/);
    const nan = await parseRuleForm({ name: "x", trigger_type: "run_cost_above", channel: "dashboard", "config.threshold_usd": "abc" }, s, triggers);
    expect(nan.ok ? "" : nan.errors["config.threshold_usd"]).toBe("Threshold (USD) must be a number.");
  });
});

describe("event evaluators", () => {
  it("run_error: one firing per error event, agent and error_type filters", () => {
    const e = ev("error", { error_type: "TimeoutError", error_message: "slow" });
    const fired = def("run_error").evaluate!({ rule: rule("run_error"), run: run({ status: "error" }), events: [ev("step", { node_name: "a", phase: "end" }), e] }) as any[];
    expect(fired).toHaveLength(1);
    expect(fired[0]).toMatchObject({ key: `error:${e.event_id}`, message: "planner run run-1 failed: TimeoutError: slow" });
    expect(def("run_error").evaluate!({ rule: rule("run_error", { agent_name: "other" }), run: run(), events: [e] })).toBeUndefined();
    expect(def("run_error").evaluate!({ rule: rule("run_error", { error_type: "ValueError" }), run: run(), events: [e] })).toBeUndefined();
  });

  it("the LLM judge's own runs fire no production rule, unless a rule names the judge's agent", () => {
    const e = ev("error", { error_type: "TimeoutError", error_message: "the provider timed out" });
    const judgeRun = run({ status: "error", agent_name: JUDGE_AGENT });
    expect(def("run_error").evaluate!({ rule: rule("run_error"), run: judgeRun, events: [e] })).toBeUndefined();
    expect(def("run_error").evaluate!({ rule: rule("run_error", { agent_name: JUDGE_AGENT }), run: judgeRun, events: [e] })).toHaveLength(1);
  });

  it("waiting_for_input quotes the question", () => {
    const fired = def("waiting_for_input").evaluate!({ rule: rule("waiting_for_input"), run: run(), events: [ev("human_input_requested", { question: "Ship it?" })] }) as any[];
    expect(fired[0].message).toBe("planner run run-1 is waiting for your input: “Ship it?”");
  });

  it("run_cost_above fires once per run (stable key) only with a run_end over the threshold", () => {
    const r = rule("run_cost_above", { threshold_usd: 0.5 });
    const end = ev("run_end", { cost_usd: 0.75 });
    const a = def("run_cost_above").evaluate!({ rule: r, run: run({ cost_usd: 0.75 }), events: [end] }) as any[];
    expect(a[0]).toMatchObject({ key: "cost:0190a0a0-0000-7000-8000-00000000000a", message: "planner run run-1 cost $0.75, above the $0.50 threshold" });
    expect(def("run_cost_above").evaluate!({ rule: r, run: run({ cost_usd: 0.25 }), events: [end] })).toBeUndefined();
    expect(def("run_cost_above").evaluate!({ rule: r, run: run({ cost_usd: 0.75 }), events: [ev("step", { node_name: "a", phase: "end" })] })).toBeUndefined();
  });

  it("tool_error: the tool_call end's error field (or status: error) is the signal", () => {
    expect(toolFailure(ev("tool_call", { tool_name: "t", phase: "end", error: "KeyError: x" }))).toBe("KeyError: x");
    expect(toolFailure(ev("tool_call", { tool_name: "t", phase: "end", status: "error", output_preview: "boom" }))).toBe("boom");
    expect(toolFailure(ev("tool_call", { tool_name: "t", phase: "end", output_preview: "Error: not really" }))).toBeUndefined();
    expect(toolFailure(ev("tool_call", { tool_name: "t", phase: "start", error: "x" }))).toBeUndefined();
    const fired = def("tool_error").evaluate!({ rule: rule("tool_error", { tool_name: "search" }), run: run(), events: [
      ev("tool_call", { tool_name: "search", phase: "end", error: "Timeout" }), ev("tool_call", { tool_name: "calc", phase: "end", error: "Div0" }),
    ] }) as any[];
    expect(fired.map((f) => f.message)).toEqual(["Tool search failed in planner run run-1: Timeout"]);
  });

  it("budget periods are UTC days and months", () => {
    const now = new Date("2026-11-23T23:30:00-05:00"); // 04:30 UTC on the 24th
    expect(periodStart("day", now).toISOString()).toBe("2026-11-24T00:00:00.000Z");
    expect(periodStart("month", now).toISOString()).toBe("2026-11-01T00:00:00.000Z");
  });
});

describe("score_below", () => {
  it("needs a score name and a threshold; fires below it with enough scores, once per window slot", () => {
    expect(decodeTriggerConfig(def("score_below"), { threshold: 0.5 })).toEqual(Either.left({ field: "config.score_name", message: "Score name is required" }));
    expect(Either.isLeft(decodeTriggerConfig(def("score_below"), { score_name: "thumbs" }))).toBe(true);
    const r = rule("score_below", { score_name: "user_feedback", threshold: 0.5, min_scores: 3, window_minutes: 60 });
    expect(r.config).toMatchObject({ window_minutes: 60, min_scores: 3 });
    const now = new Date("2026-11-25T10:30:00.000Z");
    expect(checkScoreAverage(r, { average: 0.33, count: 2 }, now)).toBeUndefined(); // too few
    expect(checkScoreAverage(r, { average: 0.5, count: 10 }, now)).toBeUndefined(); // not below
    expect(checkScoreAverage(r, { average: NaN, count: 0 }, now)).toBeUndefined();
    const f = checkScoreAverage(r, { average: 1 / 3, count: 3 }, now)!;
    expect(f.message).toBe("Average user_feedback is 0.3333 (3 scores in the last 60 min), below 0.5");
    expect(f.key).toBe(checkScoreAverage(r, { average: 0.1, count: 9 }, new Date("2026-11-25T10:59:59.000Z"))!.key);
    expect(f.key).not.toBe(checkScoreAverage(r, { average: 0.1, count: 9 }, new Date("2026-11-25T11:00:00.000Z"))!.key);
  });
});

