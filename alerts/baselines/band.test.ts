/** Learned bands: the hour-of-week slot, the all-hours fallback, "learning", and the words of a firing. */
import { describe, expect, it } from "vitest";
import { hourOfWeek, learnBand, outsideBand, slotLabel } from "./band.js";
import { describeAnomaly, describeRecovery } from "../triggers/anomaly.js";
import { durationInWords } from "./change-points.js";

const stats = (slotN: number, allN: number, median = 4.6, mad = 0.1) => ({ agent_name: "a", slot: { n: slotN, median, mad }, all: { n: allN, median: 1, mad: 0.5 }, hour_volume: 20 });

describe("learned bands", () => {
  it("hour of the week counts from Monday 00:00 UTC", () => {
    expect(hourOfWeek(new Date("2026-11-23T00:30:00Z"))).toBe(0); // a Monday
    expect(hourOfWeek(new Date("2026-11-24T14:00:00Z"))).toBe(38);
    expect(hourOfWeek(new Date("2026-11-29T23:59:00Z"))).toBe(167);
    expect(slotLabel(38)).toBe("Tuesdays 14:00");
  });

  it("uses the slot with 3+ hours, every hour with 24+, and is learning below", () => {
    expect(learnBand(undefined, "latency_p95", "medium")).toEqual({ state: "learning", hours: 0, needed: 24 });
    expect(learnBand(stats(2, 23), "latency_p95", "medium")).toEqual({ state: "learning", hours: 23, needed: 24 });
    expect(learnBand(stats(2, 24), "latency_p95", "medium")).toMatchObject({ state: "ready", basis: "all", hours: 24, median: 1, spread: 0.5 * 1.4826 });
    const slot = learnBand(stats(4, 600), "latency_p95", "high");
    expect(slot).toMatchObject({ state: "ready", basis: "slot", hours: 4, median: 4.6 });
    if (slot.state === "ready") expect(slot.upper).toBeCloseTo(4.6 + 3 * 0.23, 9); // 5% of the median beats 1.4826 × MAD
    // A window of 5 runs where an hour has 20 is twice as noisy: twice the spread; one of 20 or more is not scaled.
    const spreadOf = (volume: number) => { const b = learnBand(stats(4, 600), "latency_p95", "high", volume); return b.state === "ready" ? b.spread : NaN; };
    expect(spreadOf(5)).toBeCloseTo(0.46, 9);
    expect(spreadOf(80)).toBeCloseTo(0.23, 9);
  });

  it("a score's mean is judged on its lower edge, every other metric on its upper one", () => {
    const b = learnBand({ agent_name: "a", slot: { n: 4, median: 0.85, mad: 0.02 }, all: { n: 600, median: 0.8, mad: 0.1 }, hour_volume: 40 }, "score_mean", "medium");
    if (b.state !== "ready") throw new Error("expected a band");
    expect(b.lower).toBeCloseTo(0.85 - 4 * 0.0425, 9); // 5% of 0.85 beats 1.4826 × 0.02
    expect([outsideBand(b, "score_mean", 0.6), outsideBand(b, "score_mean", 0.7), outsideBand(b, "score_mean", 2)]).toEqual([true, false, false]);
    expect([outsideBand(b, "tool_error_rate", 0.6), outsideBand(b, "tool_error_rate", 2)]).toEqual([false, true]);
  });

  it("a metric that never moved still gets the metric's floor", () => {
    const b = learnBand({ agent_name: "a", slot: { n: 4, median: 0, mad: 0 }, all: { n: 600, median: 0, mad: 0 }, hour_volume: 40 }, "error_rate", "medium");
    expect(b).toMatchObject({ state: "ready", spread: 0.01, upper: 0.04 });
  });

  it("says how far in words", () => {
    const band = { state: "ready", basis: "slot", hours: 4, median: 4.6, mad: 0.1, spread: 0.23, upper: 5.52, lower: 3.68 } as const;
    expect(describeAnomaly("refund-bot", "latency_p95", 14.2, band, 38)).toBe("refund-bot p95 latency 14.2 s, 3.1× its usual 4.6 s for Tuesdays 14:00");
    expect(describeAnomaly("b", "error_rate", 0.12, { ...band, median: 0 }, 38)).toBe("b error rate 12.0%, above its usual 0.0% for Tuesdays 14:00");
    expect(describeAnomaly("b", "cost_per_run", 0.5, { ...band, basis: "all", median: 0.1 }, 38)).toBe("b cost per run $0.50, 5.0× its usual $0.10 (any hour: too little history for this hour of the week yet)");
    expect(describeRecovery("b", "latency_p50", 0.4, { ...band, median: 0.35, upper: 0.6 }, 0)).toBe("b median latency is back to 400 ms, within its usual 350 ms for Mondays 00:00 (band up to 600 ms)");
    const score = { ...band, median: 0.85, spread: 0.05, upper: 1.05, lower: 0.65 };
    expect(describeAnomaly("b", { metric: "score_mean", score: "correctness" }, 0.4, score, 38)).toBe("b correctness mean 0.40, 0.5× its usual 0.85 for Tuesdays 14:00");
    expect(describeRecovery("b", { metric: "score_mean", score: "correctness" }, 0.8, score, 38)).toBe("b correctness mean is back to 0.80, within its usual 0.85 for Tuesdays 14:00 (band down to 0.65)");
    expect(describeAnomaly("b", "tool_error_rate", 0.3, { ...band, median: 0.02 }, 38)).toBe("b tool error rate 30.0%, 15.0× its usual 2.0% for Tuesdays 14:00");
    expect([durationInWords(40_000), durationInWords(40 * 60_000), durationInWords(5 * 3_600_000), durationInWords(3 * 86_400_000)]).toEqual(["40 s", "40 min", "5 h", "3 days"]);
  });
});
