/**
 * Dead letters survive kill -9, and the operator's CLI works on them, as a user runs it: `runwatch start` as a
 * child process with a plugin that throws on some events (tests' fixtures/poison-plugin.ts via RUNWATCH_PLUGINS),
 * a burst of acknowledged events with poison among them, SIGKILL while the pipeline is dead-lettering, restart:
 * every acknowledged event is stored or dead-lettered, exactly once, never both. Then the plugin is fixed and
 * `runwatch dead-letters replay --all` stores every one of them once; a second replay and a purge find nothing.
 * In scale mode (KAFKA_BROKERS, ...) the child gets a topic and ClickHouse database of its own.
 */
import type { ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { DeadLetter } from "../../stores/dead-letters.js";
import { bearer, childServerEnv, json, startChildServer, runwatchCli as cli } from "./harness.js";

const FIXTURE = path.resolve(import.meta.dirname, "fixtures/poison-plugin.ts");

const children = new Set<ChildProcess>();
let dataDir = "";
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
});

const startServer = (env: NodeJS.ProcessEnv, url: string) => startChildServer(env, url, children);

const exited = (c: ChildProcess) => new Promise<void>((r) => (c.exitCode !== null || c.signalCode ? r() : c.once("exit", () => r())));

describe("dead letters across kill -9, and the dead-letters CLI", () => {
  it("acknowledged = stored + dead-lettered after a crash; replay after the fix stores each once", async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-dlq-"));
    const flag = path.join(dataDir, "poison-on");
    await fs.writeFile(flag, "");
    const tag = randomUUID().replaceAll("-", "").slice(0, 12);
    const { env, url } = await childServerEnv(dataDir, {
      NODE_ENV: "test", LOG_LEVEL: process.env.DLQ_TEST_LOG_LEVEL ?? "error", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000",
      RUNWATCH_PLUGINS: FIXTURE, RUNWATCH_TEST_POISON_FLAG: flag,
      KAFKA_TOPIC: `runwatch.test.dlq.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_dlq_${tag}`,
    });
    const email = `dlq-${tag}@example.com`;
    cli({ ...env, RUNWATCH_PASSWORD: "dlq-test-password" }, "user", "create", "--email", email, "--name", "DLQ");
    const key = cli(env, "key", "create", "--email", email, "--name", "dlq");

    const first = await startServer(env, url);
    // The poison set is refused at ingest in either mode (the e2e poison tests cover every case embedded).
    const nul = await fetch(`${url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "dlq-nul", agent_name: "a\u0000b", payload: {} }));
    expect(nul.status).toBe(422);
    expect(((await nul.json()) as { error: { field: string } }).error.field).toBe("agent_name");
    const acked = new Map<string, { sdk: string; poison: boolean }>();
    const RUNS = 4;
    for (let r = 0; r < RUNS; r++) {
      const res = await fetch(`${url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: `dlq-${r}`, agent_name: "dlq-agent", payload: {} }));
      acked.set(((await res.json()) as { event_id: string }).event_id, { sdk: `dlq-${r}`, poison: false });
    }
    // Poison spread over many batches keeps the pipeline isolating and dead-lettering when the kill comes.
    let killed = false;
    const send = async (b: number) => {
      const events = Array.from({ length: 40 }, (_, i) => ({
        event_type: "step", sdk_run_id: `dlq-${(b + i) % RUNS}`, payload: { node_name: `b${b}-${i}`, phase: "end", poison: i % 8 === 3 },
      }));
      const res = await fetch(`${url}/api/ingest/batch`, json(key, { events }));
      if (killed) return;
      expect(res.status).toBe(207);
      const { results } = (await res.json()) as { results: { status: number; event_id: string }[] };
      results.forEach((x, i) => acked.set(x.event_id, { sdk: events[i]!.sdk_run_id, poison: events[i]!.payload.poison }));
    };
    for (let b = 0; b < 30; b += 3) await Promise.all([send(b), send(b + 1), send(b + 2)]);
    // Wait until dead-lettering is under way, then kill.
    const deadline = Date.now() + 30_000;
    while (!(((await (await fetch(`${url}/healthz`)).json()) as { pipeline: { dead_letters: number } }).pipeline.dead_letters > 0)) {
      if (Date.now() > deadline) throw new Error(`no dead letter within 30 s:\n${first.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    // Health in either mode: the pipeline reports over pub/sub (Redis in scale mode) with the group's lag.
    const health = (await (await fetch(`${url}/healthz`)).json()) as { status: string; pipeline: { workers: number; lag_events: number; oldest_unprocessed_age_ms: number } };
    expect(health.pipeline.workers).toBeGreaterThanOrEqual(1);
    expect(health.pipeline.lag_events).toBeGreaterThanOrEqual(0);
    expect(health.pipeline.oldest_unprocessed_age_ms).toBeGreaterThanOrEqual(0);
    killed = true;
    first.child.kill("SIGKILL");
    await exited(first.child);
    expect(first.child.signalCode).toBe("SIGKILL");

    const second = await startServer(env, url);
    const poisoned = [...acked].filter(([, v]) => v.poison).map(([id]) => id);
    const listDead = () => JSON.parse(cli(env, "dead-letters", "list", "--email", email, "--limit", "1000", "--json")) as DeadLetter[];
    const storedIds = async () => {
      const ids = new Set<string>();
      for (let r = 0; r < RUNS; r++) {
        const body = (await (await fetch(`${url}/api/runs/dlq-${r}?limit=1000`, bearer(key))).json()) as { events?: { event_id: string }[] };
        for (const e of body.events ?? []) ids.add(e.event_id);
      }
      return ids;
    };
    let dead: DeadLetter[] = [];
    let stored = new Set<string>();
    for (const until = Date.now() + 60_000; ; ) {
      [dead, stored] = [listDead(), await storedIds()];
      const settled = [...acked.keys()].every((id) => stored.has(id) || dead.some((d) => d.event_id === id));
      if (settled) break;
      if (Date.now() > until) {
        const missing = [...acked].filter(([id]) => !stored.has(id) && !dead.some((d) => d.event_id === id));
        throw new Error(`${missing.length} of ${acked.size} acknowledged events neither stored (${stored.size}) nor dead-lettered (${dead.length}): ${JSON.stringify(missing.slice(0, 5))}\n${second.output()}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    // Exactly once: no event twice among dead letters, none both stored and dead-lettered, every poison dead-lettered.
    const deadIds = dead.map((d) => d.event_id!);
    expect(new Set(deadIds).size).toBe(deadIds.length);
    expect(deadIds.filter((id) => stored.has(id))).toEqual([]);
    expect(new Set(deadIds)).toEqual(new Set(poisoned));
    expect(dead.every((d) => /poison event/.test(d.error))).toBe(true);
    const human = cli(env, "dead-letters", "list", "--email", email, "--limit", "3");
    expect(human).toMatch(/#\d+ .* step +attempts \d+\n {4}error: .*poison event/);
    // The same letters by the project's slug; a project of the same owner without poison has none.
    const personal = (JSON.parse(cli(env, "project", "list", "--email", email, "--json")) as { slug: string; personal: boolean }[]).find((p) => p.personal)!;
    expect((JSON.parse(cli(env, "dead-letters", "list", "--project", personal.slug, "--limit", "1000", "--json")) as DeadLetter[]).map((d) => d.id)).toEqual(dead.map((d) => d.id));
    const clean = cli(env, "project", "create", "--email", email, "--name", "Clean");
    expect(cli(env, "dead-letters", "list", "--project", clean)).toBe("No dead letters: every acknowledged event was stored.");
    expect(() => cli(env, "dead-letters", "purge", "--project", "no-such-project")).toThrow(/no project with the slug no-such-project/);

    // Refused without a selection; then the fix and the replay.
    expect(() => cli(env, "dead-letters", "replay")).toThrow(/say which dead letters to replay/);
    await fs.rm(flag);
    expect(cli(env, "dead-letters", "replay", "--all")).toBe(`Replayed ${poisoned.length} dead letters into the event log.`);
    for (const until = Date.now() + 30_000; ; ) {
      stored = await storedIds();
      if (poisoned.every((id) => stored.has(id))) break;
      if (Date.now() > until) throw new Error(`replayed events not stored:\n${second.output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(cli(env, "dead-letters", "list", "--email", email)).toBe("No dead letters: every acknowledged event was stored.");
    expect(cli(env, "dead-letters", "replay", "--all")).toBe("Replayed 0 dead letters into the event log.");
    expect(cli(env, "dead-letters", "purge", "--all")).toBe("Purged 0 dead letters.");
    // Once each: every run holds each acknowledged event exactly once.
    let total = 0;
    for (let r = 0; r < RUNS; r++) {
      const body = (await (await fetch(`${url}/api/runs/dlq-${r}?limit=1000`, bearer(key))).json()) as { run: { event_count: number }; events: { event_id: string }[] };
      const ids = body.events.map((e) => e.event_id);
      expect(new Set(ids).size).toBe(ids.length);
      total += ids.length;
    }
    expect(total).toBe(acked.size);

    second.child.kill("SIGTERM");
    await exited(second.child);
  }, 240_000);
});
