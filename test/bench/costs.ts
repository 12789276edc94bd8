/**
 * The /costs queries at scale: writes N synthetic runs (default 1,000,000) for one user into chDB (or
 * CLICKHOUSE_URL) through the real EventStore, so run_costs is filled by its materialized view exactly as in
 * production; 10% of runs get a second version (as when late events arrive), so deduplication is exercised.
 * Then times the queries the cost page and the agents' budgets run, and checks that the page total equals
 * the sum of run costs computed independently.
 *
 *   node --import tsx test/bench/costs.ts [--runs=1000000] [--days=90]
 *
 * The queries are timed twice: right after the writes (many unmerged parts: FINAL has to merge them), and
 * after OPTIMIZE TABLE run_costs FINAL (the steady state that background merges reach).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { agentMonthSpend, costGroups, perDay, rollUp, totalOf } from "../../stores/runs/costs.js";

const arg = (name: string, dflt: number) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split("=")[1]) : dflt;
};
const totalRuns = arg("runs", 1_000_000);
const spanDays = arg("days", 90);
const MODELS = ["gpt-4o", "gpt-4o-mini", "claude-3-5-sonnet", "gemini-1.5-pro", "llama-3-70b"];

const dir = process.env.CLICKHOUSE_URL ? "" : await mkdtemp(path.join(os.tmpdir(), "runwatch-bench-costs-"));
const ch: ClickHouse = process.env.CLICKHOUSE_URL
  ? await openClickHouseServer(process.env.CLICKHOUSE_URL, `runwatch_bench_${process.pid}`)
  : await openChdb(dir, "runwatch");
await migrateClickHouse(ch);
const store = createEventStore(ch);
console.log(`transport: ${process.env.CLICKHOUSE_URL ? "ClickHouse server" : "chDB"}; ${totalRuns.toLocaleString("en-US")} runs over ${spanDays} days, 20 agents, ${MODELS.length} models`);

const user = 7;
const now = new Date();
const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), 12);
const spanMs = spanDays * 86_400_000;
const chunk = 50_000;
let expected = 0;
const t0 = performance.now();
for (let off = 0; off < totalRuns; off += chunk) {
  const rows: RunRecord[] = [];
  for (let i = off; i < Math.min(totalRuns, off + chunk); i++) {
    const at = new Date(end - spanMs + Math.floor((i / totalRuns) * spanMs)).toISOString();
    const sdk = `run-${i}`;
    const prompt = 200 + (i % 1800);
    const completion = 50 + (i % 400);
    const cost = Math.round((prompt * 2.5e-6 + completion * 10e-6) * 1e9) / 1e9;
    const base = { ...newRunRecord({ project_id: user, user_id: user }, sdk, runIdFor(user, sdk), at), started_at: at, agent_name: `agent-${i % 20}`, version: 1 };
    const ended: RunRecord = {
      ...base, status: "success", ended_at: at, model: MODELS[i % MODELS.length]!, prompt_tokens: prompt, completion_tokens: completion,
      total_tokens: prompt + completion, cost_usd: cost, cost_source: i % 3 === 0 ? "computed" : "client", version: 2,
    };
    if (i % 10 === 0) rows.push({ ...base, status: "running" }); // an earlier version: must not count
    rows.push(ended);
    expected += cost;
  }
  await store.upsertRuns(rows);
}
console.log(`wrote ${totalRuns.toLocaleString("en-US")} runs (+10% extra versions) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const full = { from: dayOf(end - spanMs), to: dayOf(end) };
const last30 = { from: dayOf(end - 29 * 86_400_000), to: dayOf(end) };
const last7 = { from: dayOf(end - 6 * 86_400_000), to: dayOf(end) };

const time = async (label: string, f: () => Promise<unknown>, runs = 5) => {
  await f();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    samples.push(performance.now() - t);
  }
  samples.sort((a, b) => a - b);
  console.log(`${label.padEnd(48)} median ${samples[Math.floor(runs / 2)]!.toFixed(1).padStart(7)} ms   max ${samples[runs - 1]!.toFixed(1).padStart(7)} ms`);
};

const page = (range: { from: string; to: string }) => async () => {
  const [groups] = await Promise.all([costGroups(ch, user, range), agentMonthSpend(ch, user)]);
  return { total: totalOf(groups), days: perDay(groups, range), agents: rollUp(groups, (g) => g.agent_name), models: rollUp(groups, (g) => g.model) };
};
const parts = async () => (await ch.query<{ n: string }>("SELECT count() AS n FROM system.parts WHERE active AND table = 'run_costs' AND database = currentDatabase()"))[0]?.n;
for (const phase of ["as written", "merged"]) {
  if (phase === "merged") await ch.exec("OPTIMIZE TABLE run_costs FINAL");
  console.log(`-- ${phase} (${await parts()} active parts)`);
  await time(`cost page, last 7 days`, page(last7));
  await time(`cost page, last 30 days`, page(last30));
  await time(`cost page, all ${spanDays} days (${totalRuns.toLocaleString("en-US")} runs)`, page(full));
  await time("budgets: agentMonthSpend", () => agentMonthSpend(ch, user));
}

const got = totalOf(await costGroups(ch, user, full));
console.log(`check: page total $${got.cost_usd.toFixed(6)} over ${got.runs.toLocaleString("en-US")} runs; sum of run costs $${expected.toFixed(6)} over ${totalRuns.toLocaleString("en-US")} runs: ${Math.abs(got.cost_usd - expected) < 1e-6 * Math.max(1, expected) && got.runs === totalRuns ? "equal" : "DIFFERENT"}`);

await ch.close();
if (dir) await rm(dir, { recursive: true, force: true });
