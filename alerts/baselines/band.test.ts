/** Learned bands: the hour-of-week slot, the all-hours fallback, "learning", and the words of a firing. */
import { describe, expect, it } from "vitest";
import { BAND_RULES, hourOfWeek, learnBand, outsideBand, slotLabel } from "./band.js";
import { OutOfBandSince } from "./confirm.js";
import { describeAnomaly, describeRecovery } from "../triggers/anomaly.js";
import { changeInWords, durationInWords } from "./change-points.js";

const stats = (slotN: number, allN: number, median = 4.6, mad = 0.1) => ({ agent_name: "a", slot: { n: slotN, median, mad }, all: { n: allN, median: 1, mad: 0.5 }, hour_volume: 20 });
/** The slot's own spread, without shrinkage: the rules the older expectations were written for. */
const OWN = { ...BAND_RULES, shrinkHours: 0 };

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
    const slot = learnBand(stats(4, 600), "latency_p95", "high", undefined, OWN);
    expect(slot).toMatchObject({ state: "ready", basis: "slot", hours: 4, median: 4.6 });
    if (slot.state === "ready") expect(slot.upper).toBeCloseTo(4.6 + 3 * 0.23, 9); // 5% of the median beats 1.4826 × MAD
    // A window of 5 runs where an hour has 20 is twice as noisy: twice the spread; one of 20 or more is not scaled.
    const spreadOf = (volume: number) => { const b = learnBand(stats(4, 600), "latency_p95", "high", volume, OWN); return b.state === "ready" ? b.spread : NaN; };
    expect(spreadOf(5)).toBeCloseTo(0.46, 9);
    expect(spreadOf(80)).toBeCloseTo(0.23, 9);
  });

  it("a score's mean is judged on its lower edge, every other metric on its upper one", () => {
    const b = learnBand({ agent_name: "a", slot: { n: 4, median: 0.85, mad: 0.02 }, all: { n: 600, median: 0.8, mad: 0.1 }, hour_volume: 40 }, "score_mean", "medium", undefined, OWN);
    if (b.state !== "ready") throw new Error("expected a band");
    expect(b.lower).toBeCloseTo(0.85 - 4 * 0.0425, 9); // 5% of 0.85 beats 1.4826 × 0.02
    expect([outsideBand(b, "score_mean", 0.6), outsideBand(b, "score_mean", 0.7), outsideBand(b, "score_mean", 2)]).toEqual([true, false, false]);
    expect([outsideBand(b, "tool_error_rate", 0.6), outsideBand(b, "tool_error_rate", 2)]).toEqual([false, true]);
  });

  it("a metric that never moved still gets the metric's floor", () => {
    const b = learnBand({ agent_name: "a", slot: { n: 4, median: 0, mad: 0 }, all: { n: 600, median: 0, mad: 0 }, hour_volume: 40 }, "error_rate", "medium");
    expect(b).toMatchObject({ state: "ready", spread: 0.01, upper: 0.04 });
  });

  it("shrinks a slot's spread towards the all-hours one, relative to each median, as if it were 4 more hours", () => {
    // Slot: 4 hours around 4.6 s with a MAD of 0.01 s; all hours: median 2 s, MAD 0.3 s (15% of it).
    const s = { agent_name: "a", slot: { n: 4, median: 4.6, mad: 0.01 }, all: { n: 600, median: 2, mad: 0.3 }, hour_volume: 20 };
    const own = 1.4826 * 0.01, prior = 1.4826 * 0.3 * (4.6 / 2);
    const b = learnBand(s, "latency_p95", "medium");
    expect(b).toMatchObject({ state: "ready", basis: "slot", median: 4.6 });
    if (b.state === "ready") expect(b.spread).toBeCloseTo(Math.sqrt((4 * own ** 2 + 4 * prior ** 2) / 8), 9);
    // Without shrinkage the 5% floor would have been the spread: a band 4 × 0.23 s wide that noise leaves.
    const alone = learnBand(s, "latency_p95", "medium", undefined, OWN);
    if (alone.state === "ready") expect(alone.spread).toBeCloseTo(0.23, 9);
    // More slot hours weigh more: 12 hours of 0.01 s pull the spread further down.
    const many = learnBand({ ...s, slot: { ...s.slot, n: 12 } }, "latency_p95", "medium");
    if (many.state === "ready" && b.state === "ready") expect(many.spread).toBeLessThan(b.spread);
    // The all-hours basis is not shrunk towards itself.
    expect(learnBand({ ...s, slot: { n: 1, median: 9, mad: 0 } }, "latency_p95", "medium")).toMatchObject({ basis: "all", spread: 1.4826 * 0.3 });
  });

  it("judges a share against the binomial distribution itself, not its normal approximation", () => {
    // 2% errors, a window of 20 runs where an hour has 100, a flat history: the binomial noise decides.
    const s = { agent_name: "a", slot: { n: 4, median: 0.02, mad: 0 }, all: { n: 600, median: 0.02, mad: 0 }, hour_volume: 100 };
    const exact = learnBand(s, "error_rate", "medium", 20);
    if (exact.state !== "ready") throw new Error("expected a band");
    // P(X ≥ 5 | n 20, p 0.02) ≈ 5e-5 is above a normal's 4-spread tail (3.2e-5), P(X ≥ 6) ≈ 2.5e-6 is below: 6 fire.
    expect(exact.upper).toBeCloseTo(5.5 / 20, 9);
    expect([outsideBand(exact, "error_rate", 5 / 20), outsideBand(exact, "error_rate", 6 / 20)]).toEqual([false, true]);
    // The normal approximation's edge, 2% + 4 × sqrt(0.02 × 0.98 / 20) ≈ 14.5%, fires on 3 errors in 20 (p ≈ 0.7%).
    const normal = learnBand(s, "error_rate", "medium", 20, { ...BAND_RULES, exactShares: false });
    if (normal.state === "ready") expect(normal.upper).toBeCloseTo(0.02 + 4 * Math.sqrt((0.02 * 0.98) / 20), 9);
    // The larger of the slot's and the all-hours median is the rate assumed: a slot of lucky hours does not narrow it.
    const lucky = learnBand({ ...s, slot: { n: 4, median: 0.005, mad: 0 } }, "error_rate", "medium", 20);
    if (lucky.state === "ready") expect(lucky.upper).toBeCloseTo(5.5 / 20, 9);
    // Other metrics have no binomial noise.
    const lat = learnBand({ ...s, slot: { n: 4, median: 2, mad: 0 }, all: { n: 600, median: 2, mad: 0 } }, "latency_p50", "medium", 20);
    if (lat.state === "ready") expect(lat.spread).toBeCloseTo(0.1 * Math.sqrt(5), 9); // 5% of 2 s, scaled to 20 of 100 runs
  });

  it("confirms an excursion only once it has lasted, and forgets it when the metric is back", () => {
    const o = new OutOfBandSince();
    expect(o.confirmed("r a", true, 0, 60_000)).toBe(false); // first sweep out
    expect(o.confirmed("r a", true, 30_000, 60_000)).toBe(false);
    expect(o.confirmed("r a", true, 60_000, 60_000)).toBe(true); // still out a minute later
    expect(o.confirmed("r a", false, 75_000, 60_000)).toBe(false); // back in: forgotten
    expect(o.confirmed("r a", true, 90_000, 60_000)).toBe(false); // a new excursion counts again
    expect(o.confirmed("r b", true, 90_000, 60_000)).toBe(false); // keys are separate
    expect(o.confirmed("r a", true, 150_000, 60_000)).toBe(true);
    expect(o.confirmed("r c", true, 0, 0)).toBe(true); // 0: the first sweep out fires
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
    expect(changeInWords({ kind: "prompt_label", label: "prompt answer v4", at: "2026-11-24T12:00:00Z", version: 4 }, new Date("2026-11-24T15:00:00Z"))).toBe("since prompt answer v4 became production 3 h ago");
    expect(changeInWords({ kind: "config_activation", label: "config v7", at: "2026-11-24T14:20:00Z", version: 7 }, new Date("2026-11-24T15:00:00Z"))).toBe("since config v7 was activated 40 min ago");
    expect([durationInWords(40_000), durationInWords(40 * 60_000), durationInWords(5 * 3_600_000), durationInWords(3 * 86_400_000)]).toEqual(["40 s", "40 min", "5 h", "3 days"]);
  });
});
