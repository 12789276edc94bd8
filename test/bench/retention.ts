/**
 * What retention costs: an embedded data dir (chDB + PGlite, the default) filled with `--rows` events (10 per run,
 * 10 users, spread over 180 days; 2 LLM calls per run, a score per 10 runs), generated inside ClickHouse with
 * INSERT … SELECT FROM numbers() so that 100M rows take minutes, not hours. Then user 1 sets 30 days and
 *   1. the first sweep deletes its backlog (~5/6 of its runs: every run older than 30 days),
 *   2. a steady-state sweep a day later deletes one more day of its runs (what the hourly sweep does, ×24),
 * printing the time of each, rows and bytes before and after, a user's run list before and after, and peak RSS.
 *
 *   node --import tsx test/bench/retention.ts [--rows=10000000]
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../core/config.js";
import { openPorts } from "../../core/runtime.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { createUser } from "../../stores/accounts/users.js";
import { applyRetention, saveRetentionDays } from "../../stores/retention.js";

const arg = (name: string, dflt: number) => Number(process.argv.find((x) => x.startsWith(`--${name}=`))?.split("=")[1] ?? dflt);
const rows = arg("rows", 10_000_000);
const runs = Math.floor(rows / 10);
const USERS = 10;
const DAYS = 180;

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 200);
const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const secs = (t0: number) => `${((performance.now() - t0) / 1000).toFixed(1)} s`;

const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-retention-bench-"));
const ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir, NODE_ENV: "test", LOG_LEVEL: "error" }), ["sql", "clickhouse"]);
const ch = ports.clickhouse;
try {
  const users: { id: number }[] = [];
  for (let i = 0; i < USERS; i++) users.push(await createUser(ports.sql, { email: `bench${i}@example.com`, name: `Bench ${i}`, password: "correct horse battery" }));
  const uid = (expr: string) => `multiIf(${users.map((u, i) => `${expr} = ${i}, ${u.id}`).join(", ")}, 0)`;
  // Run r: user r % 10, last active DAYS × (r / runs) days before now; its 10 events a second apart.
  const runAt = `now64(3) - toIntervalSecond(intDiv(r * ${DAYS * 86_400}, ${runs}))`;
  const runId = `reinterpretAsUUID(reverse(unhex(lower(hex(sipHash128(r))))))`;
  const t0 = performance.now();
  await ch.exec(
    `INSERT INTO agent_runs (project_id, user_id, external_id, run_id, agent_name, status, status_at, started_at, ended_at, last_event_at, model, prompt_tokens, completion_tokens, total_tokens, cost_usd, event_count, llm_calls, version)
     SELECT ${uid("r % 10")}, ${uid("r % 10")}, concat('run-', toString(r)), ${runId}, 'bench-agent', 'success', ${runAt}, ${runAt}, ${runAt}, ${runAt}, 'gpt-4o', 2000, 300, 2300, 0.0081, 10, 2, 1
       FROM (SELECT number AS r FROM numbers(${runs}))`,
  );
  await ch.exec(
    `INSERT INTO agent_events (event_id, user_id, run_id, sdk_run_id, event_type, agent_name, payload, occurred_at, received_at, span_id)
     SELECT generateUUIDv4(number), ${uid("r % 10")}, ${runId}, concat('run-', toString(r)), ['run_start','step','tool_call','tool_call','step','step','step','step','step','run_end'][e + 1], 'bench-agent',
            concat('{"node_name":"research","phase":"end","duration_ms":', toString(number % 997), ',"output":{"summary":"', repeat(char(97 + number % 26), 180), '","n":', toString(number), '}}'),
            ${runAt} + toIntervalSecond(e), ${runAt} + toIntervalSecond(e), concat('s', toString(e))
       FROM (SELECT number, intDiv(number, 10) AS r, number % 10 AS e FROM numbers(${runs * 10}))`,
  );
  await ch.exec(
    `INSERT INTO llm_calls (user_id, run_id, sdk_run_id, call_id, span_id, event_id, agent_name, name, model, provider, prompt_tokens, completion_tokens, total_tokens, cost_usd, status, started_at, ended_at, duration_ms, day)
     SELECT ${uid("r % 10")}, ${runId}, concat('run-', toString(r)), toString(c), concat('l', toString(c)), generateUUIDv4(number), 'bench-agent', 'chat', 'gpt-4o', 'openai', 1000, 150, 1150, 0.004, 'ok', ${runAt}, ${runAt}, 800, toDate(${runAt})
       FROM (SELECT number, intDiv(number, 2) AS r, number % 2 AS c FROM numbers(${runs * 2}))`,
  );
  await ch.exec(
    `INSERT INTO scores (score_id, user_id, run_id, sdk_run_id, span_id, name, value_type, value_number, value_string, comment, source, created_at)
     SELECT generateUUIDv4(r), ${uid("r % 10")}, ${runId}, concat('run-', toString(r)), '', 'correctness', 'number', (r % 100) / 100, '', '', 'api', ${runAt}
       FROM (SELECT number * 10 AS r FROM numbers(${Math.floor(runs / 10)}))`,
  );
  console.log(`generated ${rows.toLocaleString()} events, ${runs.toLocaleString()} runs, ${(runs * 2).toLocaleString()} LLM calls in ${secs(t0)}`);

  const sizes = async () => {
    const r = await ch.query<{ table: string; rows: string; bytes: string }>(
      `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table`,
    );
    // Rows a lightweight DELETE masked stay in their parts (and in these counts) until merges drop them.
    return r.filter((x) => x.table !== "schema_migrations").map((x) => `${x.table} ${Number(x.rows).toLocaleString()} rows ${mib(Number(x.bytes))}`).join("; ");
  };
  const visible = async () => Number((await ch.query<{ c: string }>(`SELECT count() AS c FROM agent_events`))[0]!.c);
  const store = createEventStore(ch);
  const listTime = async (userId: number) => {
    const t = performance.now();
    await store.listRuns(userId, { limit: 50 });
    return `${(performance.now() - t).toFixed(0)} ms`;
  };
  console.log(`before: ${await sizes()}`);
  console.log(`before: user 1 run list ${await listTime(users[1]!.id)}, user 0 ${await listTime(users[0]!.id)}`);

  await saveRetentionDays(ports.sql, users[0]!.id, 30);
  let t = performance.now();
  const [first] = await applyRetention({ sql: ports.sql, ch }, { projectId: users[0]!.id });
  console.log(`first sweep (30 days, backlog): deleted ${first!.deleted_runs.toLocaleString()} runs in ${secs(t)}; events still visible ${(await visible()).toLocaleString()}`);
  t = performance.now();
  const [next] = await applyRetention({ sql: ports.sql, ch }, { projectId: users[0]!.id, now: new Date(Date.now() + 86_400_000) });
  console.log(`a day later (one day of runs expire): deleted ${next!.deleted_runs.toLocaleString()} runs in ${secs(t)}`);
  t = performance.now();
  const [none] = await applyRetention({ sql: ports.sql, ch }, { projectId: users[0]!.id, now: new Date(Date.now() + 86_400_000) });
  console.log(`nothing to delete: ${none!.deleted_runs} runs in ${secs(t)}`);
  console.log(`after: ${await sizes()}`);
  console.log(`after: user 1 run list ${await listTime(users[1]!.id)}, user 0 ${await listTime(users[0]!.id)}`);
  console.log(`peak RSS ${mib(peakRss)}`);
} finally {
  clearInterval(sampler);
  await ports.close();
  await rm(dir, { recursive: true, force: true });
}
