/** Error budgets and multi-window burn rates against hand-computed figures (SRE workbook thresholds 14.4 and 6). */
import { describe, expect, it } from "vitest";
import { objectiveInWords, sloStatus, sloWindows } from "./budget.js";

describe("SLO budget and burn rates", () => {
  it("reads its own window and the four alert windows", () => {
    expect(sloWindows({ window_days: 30 })).toEqual([2_592_000, 3600, 300, 21_600, 1800]);
  });

  it("matches a hand-computed reference", () => {
    // 99% over 30 days: 10,000 runs allow 100 bad; 50 bad spend half the budget.
    // 1 h: 15 bad of 100 = 15% = 15× the 1% allowance; 5 min: 2 of 10 = 20×  → fast (both ≥ 14.4).
    // 6 h: 30 of 600 = 5× (< 6); 30 min: 9 of 100 = 9×                        → not slow (the long window is under 6).
    const s = sloStatus({ target: 0.99 }, [{ total: 10_000, bad: 50 }, { total: 100, bad: 15 }, { total: 10, bad: 2 }, { total: 600, bad: 30 }, { total: 100, bad: 9 }]);
    expect(s.sli).toBeCloseTo(0.995, 12);
    expect(s.budget.allowed_bad).toBeCloseTo(100, 9);
    expect(s.budget.spent).toBeCloseTo(0.5, 9);
    expect(s.budget.remaining).toBeCloseTo(0.5, 9);
    expect(s.burn["1h"].rate).toBeCloseTo(15, 9);
    expect(s.burn["5m"].rate).toBeCloseTo(20, 9);
    expect(s.burn["6h"].rate).toBeCloseTo(5, 9);
    expect(s.burn["30m"].rate).toBeCloseTo(9, 9);
    expect(s.alerts).toEqual({ fast: true, slow: false });
  });

  it("a short window that recovered stops the alert; no runs burn nothing", () => {
    const s = sloStatus({ target: 0.95 }, [{ total: 1000, bad: 100 }, { total: 100, bad: 80 }, { total: 20, bad: 0 }, { total: 300, bad: 100 }, { total: 50, bad: 20 }]);
    expect(s.alerts).toEqual({ fast: false, slow: true }); // 5 min at 0×; 6 h at 6.67×, 30 min at 8×
    expect(s.budget.remaining).toBeCloseTo(-1, 9); // 100 bad where 50 were allowed: overspent
    const none = sloStatus({ target: 0.99 }, [{ total: 0, bad: 0 }, { total: 0, bad: 0 }, { total: 0, bad: 0 }, { total: 0, bad: 0 }, { total: 0, bad: 0 }]);
    expect(none).toMatchObject({ sli: null, budget: { spent: 0, remaining: 1 }, alerts: { fast: false, slow: false } });
  });

  it("says the objective in words", () => {
    expect(objectiveInWords({ objective: "success_rate", target: 0.99, threshold_seconds: null, score_name: null, window_days: 30 })).toBe("99% of runs succeed over 30 days");
    expect(objectiveInWords({ objective: "latency", target: 0.955, threshold_seconds: 10, score_name: null, window_days: 1 })).toBe("95.5% of runs end within 10 s over 1 day");
    expect(objectiveInWords({ objective: "score_mean", target: 0.8, threshold_seconds: null, score_name: "correctness", window_days: 30 })).toBe("mean correctness ≥ 0.8 over 30 days");
  });

  it("a score's mean as a budget: the shortfall from 1 its scores may add up to", () => {
    // 10 scores averaging 0.7 against a mean of at least 0.8: shortfall 3 where 10 × 0.2 = 2 are allowed.
    const t = { total: 10, bad: 3 };
    const s = sloStatus({ target: 0.8 }, [t, t, t, t, t]);
    expect(s.sli).toBeCloseTo(0.7, 9); // the mean itself
    expect(s.budget.allowed_bad).toBeCloseTo(2, 9);
    expect(s.budget.remaining).toBeCloseTo(-0.5, 9);
    expect(s.burn["1h"].rate).toBeCloseTo(1.5, 9); // (1 − 0.7) / (1 − 0.8)
  });
});
