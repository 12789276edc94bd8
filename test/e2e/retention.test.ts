/**
 * Data retention as a user meets it: the /settings form (session + CSRF) sets a number of days; the sweep deletes
 * that user's runs whose last activity is older — every row in every table: events (so spans), LLM calls, scores,
 * search text, cost rows, the run's versions, its human-input answers — and nothing of runs still active or of other
 * users.
 */
import { addDeadLetters } from "../../stores/dead-letters.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { applyRetention, saveRetentionDays, sweepRetention } from "../../stores/retention.js";
import { bearer, childServerEnv, csrfFrom, json, loginJar, runwatchCli, startChildServer, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  [alice, bob] = [await srv.account(), await srv.account()];
});
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  await srv?.close();
});

const daysAgo = (d: number, plusMs = 0) => new Date(Date.now() - d * 86_400_000 + plusMs).toISOString();

async function send(key: string, events: Record<string, unknown>[], url = srv.url): Promise<void> {
  const res = await fetch(`${url}/api/ingest/batch`, json(key, { events }));
  expect(await res.json()).toMatchObject({ rejected: 0 });
}

/** A finished run with one LLM call, all `age` days ago. */
const oldRun = (id: string, age: number) => [
  { event_type: "run_start", sdk_run_id: id, agent_name: "keeper", occurred_at: daysAgo(age), session_id: `s-${id}`, payload: { input: { q: id } } },
  { event_type: "step", sdk_run_id: id, occurred_at: daysAgo(age, 10), span_id: `llm-${id}`, payload: { kind: "llm", phase: "start", node_name: "chat", model: "gpt-4o" } },
  { event_type: "step", sdk_run_id: id, occurred_at: daysAgo(age, 20), span_id: `llm-${id}`, payload: { kind: "llm", phase: "end", node_name: "chat", model: "gpt-4o", prompt_tokens: 10, completion_tokens: 5 } },
  { event_type: "run_end", sdk_run_id: id, occurred_at: daysAgo(age, 30), payload: { output: { a: id } } },
];

/** Rows of a user's runs in each ClickHouse table that holds run data. */
async function rowsOf(userId: number, ids: string[]): Promise<Record<string, number>> {
  const ch = srv.ports.clickhouse;
  const count = async (sql: string) => Number((await ch.query<{ c: string }>(sql, { uid: userId, ids }))[0]!.c);
  const byRunId = (t: string) => count(`SELECT count() AS c FROM ${t} WHERE user_id = {uid:UInt64} AND sdk_run_id IN {ids:Array(String)}`);
  return {
    agent_events: await byRunId("agent_events"),
    llm_calls: await byRunId("llm_calls"),
    scores: await byRunId("scores"),
    search_texts: await count("SELECT count() AS c FROM agent_events WHERE project_id = {uid:UInt64} AND sdk_run_id IN {ids:Array(String)} AND search_text != ''"),
    run_costs: await count("SELECT count() AS c FROM run_costs WHERE user_id = {uid:UInt64} AND external_id IN {ids:Array(String)}"),
    agent_runs: await count("SELECT count() AS c FROM agent_runs WHERE user_id = {uid:UInt64} AND external_id IN {ids:Array(String)}"),
  };
}

