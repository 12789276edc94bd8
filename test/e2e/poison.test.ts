/**
 * No event can stop the pipeline (docs/PIPELINE.md "Failure isolation", docs/API.md "Values that can be stored"),
 * over real HTTP with the real embedded stores:
 * - the poison set (NUL, lone surrogates, dates out of range, unsafe or negative numbers, deep JSON, huge strings)
 *   is refused with a 422 naming the field or repaired, through single and batch ingest; valid events of the same
 *   and of another tenant sent afterwards are stored within seconds;
 * - events that fail in the pipeline anyway (a plugin that throws, a record written before these rules, a record
 *   that is not JSON) are dead-lettered alone; the rest of their batch and other tenants' events are stored;
 *   acknowledged = stored + dead-lettered; /healthz and the owner's dashboard show them, another tenant does not;
 * - a dead letter replayed after the fix is stored once, however often it is replayed;
 * - /metrics counts what the pipeline, each plugin and each background job did.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoggedEvent } from "../../core/events/schema.js";
import { encodeBatch } from "../../core/events/wire.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { runAdmin } from "../../deploy/admin.js";
import { countDeadLetters, listDeadLetters } from "../../stores/dead-letters.js";
import { bearer, json, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { appendEvents } from "../../core/log/events.js";
import { createRule, publishRulesChanged } from "../../alerts/index.js";

const FIXTURE = path.resolve(import.meta.dirname, "fixtures/poison-plugin.ts");
let srv: TestServer;
let flag: string;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  flag = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-poison-")), "poison-on");
  await fs.writeFile(flag, "");
  process.env.RUNWATCH_TEST_POISON_FLAG = flag;
  srv = await startTestServer({
    pipeline: true,
    jobs: true,
    pipelineOptions: { maxWaitMs: 5, singleRetryDelaysMs: [10] },
    // No prompt experiment worker: on a shared database it would take other test files' jobs (their items asked of
    // an agents-service that is not this file's).
    env: { RUNWATCH_PLUGINS: FIXTURE, RUNWATCH_MAX_BODY_BYTES: String(4 * 1024 * 1024), RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000", RUNWATCH_PROMPT_EXPERIMENT_JOBS: "0" },
  });
  alice = await srv.account();
  bob = await srv.account();
});
afterAll(async () => {
  await srv?.close();
  await fs.rm(path.dirname(flag), { recursive: true, force: true }).catch(() => {});
});

const post = (p: string, key: string, body: unknown) => fetch(`${srv.url}${p}`, json(key, body));

/** Event ids of a user that ClickHouse holds (deduplicated). */
async function storedIds(userId: number): Promise<Set<string>> {
  const rows = await srv.ports.clickhouse.query<{ event_id: string }>(
    "SELECT DISTINCT toString(event_id) AS event_id FROM agent_events WHERE user_id = {uid:UInt64}",
    { uid: userId },
  );
  return new Set(rows.map((r) => r.event_id));
}

async function deadIds(userId: number): Promise<Set<string>> {
  return new Set((await listDeadLetters(srv.ports.sql, { projectId: userId, limit: 1000 })).map((d) => d.event_id!));
}

