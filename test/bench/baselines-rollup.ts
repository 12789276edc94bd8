/**
 * bench:baselines-rollup — what the per-environment and per-version roll-up (stores/baselines/dimension-hours.ts)
 * costs beside the agent-wide one (metric-hours.ts + event-metrics.ts), on embedded chDB in a temp dir.
 *
 * BENCH_AGENTS agents (20) each run BENCH_RUNS_PER_HOUR runs (10) every hour of 28 days, spread over 3 environments and
 * 4 config versions, each run with 2 tool calls (one in ten failed) and one score; written through the event store and
 * ClickHouse inserts. Then, alternating A/B so drift hits both alike, BENCH_ROUNDS (3) times each:
 *   - the backfill: 28 days rolled up agent-wide (A) and per dimension (B), as a project's first anomaly rule (and an
 *     upgraded install's first roll-up of the per-dimension rows) does;
 *   - the steady state: one hour rolled up, as the sweep does once an hour.
 * Prints the median of each in ms, B/A, the rows each wrote and the load average.
 *
 * Run: npm run bench:baselines-rollup   (env: BENCH_AGENTS, BENCH_RUNS_PER_HOUR, BENCH_ROUNDS)
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { rollUpHours } from "../../stores/baselines/metric-hours.js";
import { rollUpEventHours } from "../../stores/baselines/event-metrics.js";
import { rollUpDimensionHours } from "../../stores/baselines/dimension-hours.js";

const AGENTS = Number(process.env.BENCH_AGENTS ?? 20);
const RUNS_PER_HOUR = Number(process.env.BENCH_RUNS_PER_HOUR ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const HOUR = 3_600_000;
const DAYS = 28;
const PID = 1;
const ENVIRONMENTS = ["production", "staging", "canary"];
const chTime = (ms: number) => new Date(ms).toISOString().replace("T", " ").replace("Z", "");
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-rollup-"));
const ch = await openChdb(dir, "runwatch");
try {
  await migrateClickHouse(ch);
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const start = end - DAYS * 24 * HOUR;
  const store = createEventStore(ch);
  let seq = 0;
  for (let h = start; h < end; h += 24 * HOUR) {
    const runs: RunRecord[] = [];
    const events: Record<string, unknown>[] = [];
    const scores: Record<string, unknown>[] = [];
    for (let hour = h; hour < h + 24 * HOUR; hour += HOUR) {
      for (let a = 0; a < AGENTS; a++) {
        for (let r = 0; r < RUNS_PER_HOUR; r++) {
          const id = `r${seq++}`;
          const began = hour + Math.floor(((r + 0.5) / RUNS_PER_HOUR) * (HOUR - 60_000));
          const ended = began + 1000 + (seq % 7) * 500;
          const iso = (ms: number) => new Date(ms).toISOString();
          runs.push({
            ...newRunRecord({ project_id: PID, user_id: PID }, id, runIdFor(PID, id), iso(began)),
            agent_name: `agent-${a}`, status: seq % 25 === 0 ? "error" : "success", started_at: iso(began), ended_at: iso(ended), status_at: iso(ended),
            last_event_at: iso(ended), cost_usd: 0.001 * (1 + (seq % 5)), total_tokens: 100 + (seq % 50), version: 1,
            environment: ENVIRONMENTS[seq % 3]!, config_version: 1 + (seq % 4),
          });
          for (let c = 0; c < 2; c++) {
            events.push({
              event_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, event_type: "tool_call", agent_name: "",
              payload: JSON.stringify({ phase: "end", tool_name: "search", ...((seq + c) % 10 === 0 ? { error: "timeout" } : {}) }),
              occurred_at: chTime(began + 200 * (c + 1)), received_at: chTime(began + 200 * (c + 1)),
            });
          }
          scores.push({
            score_id: randomUUID(), project_id: PID, user_id: PID, run_id: runIdFor(PID, id), sdk_run_id: id, span_id: "", name: "correctness",
            value_type: "number", value_number: (seq % 10) / 10, value_string: "", comment: "", source: "api", created_at: chTime(ended),
          });
        }
      }
    }
    await store.upsertRuns(runs);
    await ch.insert("agent_events", events);
    await ch.insert("scores", scores);
  }
  console.log(`seeded ${seq} runs (${AGENTS} agents × ${RUNS_PER_HOUR} an hour × ${DAYS} days), ${2 * seq} tool calls, ${seq} scores; load ${load()}`);

  const agentWide = async (from: number) => {
    const range = { projectId: PID, from: new Date(from), to: new Date(end) };
    await rollUpHours(ch, range);
    await rollUpEventHours(ch, range);
  };
  const perDimension = (from: number) => rollUpDimensionHours(ch, { projectId: PID, from: new Date(from), to: new Date(end) });
  const timed = async (f: () => Promise<void>) => { const t = performance.now(); await f(); return performance.now() - t; };
  for (const [name, from] of [["backfill, 28 days", start], ["one hour", end - HOUR]] as const) {
    const a: number[] = [], b: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      a.push(await timed(() => agentWide(from)));
      b.push(await timed(() => perDimension(from)));
    }
    console.log(`${name}: agent-wide ${median(a).toFixed(0)} ms, per environment and version ${median(b).toFixed(0)} ms, ratio ${(median(b) / median(a)).toFixed(2)} (A ${a.map((x) => x.toFixed(0)).join("/")}, B ${b.map((x) => x.toFixed(0)).join("/")}); load ${load()}`);
  }
  const count = async (table: string) => Number((await ch.query<{ n: string | number }>(`SELECT count() AS n FROM ${table} FINAL`))[0]!.n);
  console.log(`rows: agent_metric_hours ${await count("agent_metric_hours")}, agent_metric_hours_by_dimension ${await count("agent_metric_hours_by_dimension")}`);
} finally {
  await ch.close();
  await fs.rm(dir, { recursive: true, force: true });
}
