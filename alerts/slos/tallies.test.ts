/**
 * SLO tallies read from hours equal the tallies read from the runs alone (stores/slos.ts sloTallies), on chDB always
 * and on a ClickHouse server when CLICKHOUSE_URL is set: over ten days of seeded runs and scores, for a success rate,
 * two latency thresholds and a score's mean on one agent and a success rate on another; after a run ends late into an
 * hour already rolled up (in the raw tail, and before it); with a latency threshold changed; in three ClickHouse
 * queries for all the SLOs, and no roll-up again within its interval.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { describeOnTargets, HOUR } from "../../stores/baselines/testing/targets.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { toChTime } from "../../stores/runs/run-query.js";
import { sloTallies, type Slo } from "../../stores/slos.js";
import { sloWindowStart } from "../../stores/slo-hours.js";
import { sloWindows } from "./budget.js";
import { sloTalliesAt } from "./tallies.js";

const PID = 77;
const NOW = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR + 41 * 60_000 + 17_000; // 41 min into an hour

function endedRun(id: string, agent: string, endMs: number, seconds: number, patch: Partial<RunRecord> = {}): RunRecord {
  const started = new Date(endMs - seconds * 1000).toISOString();
  const ended = new Date(endMs).toISOString();
  return {
    ...newRunRecord({ project_id: PID, user_id: PID }, id, runIdFor(PID, id), started),
    // A score is activity on its run: the run was last active after its scores (given half a second after its end).
    agent_name: agent, status: "success", started_at: started, ended_at: ended, status_at: ended, last_event_at: new Date(endMs + 1000).toISOString(), version: 1, ...patch,
  };
}
const score = (id: string, ms: number, name: string, value: number) => ({
  score_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, span_id: "", name,
  value_type: "number", value_number: value, value_string: "", comment: "", source: "api", created_at: toChTime(new Date(ms).toISOString()),
});

const slo = (id: number, patch: Partial<Slo>): Slo => ({
  id, name: `slo-${id}`, agent_name: "pay-bot", objective: "success_rate", target: 0.9, threshold_seconds: null, score_name: null, window_days: 30, created_at: "", ...patch,
});
const SLOS: Slo[] = [
  slo(1, {}),
  slo(2, { objective: "latency", threshold_seconds: 2, window_days: 7 }),
  slo(3, { objective: "latency", threshold_seconds: 5.5, window_days: 1 }),
  slo(4, { objective: "score_mean", score_name: "correctness", window_days: 3 }),
  slo(5, { agent_name: "other-bot", window_days: 2 }),
];

/** A ClickHouse that counts the statements sent through it. */
function counting(ch: ClickHouse): { ch: ClickHouse; reads: () => number; writes: () => number } {
  let reads = 0, writes = 0;
  const wrapped: ClickHouse = {
    ...ch,
    query: (sql, params) => { reads++; return ch.query(sql, params); },
    exec: (sql, params) => { writes++; return ch.exec(sql, params); },
    insert: (t, rows) => { writes++; return ch.insert(t, rows); },
    insertEncoded: (t, rows) => { writes++; return ch.insertEncoded(t, rows); },
    sandbox: () => ch.sandbox(),
    close: () => ch.close(),
  };
  return { ch: wrapped, reads: () => reads, writes: () => writes };
}

