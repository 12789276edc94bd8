/**
 * Bands per environment and per config version, learned from seeded hourly history on chDB and (with CLICKHOUSE_URL)
 * a ClickHouse server: each environment's own band, a young version "learning" with the hours it has, the recent
 * versions newest first, one environment's statistics for the trigger, and an activation as its two versions' bands.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { describeOnTargets, H1, HOUR } from "../../stores/baselines/testing/targets.js";
import { insertDimensionHours, type DimensionHour } from "../../stores/baselines/dimension-hours.js";
import { compareVersions, dimensionBands, environmentStats } from "./dimensions.js";
import type { ChangePoint } from "./change-points.js";

const PID = 71;

describeOnTargets("bands per dimension", (target) => {
  let ch: ClickHouse;
  const until = H1 + 7 * 24 * HOUR; // a Tuesday 14:00
  const range = { projectId: PID, hourOfWeek: 24 + 14, since: new Date(until - 28 * 24 * HOUR), until: new Date(until) };
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    const rows: DimensionHour[] = [];
    const row = (dimension: DimensionHour["dimension"], value: string, h: number, v: number, agent = "refund-bot"): DimensionHour =>
      ({ agent_name: agent, dimension, dimension_value: value, metric: "latency_p95", hour: new Date(until - h * HOUR), runs: 20, value: v });
    for (let h = 1; h <= 28 * 24; h++) {
      // production: about 1 s (1.0, 1.1, 1.0, 0.9 …); staging is slower, about 8 s.
      rows.push(row("environment", "production", h, [1, 1.1, 1, 0.9][h % 4]!), row("environment", "staging", h, [8, 8.5, 8, 7.5][h % 4]!));
      if (h > 30) rows.push(row("config_version", "3", h, 1));
      else if (h > 5) rows.push(row("config_version", "4", h, 2));
      else rows.push(row("config_version", "5", h, 3));
      if (h <= 30) rows.push(row("environment", "production", h, 4, "other-bot"));
    }
    await insertDimensionHours(ch, PID, rows);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  it("learns each environment's and each recent version's own band; a young version is learning", async () => {
    const { environments, config_versions } = await dimensionBands(ch, { ...range, agent: "refund-bot", metric: "latency_p95", stored: "latency_p95" });
    expect(environments.map((e) => e.environment)).toEqual(["production", "staging"]);
    expect(environments[0]!.bands.medium).toMatchObject({ state: "ready", basis: "slot", hours: 4, median: 1 });
    expect(environments[1]!.bands.medium).toMatchObject({ state: "ready", basis: "slot", hours: 4, median: 8 });
    const prodUpper = environments[0]!.bands.medium.state === "ready" ? environments[0]!.bands.medium.upper : NaN;
    expect(prodUpper).toBeLessThan(2); // staging's usual 8 s would be far out of production's band
    expect(config_versions.map((v) => v.version)).toEqual([5, 4, 3]);
    expect(config_versions[0]!.bands.medium).toEqual({ state: "learning", hours: 5, needed: 24 });
    expect(config_versions[1]!.bands.medium).toMatchObject({ state: "ready", basis: "all", hours: 25, median: 2 });
    expect(config_versions[2]!.bands.medium).toMatchObject({ state: "ready", basis: "slot", median: 1 });
    expect(config_versions[0]!.latest_hour).toBe(new Date(until - HOUR).toISOString());
  });

  it("one environment's statistics for every agent (the trigger's), and an activation as its versions' own bands", async () => {
    const stats = await environmentStats(ch, { ...range, stored: "latency_p95", environment: "production" });
    expect(stats.map((s) => [s.agent_name, s.all.n]).sort()).toEqual([["other-bot", 30], ["refund-bot", 28 * 24]]);
    expect(await environmentStats(ch, { ...range, agent: "refund-bot", stored: "latency_p95", environment: "qa" })).toEqual([]);

    const { config_versions } = await dimensionBands(ch, { ...range, agent: "refund-bot", metric: "latency_p95", stored: "latency_p95" });
    const activation = (version: number, at: number): ChangePoint => ({ kind: "config_activation", label: `config v${version}`, at: new Date(until - at * HOUR).toISOString(), version });
    const v4 = compareVersions(activation(4, 30), [activation(3, 400)], config_versions)!;
    expect(v4).toMatchObject({ from_version: 3, to_version: 4, before: { state: "ready", median: 1 }, after: { state: "ready", median: 2 } });
    // No earlier activation in the look-back: the newest lower version with history stands in; v5 is still learning.
    expect(compareVersions(activation(5, 5), [], config_versions)).toMatchObject({ from_version: 4, before: { median: 2 }, after: { state: "learning", hours: 5 } });
    expect(compareVersions(activation(9, 1), [], [])).toEqual({ from_version: null, to_version: 9, before: null, after: null });
  });
});