describe("data retention", () => {
  it("the settings form refuses bad values naming the field and saves days (empty = forever)", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/settings`)).text());
    for (const bad of ["abc", "-3", "1.5", "3651", "1e3", "99999999999999999999999", "3\u00000", "\ud800", "0x1e"]) {
      const res = await jar.form(`${srv.url}/settings/retention`, { _csrf: csrf, retention_days: bad });
      expect(res.status, bad).toBe(422);
      const html = await res.text();
      // U+0000 is refused for every form before the handler sees it (web/forms.ts), naming the field all the same.
      expect(html).toContain(bad.includes("\u0000") ? "retention_days must not contain U+0000" : "retention_days must be empty or 0");
      if (!/[\u0000\ud800]/.test(bad)) expect(html).toContain(`value="${bad}"`); // a NUL or lone surrogate is not echoed as given
    }
    expect((await jar.form(`${srv.url}/settings/retention`, { retention_days: "30" })).status).toBe(403); // no CSRF token
    expect((await jar.form(`${srv.url}/settings/retention`, { _csrf: csrf, retention_days: "0" })).status).toBe(303);
    expect(await (await jar.fetch(`${srv.url}/settings`)).text()).toContain("Keeping everything.");
    const ok = await jar.form(`${srv.url}/settings/retention`, { _csrf: csrf, retention_days: "30" });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/settings?retention=1");
    const page = await (await jar.fetch(`${srv.url}/settings?retention=1`)).text();
    expect(page).toContain('name="retention_days" inputmode="numeric" value="30"');
    expect(page).toContain("Keeping 30 days.");
    // Back to forever until the next test sweeps: no other sweep (cli.test's, in a shared scale database) meets it.
    expect((await jar.form(`${srv.url}/settings/retention`, { _csrf: csrf, retention_days: "" })).status).toBe(303);
    expect(await (await jar.fetch(`${srv.url}/settings`)).text()).toContain("Keeping everything.");
  });

  it("deletes the user's runs inactive for longer, with every row they own; keeps active runs and other users' runs", async () => {
    await send(alice.key, [...oldRun("a-old", 40), ...oldRun("a-recent", 1)]);
    // Started long ago but active yesterday: its last activity decides, so it stays.
    await send(alice.key, [
      { event_type: "run_start", sdk_run_id: "a-long", agent_name: "keeper", occurred_at: daysAgo(60), payload: {} },
      { event_type: "step", sdk_run_id: "a-long", occurred_at: daysAgo(1), span_id: "s1", payload: { node_name: "poll", phase: "start" } },
    ]);
    // Paused on a question 45 days ago, answered through the API (a human_inputs row in Postgres).
    await send(alice.key, [
      { event_type: "run_start", sdk_run_id: "a-hitl", agent_name: "keeper", occurred_at: daysAgo(45), payload: {} },
      { event_type: "human_input_requested", sdk_run_id: "a-hitl", occurred_at: daysAgo(45, 10), payload: { question: "Ship it?" } },
    ]);
    await send(bob.key, oldRun("b-old", 40));
    await waitForRun(srv.url, alice.key, "a-old", (b) => b.run.status === "success");
    await waitForRun(srv.url, alice.key, "a-recent", (b) => b.run.status === "success");
    await waitForRun(srv.url, alice.key, "a-long", (b) => b.events.length === 2);
    await waitForRun(srv.url, alice.key, "a-hitl", (b) => b.run.status === "waiting_for_input");
    await waitForRun(srv.url, bob.key, "b-old", (b) => b.run.status === "success");
    const answer = await fetch(`${srv.url}/api/runs/a-hitl/input`, json(alice.key, { response: "yes" }));
    expect(answer.status).toBe(201);
    const score = await fetch(`${srv.url}/api/scores`, json(alice.key, { sdk_run_id: "a-old", name: "correctness", value: 0.9 }));
    expect(score.status).toBe(201);

    const doomed = ["a-old", "a-hitl"];
    // Search text: the input, the output and the LLM call's name (written beside the run's new version).
    await until("a-old's search text", async () => (await rowsOf(alice.id, ["a-old"])).search_texts, (n) => n === 3);
    expect(await rowsOf(alice.id, ["a-old"])).toMatchObject({ agent_events: 4, llm_calls: 1, scores: 1, search_texts: 3 });
    // Dead letters: alice's old one goes with her runs; her recent one and bob's old one stay.
    const letter = (userId: number, id: string) => ({ raw: Buffer.from(id), event: { project_id: userId, user_id: userId, run_id: id, sdk_run_id: id, event_id: id, event_type: "step" as const }, error: "test" });
    await addDeadLetters(srv.ports.sql, [letter(alice.id, "dl-a-old"), letter(alice.id, "dl-a-recent"), letter(bob.id, "dl-b-old")]);
    await srv.ports.sql.query("UPDATE dead_letters SET last_failed_at = now() - interval '40 days' WHERE event_id IN ('dl-a-old', 'dl-b-old')");
    // (In the scale pass other test files' users share the database: only alice's outcome is looked at.)
    await saveRetentionDays(srv.ports.sql, alice.id, 30);
    const outcomes = await applyRetention({ sql: srv.ports.sql, ch: srv.ports.clickhouse });
    expect(outcomes.filter((o) => o.project_id === alice.id)).toEqual([{ project_id: alice.id, days: 30, cutoff: expect.any(String), deleted_runs: 2, deleted_dead_letters: 1 }]);
    const letters = await srv.ports.sql.query<{ event_id: string }>("SELECT event_id FROM dead_letters WHERE project_id IN ($1, $2) AND event_id LIKE 'dl-%' ORDER BY event_id", [alice.id, bob.id]);
    expect(letters.map((l) => l.event_id)).toEqual(["dl-a-recent", "dl-b-old"]);
    expect(outcomes.some((o) => o.project_id === bob.id)).toBe(false);

    expect(await rowsOf(alice.id, doomed)).toEqual({ agent_events: 0, llm_calls: 0, scores: 0, search_texts: 0, run_costs: 0, agent_runs: 0 });
    for (const id of doomed) {
      expect((await fetch(`${srv.url}/api/runs/${id}`, bearer(alice.key))).status).toBe(404);
      expect((await fetch(`${srv.url}/api/runs/${id}/spans`, bearer(alice.key))).status).toBe(404);
      expect((await fetch(`${srv.url}/api/runs/${id}/scores`, bearer(alice.key))).status).toBe(404);
    }
    expect((await fetch(`${srv.url}/api/sessions/s-a-old`, bearer(alice.key))).status).toBe(404);
    const answers = await srv.ports.sql.query("SELECT 1 FROM human_inputs WHERE project_id = $1 AND sdk_run_id = 'a-hitl'", [alice.id]);
    expect(answers).toEqual([]);
    const starts = await srv.ports.sql.query("SELECT external_id FROM agent_run_starts WHERE project_id = $1 ORDER BY external_id", [alice.id]);
    expect(starts.map((r: any) => r.external_id)).toEqual(["a-long", "a-recent"]);

    expect(await rowsOf(alice.id, ["a-recent"])).toMatchObject({ agent_events: 4, llm_calls: 1, search_texts: 3, agent_runs: expect.any(Number) });
    expect((await fetch(`${srv.url}/api/runs/a-long`, bearer(alice.key))).status).toBe(200);
    expect((await fetch(`${srv.url}/api/runs/b-old`, bearer(bob.key))).status).toBe(200); // bob keeps everything
    expect(await rowsOf(bob.id, ["b-old"])).toMatchObject({ agent_events: 4, search_texts: 3 });

    // Again: nothing more to delete; the settings page tells what the sweeps did.
    expect(await applyRetention({ sql: srv.ports.sql, ch: srv.ports.clickhouse }, { projectId: alice.id })).toEqual([
      { project_id: alice.id, days: 30, cutoff: expect.any(String), deleted_runs: 0, deleted_dead_letters: 0 },
    ]);
    const jar = await loginJar(srv.url, alice.email);
    expect(await (await jar.fetch(`${srv.url}/settings`)).text()).toMatch(/Last sweep <time[^>]*>[^<]+<\/time>; 2 runs deleted so far\./);
  });

  it("one sweeper per interval across processes: the lease holder sweeps, another process does not", async () => {
    const ports = { sql: srv.ports.sql, ch: srv.ports.clickhouse };
    await srv.ports.sql.query("UPDATE retention_sweep_lease SET held_until = '-infinity', holder = ''");
    expect(await sweepRetention(ports, "process-a", 60_000)).toBeInstanceOf(Array);
    expect(await sweepRetention(ports, "process-b", 60_000)).toBeUndefined();
    expect(await sweepRetention(ports, "process-a", 60_000)).toBeInstanceOf(Array);
    await srv.ports.sql.query("UPDATE retention_sweep_lease SET held_until = now() - interval '1 second'");
    expect(await sweepRetention(ports, "process-b", 60_000)).toBeInstanceOf(Array);
  });

  // Embedded only: in the scale pass this server's sweep would reach every test file's users in the shared databases.
  it.skipIf(Boolean(process.env.DATABASE_URL))("`runwatch start` sweeps on its own every RUNWATCH_RETENTION_SWEEP_MS", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-retention-"));
    try {
      const { env, url } = await childServerEnv(dataDir, { NODE_ENV: "test", LOG_LEVEL: "warn", RUNWATCH_RETENTION_SWEEP_MS: "300" });
      const server = await startChildServer(env, url, children);
      runwatchCli({ ...env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", "sweeper@example.com", "--name", "Sweeper");
      const key = runwatchCli(env, "key", "create", "--email", "sweeper@example.com", "--name", "k");
      await send(key, [...oldRun("sw-old", 40), ...oldRun("sw-new", 1)], url);
      await waitForRun(url, key, "sw-old", (b) => b.run.status === "success");
      await waitForRun(url, key, "sw-new", (b) => b.run.status === "success");
      const jar = await loginJar(url, "sweeper@example.com");
      const csrf = csrfFrom(await (await jar.fetch(`${url}/settings`)).text());
      expect((await jar.form(`${url}/settings/retention`, { _csrf: csrf, retention_days: "7" })).status).toBe(303);
      const deadline = Date.now() + 20_000;
      while ((await fetch(`${url}/api/runs/sw-old`, bearer(key))).status !== 404) {
        expect(Date.now() < deadline, server.output()).toBe(true);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect((await fetch(`${url}/api/runs/sw-new`, bearer(key))).status).toBe(200);
      expect(await (await jar.fetch(`${url}/settings`)).text()).toContain("1 run deleted so far.");
      server.child.kill("SIGTERM");
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true }).catch(() => undefined);
    }
  }, 90_000);
});