async function eventually<T>(what: string, fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms; last: ${JSON.stringify(v, (_k, x) => (x instanceof Set ? [...x] : x)).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const nested = (depth: number): unknown => (depth === 0 ? "leaf" : { d: nested(depth - 1) });

/** The poison set: [what, event, expected status, the field a 422 names]. */
const POISON: [string, Record<string, unknown>, 202 | 422, string?][] = [
  ["NUL in agent_name", { event_type: "run_start", sdk_run_id: "p-nul-agent", agent_name: "bad\u0000agent", payload: {} }, 422, "agent_name"],
  ["lone surrogate in agent_name", { event_type: "run_start", sdk_run_id: "p-sur-agent", agent_name: "bad\ud800", payload: {} }, 422, "agent_name"],
  ["NUL in sdk_run_id", { event_type: "step", sdk_run_id: "p\u0000run", payload: { node_name: "n", phase: "start" } }, 422, "sdk_run_id"],
  ["NUL in payload text", { event_type: "run_start", sdk_run_id: "p-nul-text", agent_name: "poison-agent", payload: { input: "before\u0000after" } }, 202],
  ["lone surrogate in payload text", { event_type: "step", sdk_run_id: "p-nul-text", payload: { node_name: "cut\ud83d", phase: "start", output: "stream cut \udc00" } }, 202],
  ["NUL and surrogate in an object key", { event_type: "step", sdk_run_id: "p-nul-text", payload: { node_name: "n", phase: "end", output: { "k\u0000": 1, "j\ud800": 2 } } }, 202],
  ["date after 2200", { event_type: "step", sdk_run_id: "p-date", occurred_at: "2201-01-01T00:00:00Z", payload: { node_name: "n", phase: "start" } }, 422, "occurred_at"],
  ["date before 1970", { event_type: "step", sdk_run_id: "p-date", occurred_at: "1969-12-31T23:59:59Z", payload: { node_name: "n", phase: "start" } }, 422, "occurred_at"],
  ["tokens beyond 2^53", { event_type: "run_end", sdk_run_id: "p-num", payload: { prompt_tokens: 2 ** 60 } }, 422, "payload.prompt_tokens"],
  ["negative count", { event_type: "run_end", sdk_run_id: "p-num", payload: { total_tokens: -1 } }, 422, "payload.total_tokens"],
  ["negative cost", { event_type: "run_end", sdk_run_id: "p-num", payload: { cost_usd: -0.01 } }, 422, "payload.cost_usd"],
  ["huge cost", { event_type: "run_end", sdk_run_id: "p-num", payload: { cost_usd: 1e300 } }, 422, "payload.cost_usd"],
  ["negative duration", { event_type: "step", sdk_run_id: "p-num", payload: { node_name: "n", phase: "end", duration_ms: -5 } }, 422, "payload.duration_ms"],
  ["config_version beyond UInt32", { event_type: "step", sdk_run_id: "p-num", config_version: 2 ** 32, payload: { node_name: "n", phase: "end" } }, 422, "config_version"],
  ["JSON 100 deep", { event_type: "step", sdk_run_id: "p-deep", payload: { node_name: "n", phase: "end", output: nested(100) } }, 422, "payload.output"],
  ["a 1.5 M-character string", { event_type: "step", sdk_run_id: "p-big", payload: { node_name: "n", phase: "end", output: "x".repeat(1_500_000) } }, 422, "payload.output"],
];

describe("the poison set at ingest", () => {
  it.each(POISON)("single: %s", async (_what, event, status, field) => {
    const res = await post("/api/ingest", alice.key, event);
    const body = (await res.json()) as { error?: { field?: string; message: string } };
    expect(res.status, JSON.stringify(body)).toBe(status);
    if (status === 422) {
      expect(body.error!.field === field || body.error!.field?.startsWith(`${field}.`), JSON.stringify(body)).toBe(true);
      expect(body.error!.message).toContain(field!.split(".").pop()!);
    }
  });

  it("batch: each item answered on its own, and valid events of both tenants are stored right after", async () => {
    const res = await post("/api/ingest/batch", alice.key, { events: POISON.filter(([w]) => !w.includes("1.5 M")).map(([, e]) => e) });
    expect(res.status).toBe(207);
    const body = (await res.json()) as { results: { status: number; error?: { field: string } }[] };
    POISON.filter(([w]) => !w.includes("1.5 M")).forEach(([what, , status], i) => expect(body.results[i]!.status, what).toBe(status));

    // What the gateway fans out to dashboards: the live broadcast of the valid events that follow.
    const pushed: string[] = [];
    const unsubscribe = await srv.ports.pubsub.subscribePrefix("user.", (channel, message) => pushed.push(`${channel} ${message}`));
    const t0 = Date.now();
    expect((await post("/api/ingest", alice.key, { event_type: "run_start", sdk_run_id: "after-poison-a", agent_name: "ok-agent", payload: {} })).status).toBe(202);
    expect((await post("/api/ingest", bob.key, { event_type: "run_start", sdk_run_id: "after-poison-b", agent_name: "ok-agent", payload: {} })).status).toBe(202);
    await waitForRun(srv.url, alice.key, "after-poison-a", (b) => b.events.length === 1, 5_000);
    await waitForRun(srv.url, bob.key, "after-poison-b", (b) => b.events.length === 1, 5_000);
    expect(Date.now() - t0).toBeLessThan(5_000);
    for (const [who, run] of [[alice, "after-poison-a"], [bob, "after-poison-b"]] as const) {
      for (let i = 0; !pushed.some((m) => m.startsWith(`user.${who.id} `) && m.includes(run)); i++) {
        if (i > 50) throw new Error(`no live broadcast of ${run}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    await unsubscribe();

    // The repaired events are stored with U+FFFD where the bad characters were.
    const run = await waitForRun(srv.url, alice.key, "p-nul-text", (b) => b.events.length >= 3);
    const [start, step, keys] = run.events;
    expect(start!.payload.input).toBe("before\uFFFDafter");
    expect(step!.payload.node_name).toBe("cut\uFFFD");
    expect(step!.payload.output).toBe("stream cut \uFFFD");
    expect(Object.keys(keys!.payload.output as object).sort()).toEqual(["j\uFFFD", "k\uFFFD"]);
    expect(run.run.agent_name).toBe("poison-agent");
  });
});

describe("events that fail in the pipeline", () => {
  it("are dead-lettered alone: the rest of the batch and the other tenant are stored; acknowledged = stored + dead-lettered", async () => {
    const acked = new Map<string, number>(); // event_id → user
    const poisoned = new Set<string>();
    for (const [who, n] of [[alice, 0], [bob, 1]] as const) {
      const events = Array.from({ length: 120 }, (_, i) => ({
        event_type: i === 0 ? "run_start" : "step",
        sdk_run_id: `iso-${n}-${i % 4}`,
        agent_name: "iso-agent",
        payload: { node_name: `n${i}`, phase: "end", poison: who === alice && i % 40 === 7 },
      }));
      const res = await post("/api/ingest/batch", who.key, { events });
      expect(res.status).toBe(207);
      const { results } = (await res.json()) as { results: { status: number; event_id: string }[] };
      results.forEach((r, i) => {
        expect(r.status).toBe(202);
        acked.set(r.event_id, who.id);
        if (events[i]!.payload.poison) poisoned.add(r.event_id);
      });
    }
    // A single poison event too.
    const single = await post("/api/ingest", alice.key, { event_type: "step", sdk_run_id: "iso-single", payload: { node_name: "x", phase: "end", poison: true } });
    const singleId = ((await single.json()) as { event_id: string }).event_id;
    acked.set(singleId, alice.id);
    poisoned.add(singleId);

    // Records acknowledged before today's value rules (written straight to the log), and a record that is not JSON.
    const legacy = (sdk: string, agent: string): LoggedEvent => ({
      event_id: uuidv7(), project_id: alice.id, user_id: alice.id, run_id: runIdFor(alice.id, sdk), sdk_run_id: sdk, event_type: "run_start",
      agent_name: agent, payload: { input: "lone \ud800 surrogate" }, occurred_at: new Date().toISOString(),
      received_at: new Date().toISOString(), config_version: null,
    });
    const legacyNul = legacy("legacy-nul", "nul\u0000agent");
    await appendEvents(srv.ports.log, [legacyNul, legacy("legacy-surrogate", "fine-agent")]);
    await srv.ports.log.append({ ...encodeBatch([new TextEncoder().encode("{not json at all")]), keys: ["garbage"] });

    const wantStored = [...acked].filter(([id]) => !poisoned.has(id));
    await eventually("every acknowledged event stored or dead-lettered", async () => {
      const [a, b, da] = await Promise.all([storedIds(alice.id), storedIds(bob.id), deadIds(alice.id)]);
      return { missing: wantStored.filter(([id, u]) => !(u === alice.id ? a : b).has(id)).length, dead: [...poisoned].filter((id) => da.has(id)).length };
    }, (v) => v.missing === 0 && v.dead === poisoned.size);

    const [storedA, storedB, deadA, deadB] = await Promise.all([storedIds(alice.id), storedIds(bob.id), deadIds(alice.id), deadIds(bob.id)]);
    for (const [id, u] of acked) {
      const stored = (u === alice.id ? storedA : storedB).has(id);
      const dead = (u === alice.id ? deadA : deadB).has(id);
      expect(stored !== dead, `event ${id}: stored ${stored}, dead-lettered ${dead}`).toBe(true);
    }
    expect(deadB.size).toBe(0);

    // The legacy NUL agent is dead-lettered (Postgres refuses it); the surrogate one is stored or dead-lettered, never lost.
    await eventually("legacy records settled", async () => ({ dead: await deadIds(alice.id), stored: await storedIds(alice.id) }),
      (v) => v.dead.has(legacyNul.event_id) || v.stored.has(legacyNul.event_id));
    const all = await listDeadLetters(srv.ports.sql, { limit: 1000 });
    const garbage = all.find((d) => d.raw === "{not json at all");
    expect(garbage?.project_id).toBeNull();
    expect(garbage?.error).toMatch(/not JSON/);

    // Health and the owner's dashboard say so; the other tenant sees nothing of it.
    // Workers report every 2 s (core/pipeline-health.ts); the first report may predate the web's subscription,
    // which on Redis (scale mode) comes a moment after the pipeline starts — so wait for one.
    const health = await eventually("a pipeline worker reported to /healthz",
      async () => (await (await fetch(`${srv.url}/healthz`)).json()) as { status: string; pipeline: Record<string, number> },
      (h) => h.pipeline.workers === 1);
    expect(health.pipeline.dead_letters).toBeGreaterThanOrEqual(poisoned.size + 1);
    expect(Object.keys(health.pipeline).sort()).toEqual(["dead_letters", "lag_events", "oldest_unprocessed_age_ms", "workers"]);
    expect(JSON.stringify(health)).not.toContain(String(alice.email));

    const page = async (who: typeof alice, p: string) => (await (await loginJar(srv.url, who.email)).fetch(`${srv.url}${p}`)).text();
    const mine = await page(alice, "/dead-letters");
    expect(mine).toContain(singleId);
    expect(mine).toContain("poison event");
    expect(await page(alice, "/dashboard")).toContain('id="dead-letter-banner"');
    const theirs = await page(bob, "/dead-letters");
    expect(theirs).not.toContain(singleId);
    expect(theirs).toContain("Every event you sent was stored");
    expect(await page(bob, "/dashboard")).not.toContain('id="dead-letter-banner"');
  }, 60_000);

  it("a replayed dead letter is stored once after the fix, however often it is replayed", async () => {
    const res = await post("/api/ingest", alice.key, { event_type: "step", sdk_run_id: "replay-run", payload: { node_name: "r", phase: "end", poison: true } });
    const { event_id } = (await res.json()) as { event_id: string };
    await eventually("dead-lettered", () => deadIds(alice.id), (d) => d.has(event_id));

    await fs.rm(flag); // the fix
    const letter = (await listDeadLetters(srv.ports.sql, { projectId: alice.id, limit: 1000 })).find((d) => d.event_id === event_id)!;
    const r1 = await runAdmin({ sql: srv.ports.sql, log: srv.ports.log }, { cmd: "dead-letters.replay", ids: [letter.id] });
    expect(r1).toEqual({ replayed: 1, skipped: [] });
    await waitForRun(srv.url, alice.key, "replay-run", (b) => b.events.length === 1);
    // Replaying again (a replayed letter is no longer pending) and replaying the event itself store nothing new.
    expect(await runAdmin({ sql: srv.ports.sql, log: srv.ports.log }, { cmd: "dead-letters.replay", ids: [letter.id] })).toEqual({ replayed: 0, skipped: [] });
    const raw = JSON.parse(letter.raw) as LoggedEvent;
    await appendEvents(srv.ports.log, [raw]);
    await new Promise((r) => setTimeout(r, 500));
    const body = await waitForRun(srv.url, alice.key, "replay-run", (b) => b.run.event_count === 1);
    expect(body.events.map((e) => e.event_id)).toEqual([event_id]);
    expect(await countDeadLetters(srv.ports.sql, { projectId: alice.id, ids: [letter.id] })).toBe(0);
    await fs.writeFile(flag, "");
  }, 30_000);
});

describe("GET /healthz", () => {
  it("answers the pipeline's lag, the age of its oldest unprocessed event and the dead-letter count, without tenant data", async () => {
    const res = await fetch(`${srv.url}/healthz`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { status: string; pipeline: { lag_events: number; oldest_unprocessed_age_ms: number; dead_letters: number } };
    expect(["ok", "degraded"]).toContain(body.status);
    expect(body.pipeline.lag_events).toBeGreaterThanOrEqual(0);
    expect(body.pipeline.oldest_unprocessed_age_ms).toBeGreaterThanOrEqual(0);
    expect(Number.isInteger(body.pipeline.dead_letters)).toBe(true);
    expect(await fetch(`${srv.url}/healthz`, bearer("nope")).then((r) => r.status)).toBe(200);
  });
});

describe("GET /metrics", () => {
  /** The samples of a Prometheus text exposition, checked line by line: each sample's metric has a TYPE before it. */
  const parse = (text: string): Map<string, number> => {
    const samples = new Map<string, number>();
    const typed = new Set<string>();
    for (const line of text.trimEnd().split("\n")) {
      const declared = /^# (HELP|TYPE) (runwatch_[a-z_]+) \S.*$/.exec(line);
      if (declared) {
        if (declared[1] === "TYPE") typed.add(declared[2]!);
        continue;
      }
      const sample = /^(runwatch_[a-z_]+)(\{(?:[a-z_]+="(?:[^"\\]|\\.)*",?)+\})? (-?[0-9.]+(?:e[+-]?[0-9]+)?)$/.exec(line);
      expect(sample, `not a sample line: ${line}`).not.toBeNull();
      const name = sample![1]!;
      expect(typed.has(name) || typed.has(name.replace(/_(bucket|sum|count)$/, "")), `no TYPE before ${line}`).toBe(true);
      samples.set(`${name}${sample![2] ?? ""}`, Number(sample![3]));
    }
    return samples;
  };

  it("counts what the pipeline took in, stored and skipped as duplicates, with its part latency, each plugin's and each job's figures, in the Prometheus text format", async () => {
    const read = async () => {
      const res = await fetch(`${srv.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
      return parse(await res.text());
    };
    const before = await eventually("the pipeline and the jobs reported their counters", read,
      (m) => m.has("runwatch_pipeline_events_stored_total") && m.has('runwatch_job_passes_total{job="notifications"}'));
    // A rule that fires on the run's error: the notifications job then has one to deliver.
    await createRule(srv.ports.sql, bob.id, { name: "metrics", trigger_type: "run_error", channel: "dashboard", target: "", config: {}, enabled: true });
    await publishRulesChanged(srv.ports.pubsub, bob.id);
    const events = Array.from({ length: 30 }, (_, i) => ({ event_type: i === 0 ? "run_start" : "step", sdk_run_id: "metrics-run", agent_name: "m", payload: { node_name: `n${i}`, phase: "end" } }));
    events.push({ event_type: "error", sdk_run_id: "metrics-run", agent_name: "m", payload: { error_type: "MetricsError", message: "counted" } as never });
    const res = await post("/api/ingest/batch", bob.key, { events });
    const { results } = (await res.json()) as { results: { event_id: string }[] };
    // The same events again, as a client retry: counted as duplicates, not stored twice.
    await post("/api/ingest/batch", bob.key, { events: events.map((e, i) => ({ ...e, event_id: results[i]!.event_id })) });
    // And one the test plugin fails on (armed again: a test before may have "fixed" it), dead-lettered.
    await fs.writeFile(flag, "");
    expect((await post("/api/ingest", bob.key, { event_type: "run_start", sdk_run_id: "metrics-poison", agent_name: "m", payload: { poison: true } })).status).toBe(202);
    const grewBy = (m: Map<string, number>, name: string) => (m.get(name) ?? 0) - (before.get(name) ?? 0);
    const after = await eventually("the new events counted, and their notification delivered", read,
      (m) => grewBy(m, "runwatch_pipeline_events_stored_total") >= 31 && grewBy(m, "runwatch_pipeline_events_duplicate_total") >= 31 &&
        grewBy(m, 'runwatch_job_items_total{job="notifications"}') >= 1 && grewBy(m, 'runwatch_plugin_errors_total{plugin="test-poison",hook="on_event"}') >= 1);
    const grew = (name: string) => grewBy(after, name);
    // At least: events of the tests before may still be finishing.
    expect(grew("runwatch_pipeline_events_stored_total")).toBeGreaterThanOrEqual(31);
    expect(grew("runwatch_pipeline_events_received_total")).toBeGreaterThanOrEqual(62);
    expect(grew("runwatch_pipeline_parts_total")).toBeGreaterThanOrEqual(1);
    expect(after.get("runwatch_pipeline_part_seconds_count")).toBe(after.get("runwatch_pipeline_parts_total"));
    expect(after.get('runwatch_pipeline_part_seconds_bucket{le="+Inf"}')).toBe(after.get("runwatch_pipeline_part_seconds_count"));
    expect(after.get("runwatch_pipeline_workers")).toBe(1);
    expect(after.get("runwatch_pipeline_run_records")).toBeGreaterThanOrEqual(1);

    // Each plugin's own figures, by hook: the events went through every onEvent, the stored parts to the later hooks.
    expect(grew('runwatch_plugin_calls_total{plugin="status-machine",hook="on_event"}')).toBeGreaterThanOrEqual(62);
    expect(grew('runwatch_plugin_events_total{plugin="test-poison",hook="on_event"}')).toBeGreaterThanOrEqual(62);
    expect(grew('runwatch_plugin_seconds_total{plugin="status-machine",hook="on_event"}')).toBeGreaterThan(0);
    expect(grew('runwatch_plugin_events_total{plugin="broadcast",hook="after_events_stored"}')).toBeGreaterThanOrEqual(62);
    expect(grew('runwatch_plugin_runs_total{plugin="broadcast",hook="after_events_stored"}')).toBeGreaterThanOrEqual(1);
    expect(grew('runwatch_plugin_calls_total{plugin="alert-evaluation",hook="after_commit"}')).toBeGreaterThanOrEqual(1);
    expect(grew('runwatch_plugin_seconds_total{plugin="alert-evaluation",hook="after_commit"}')).toBeGreaterThan(0);
    // The poison event failed in the test plugin, and in no other.
    expect(grew('runwatch_plugin_errors_total{plugin="test-poison",hook="on_event"}')).toBeGreaterThanOrEqual(1);
    expect(after.get('runwatch_plugin_errors_total{plugin="status-machine",hook="on_event"}')).toBe(0);
    // Each background job's own: the notifications job delivered the alert (it polls: its passes move on their own).
    expect(grew('runwatch_job_passes_total{job="notifications"}')).toBeGreaterThanOrEqual(1);
    expect(after.get('runwatch_job_failures_total{job="notifications"}')).toBe(0);
    expect(after.get('runwatch_job_seconds_total{job="notifications"}')).toBeGreaterThan(0);
    expect(after.get('runwatch_job_passes_total{job="evaluation"}')).toBeGreaterThanOrEqual(1);
    expect(after.has('runwatch_job_passes_total{job="retention"}')).toBe(true); // its first sweep is a minute after start

    const verbose = (await (await fetch(`${srv.url}/healthz?verbose=1`)).json()) as { pipeline: { counters: { counters: Record<string, number> } } };
    expect(verbose.pipeline.counters.counters.events_stored).toBeGreaterThanOrEqual(after.get("runwatch_pipeline_events_stored_total")!);
    expect(JSON.stringify(verbose)).not.toContain(String(bob.email));
  }, 30_000);
});