describeOnTargets("SLO tallies from hours", (target) => {
  let ch: ClickHouse;
  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    const runs: RunRecord[] = [];
    const scores: ReturnType<typeof score>[] = [];
    // Ten days, a few runs every 50 minutes (so hours and windows cut between them): durations 1…7 s, every third
    // an error, a score on each pay-bot run (values outside [0, 1] are clamped).
    for (let t = NOW - 10 * 24 * HOUR, i = 0; t < NOW; t += 50 * 60_000, i++) {
      for (let k = 0; k < 3; k++) {
        const id = `p-${i}-${k}`;
        runs.push(endedRun(id, "pay-bot", t + k * 7_000, 1 + ((i + k) % 7), { status: (i + k) % 3 === 0 ? "error" : "success" }));
        scores.push(score(id, t + k * 7_000 + 500, "correctness", ((i * 3 + k) % 13) / 10 - 0.1));
      }
      runs.push(endedRun(`o-${i}`, "other-bot", t + 20_000, 2, { status: i % 5 === 0 ? "error" : "success" }));
    }
    // The last minutes, for the 5-minute window.
    for (let k = 0; k < 6; k++) runs.push(endedRun(`recent-${k}`, "pay-bot", NOW - k * 40_000, 3 + k, { status: k % 2 ? "error" : "success" }));
    runs.push(endedRun("experiment", "pay-bot", NOW - HOUR, 1, { experiment_id: "exp-1" }));
    runs.push({ ...endedRun("running", "pay-bot", NOW - HOUR, 1), status: "running", ended_at: null });
    runs.push(endedRun("future", "pay-bot", NOW + 60_000, 1));
    await createEventStore(ch).upsertRuns(runs);
    await ch.insert("scores", scores);
  });
  afterAll(async () => {
    await ch?.close();
    await target.teardown();
  });

  const raw = (s: Slo, now: number) =>
    sloTallies(ch, s, PID, new Date(now), [(now - sloWindowStart(s, new Date(now))) / 1000, ...sloWindows(s).slice(1)]);
  const expectEqual = async (slos: readonly Slo[], now: number, read: ClickHouse = ch) => {
    const fromHours = await sloTalliesAt(read, PID, slos, new Date(now));
    for (const [i, s] of slos.entries()) {
      const reference = await raw(s, now);
      expect(fromHours[i]!.windows.map((t) => t.total), s.name).toEqual(reference.map((t) => t.total));
      fromHours[i]!.windows.forEach((t, w) => expect(t.bad, `${s.name} window ${w}`).toBeCloseTo(reference[w]!.bad, 9));
      expect(fromHours[i]!.hours.reduce((n, h) => n + h.total, 0)).toBe(reference[0]!.total);
    }
    return fromHours;
  };

  it("counts what the runs alone count, for every objective, in three reads for all the SLOs", async () => {
    const counted = counting(ch);
    const first = await expectEqual(SLOS, NOW, counted.ch);
    expect(first[0]!.windows[0]!.total).toBeGreaterThan(600); // the roll-up backfilled the days before the tail
    expect(first.every((t) => t.windows[0]!.total > 0)).toBe(true);
    const rolledWrites = counted.writes();
    expect(rolledWrites).toBe(2); // the runs' hours and the scores' hours
    const before = counted.reads();
    await sloTalliesAt(counted.ch, PID, SLOS, new Date(NOW + 60_000));
    expect(counted.reads() - before).toBe(3); // hours, runs' tail, scores' tail
    expect(counted.writes()).toBe(rolledWrites); // rolled a minute ago: not again
  });

  it("a run that ends late into an hour already rolled up is counted: at once in the tail, at the next roll-up before it", async () => {
    await expectEqual(SLOS, NOW);
    await createEventStore(ch).upsertRuns([
      endedRun("late-tail", "pay-bot", NOW - 2 * HOUR, 9, { status: "error" }),
      endedRun("late-rolled", "pay-bot", NOW - 11 * HOUR, 9, { status: "error" }),
    ]);
    await ch.insert("scores", [score("late-rolled", NOW - 11 * HOUR + 100, "correctness", 0)]);
    const later = NOW + 7 * 60_000; // past the roll-up interval
    await expectEqual(SLOS, later);
  });

  it("a changed latency threshold and another SLO on the same agent read the same hours", async () => {
    const later = NOW + 12 * 60_000;
    await expectEqual([slo(2, { objective: "latency", threshold_seconds: 4, window_days: 7 }), slo(6, { objective: "latency", threshold_seconds: 0.5, window_days: 30 }), slo(7, { window_days: 1 })], later);
  });

  it("the hours move on: a roll-up hours later reads the same as the runs", async () => {
    await expectEqual(SLOS, NOW + 5 * HOUR);
  });
});
