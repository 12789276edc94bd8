import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("REDIS_PREFIX", () => {
  it("is `runwatch` unless set, and refuses what cannot be a key or channel prefix, naming the variable", () => {
    expect(loadConfig({}).redisPrefix).toBe("runwatch");
    expect(loadConfig({ REDIS_PREFIX: "staging-eu:rw" }).redisPrefix).toBe("staging-eu:rw");
    for (const bad of ["with space", "glob*", "x".repeat(65), "ü"]) {
      expect(() => loadConfig({ REDIS_PREFIX: bad })).toThrow(/^REDIS_PREFIX must be/);
    }
  });
});

describe("RUNWATCH_OPERATOR_JUDGE_KEY", () => {
  it("is admins unless set; all, off, or project slugs (with admins); anything else is refused, naming the variable", () => {
    expect(loadConfig({}).operatorJudgeKey).toEqual({ kind: "some", admins: true, slugs: new Set() });
    expect(loadConfig({ RUNWATCH_OPERATOR_JUDGE_KEY: "all" }).operatorJudgeKey).toEqual({ kind: "all" });
    expect(loadConfig({ RUNWATCH_OPERATOR_JUDGE_KEY: "off" }).operatorJudgeKey).toEqual({ kind: "some", admins: false, slugs: new Set() });
    expect(loadConfig({ RUNWATCH_OPERATOR_JUDGE_KEY: " Team-A, admins ,ml-2" }).operatorJudgeKey).toEqual({ kind: "some", admins: true, slugs: new Set(["team-a", "ml-2"]) });
    for (const bad of ["all, team-a", "off,admins", "team a", "-x", "team_a"]) {
      expect(() => loadConfig({ RUNWATCH_OPERATOR_JUDGE_KEY: bad })).toThrow(/^RUNWATCH_OPERATOR_JUDGE_KEY must be/);
    }
  });
});

describe("RUNWATCH_EVALUATION_DAILY_BUDGET_USD, RUNWATCH_EVALUATION_CALLS_PER_MINUTE", () => {
  it("are $10 and 600 unless set, and refuse a negative budget or a rate that is not 1 to 100,000 calls", () => {
    expect(loadConfig({}).evaluationCaps).toEqual({ daily_budget_usd: 10, calls_per_minute: 600 });
    expect(loadConfig({ RUNWATCH_EVALUATION_DAILY_BUDGET_USD: "0", RUNWATCH_EVALUATION_CALLS_PER_MINUTE: "3" }).evaluationCaps).toEqual({ daily_budget_usd: 0, calls_per_minute: 3 });
    expect(() => loadConfig({ RUNWATCH_EVALUATION_DAILY_BUDGET_USD: "-1" })).toThrow(/^RUNWATCH_EVALUATION_DAILY_BUDGET_USD/);
    for (const bad of ["0", "1.5", "100001"]) expect(() => loadConfig({ RUNWATCH_EVALUATION_CALLS_PER_MINUTE: bad })).toThrow(/^RUNWATCH_EVALUATION_CALLS_PER_MINUTE/);
  });
});
