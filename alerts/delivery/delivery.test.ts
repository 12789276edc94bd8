/**
 * Notification queue and delivery against real peers on loopback: an SMTP server receives the email, an HTTP
 * receiver gets the Slack and webhook payloads (HMAC verified), retries with backoff end in exactly one
 * delivery, dead letters, the SSRF guard, dedupe and the per-rule cooldown. Postgres is PGlite in a temp dir
 * (and a real server too when DATABASE_URL is set: the cooldown across two connection pools).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { openPglite } from "../../core/postgres/pglite.js";
import { migratePostgres } from "../../core/postgres/migrate.js";
import { memoryPubSub } from "../../core/pubsub/memory.js";
import { newRunRecord } from "../../core/events/run.js";
import { createLogger } from "../../core/logger.js";
import type { Sql } from "../../core/ports/sql.js";
import type { AlertFiring, AlertRule } from "../model.js";
import { createRule, getRule } from "../rules.js";
import { dispatchFirings, enqueueTest, getJob, listJobs } from "../queue.js";
import { loadNotificationSettings, backoffDelay } from "../settings.js";
import { verifySignature } from "../signature.js";
import { isPrivateAddress, checkTarget, TargetRefused } from "../../core/network/ssrf.js";
import { startNotificationWorker, deliverNow } from "./worker.js";
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from "../testing/peers.js";

const logger = createLogger("error");
const WEB = "http://runwatch.test";

let dir: string;
let sql: Sql;
let userId: number;
let receiver: HttpReceiver;
let smtp: SmtpReceiver;

const settings = (extra: Record<string, string> = {}) =>
  loadNotificationSettings({
    RUNWATCH_ALLOW_PRIVATE_WEBHOOKS: "1",
    RUNWATCH_NOTIFY_BACKOFF_MS: "40",
    RUNWATCH_NOTIFY_POLL_MS: "25",
    RUNWATCH_NOTIFY_TIMEOUT_MS: "3000",
    SMTP_HOST: "127.0.0.1",
    SMTP_PORT: String(smtp.port),
    SMTP_FROM: "Runwatch Alerts <alerts@runwatch.test>",
    ...extra,
  });

async function rule(channel: string, target: string, config: Record<string, unknown> = {}, trigger = "run_error"): Promise<AlertRule & { secret: string }> {
  const id = await createRule(sql, userId, { name: `${channel} rule ${Math.random().toString(36).slice(2, 6)}`, trigger_type: trigger, channel, target, config, enabled: true });
  if (id === "limit") throw new Error("limit");
  const r = (await getRule(sql, userId, id))!;
  return { id, project_id: userId, name: r.name, trigger_type: r.trigger_type, channel, target, config, secret: r.secret };
}

function firing(r: AlertRule, key: string, message = "planner run r-1 failed: TimeoutError: upstream timed out"): AlertFiring {
  const run = { ...newRunRecord({ project_id: userId, user_id: userId }, "r-1", "0190a0a0-0000-7000-8000-000000000001", "2026-11-23T10:00:00.000Z"), agent_name: "planner", status: "error" as const };
  return { key, rule: r, run, message, details: { error_type: "TimeoutError" } };
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-notify-"));
  sql = await openPglite(path.join(dir, "pg"));
  await migratePostgres(sql);
  const [u] = await sql.query<{ id: number }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Ops', 'ops@example.com', 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u");
  userId = Number(u!.id);
  receiver = await startHttpReceiver();
  smtp = await startSmtpReceiver();
});

afterAll(async () => {
  await receiver?.close();
  await smtp?.close();
  await sql?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe("channels, against real peers", () => {
  it("email: the SMTP server receives the notification with subject, text and a link to the run", async () => {
    const r = await rule("email", "oncall@example.com, lead@example.com");
    const { jobs } = await dispatchFirings(sql, [firing(r, "error:e-mail-1")], { publicWebUrl: WEB });
    expect(jobs).toHaveLength(1);
    const res = await deliverNow({ sql, pubsub: memoryPubSub(), settings: settings(), logger }, jobs[0]!);
    expect(res).toEqual({ status: "delivered" });
    const [mail] = await smtp.waitFor(1);
    expect(mail!.to).toEqual(["oncall@example.com", "lead@example.com"]);
    expect(mail!.from).toBe("alerts@runwatch.test");
    expect(mail!.raw).toMatch(/Subject: \[Runwatch\] email rule \w+: planner run r-1 failed/);
    expect(mail!.raw).toContain("http://runwatch.test/dashboard/r-1");
    expect(mail!.raw).toContain("text/html");
    expect((await getJob(sql, jobs[0]!))!.status).toBe("delivered");
  });

  it("email with SMTP auth: the credentials from SMTP_USER/SMTP_PASS are used", async () => {
    const authed = await startSmtpReceiver({ user: "mailer", pass: "s3cret" });
    try {
      const r = await rule("email", "ops@example.com");
      const jobId = await enqueueTest(sql, { ...r, project_id: userId }, { publicWebUrl: WEB });
      const s = settings({ SMTP_PORT: String(authed.port), SMTP_USER: "mailer", SMTP_PASS: "s3cret" });
      expect(await deliverNow({ sql, pubsub: memoryPubSub(), settings: s, logger }, jobId)).toEqual({ status: "delivered" });
      expect(authed.logins).toEqual([{ username: "mailer", password: "s3cret" }]);
      expect((await authed.waitFor(1))[0]!.raw).toContain("Test notification from Runwatch");
    } finally {
      await authed.close();
    }
  });

  it("slack: incoming-webhook JSON with header, message, facts and a button to the run", async () => {
    const r = await rule("slack", `${receiver.url}/slack/T000/B000/XXX`);
    const before = receiver.requests.length;
    const { jobs } = await dispatchFirings(sql, [firing(r, "error:slack-1")], { publicWebUrl: WEB });
    expect(await deliverNow({ sql, pubsub: memoryPubSub(), settings: settings(), logger }, jobs[0]!)).toEqual({ status: "delivered" });
    const req = (await receiver.waitFor(before + 1))[before]!;
    expect(req.path).toBe("/slack/T000/B000/XXX");
    expect(req.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(req.body);
    expect(body.text).toContain("planner run r-1 failed");
    expect(body.blocks.map((b: { type: string }) => b.type)).toEqual(["header", "section", "section", "actions"]);
    expect(body.blocks[3].elements[0].url).toBe("http://runwatch.test/dashboard/r-1");
  });

  it("webhook: signed JSON; the receiver verifies the HMAC over timestamp.body and rejects a tampered or replayed one", async () => {
    const r = await rule("webhook", `${receiver.url}/hooks/runwatch`);
    const before = receiver.requests.length;
    const { jobs } = await dispatchFirings(sql, [firing(r, "error:webhook-1")], { publicWebUrl: WEB });
    expect(await deliverNow({ sql, pubsub: memoryPubSub(), settings: settings(), logger }, jobs[0]!)).toEqual({ status: "delivered" });
    const req = (await receiver.waitFor(before + 1))[before]!;
    const sig = { signature: req.headers["x-runwatch-signature"] as string, timestamp: req.headers["x-runwatch-timestamp"] as string };
    expect(sig.signature).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature(r.secret, req.body, sig)).toEqual({ ok: true });
    expect(verifySignature("whsec_wrong", req.body, sig).ok).toBe(false);
    expect(verifySignature(r.secret, req.body.replace("planner", "plann3r"), sig).ok).toBe(false);
    expect(verifySignature(r.secret, req.body, sig, { now: Number(sig.timestamp) + 3600 })).toEqual({ ok: false, reason: "timestamp outside the tolerance (replay?)" });
    expect(req.headers["x-runwatch-delivery"]).toBe(String(jobs[0]));
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({ id: String(jobs[0]), type: "alert.fired", rule: { id: r.id, trigger_type: "run_error" }, run: { sdk_run_id: "r-1", agent_name: "planner" }, details: { error_type: "TimeoutError" } });
  });

  it("dashboard: a notification message on the project's PubSub channel", async () => {
    const pubsub = memoryPubSub();
    const got: [string, string][] = [];
    await pubsub.subscribePrefix("project.", (c, m) => got.push([c, m]));
    const r = await rule("dashboard", "");
    const { jobs } = await dispatchFirings(sql, [firing(r, "error:dash-1")], { publicWebUrl: WEB });
    expect(await deliverNow({ sql, pubsub, settings: settings(), logger }, jobs[0]!)).toEqual({ status: "delivered" });
    expect(got).toHaveLength(1);
    expect(got[0]![0]).toBe(`project.${userId}`);
    expect(JSON.parse(got[0]![1])).toMatchObject({ type: "notification", project_id: userId, id: jobs[0], rule: { id: r.id }, message: expect.stringContaining("failed"), url: "http://runwatch.test/dashboard/r-1" });
  });
});

describe("retries, backoff, dead letters", () => {
  it("a receiver that fails twice then succeeds gets exactly one successful delivery after retries", async () => {
    const flaky = await startHttpReceiver();
    flaky.respond = (i) => (i < 2 ? 503 : 200);
    const worker = await startNotificationWorker({ sql, pubsub: memoryPubSub(), settings: settings(), logger });
    try {
      const r = await rule("webhook", `${flaky.url}/flaky`);
      const { jobs } = await dispatchFirings(sql, [firing(r, "error:flaky-1")], { publicWebUrl: WEB });
      await flaky.waitFor(3);
      await expect.poll(async () => (await getJob(sql, jobs[0]!))!.status, { timeout: 5000 }).toBe("delivered");
      await new Promise((res) => setTimeout(res, 300)); // nothing more arrives
      expect(flaky.requests).toHaveLength(3);
      expect(flaky.requests.filter((_, i) => i >= 2)).toHaveLength(1); // the one that was answered 200
      const ids = new Set(flaky.requests.map((q) => q.headers["x-runwatch-delivery"]));
      expect(ids).toEqual(new Set([String(jobs[0])]));
      const job = (await getJob(sql, jobs[0]!))!;
      expect(job.attempts).toBe(3);
      expect(job.last_error).toBe("");
      // Backoff: the retries were spaced out (40 ms, then 80 ms, ±20%).
      expect(flaky.requests[1]!.at - flaky.requests[0]!.at).toBeGreaterThanOrEqual(30);
      expect(flaky.requests[2]!.at - flaky.requests[1]!.at).toBeGreaterThanOrEqual(60);
    } finally {
      await worker.close();
      await flaky.close();
    }
  });

  it("a receiver that always fails: the job goes dead after max attempts, with the last error", async () => {
    const down = await startHttpReceiver();
    down.respond = () => 500;
    const worker = await startNotificationWorker({ sql, pubsub: memoryPubSub(), settings: settings({ RUNWATCH_NOTIFY_MAX_ATTEMPTS: "3" }), logger });
    try {
      const r = await rule("webhook", `${down.url}/down`);
      const { jobs } = await dispatchFirings(sql, [firing(r, "error:down-1")], { publicWebUrl: WEB, maxAttempts: 3 });
      await expect.poll(async () => (await getJob(sql, jobs[0]!))!.status, { timeout: 5000 }).toBe("dead");
      const job = (await getJob(sql, jobs[0]!))!;
      expect(job.attempts).toBe(3);
      expect(job.last_error).toContain("HTTP 500");
      expect(down.requests).toHaveLength(3);
      expect((await listJobs(sql, userId)).find((j) => j.id === job.id)!.status).toBe("dead");
    } finally {
      await worker.close();
      await down.close();
    }
  });

  it("backoff doubles per attempt with jitter and a cap", () => {
    const s = { backoffMs: 1000, maxBackoffMs: 10_000 };
    expect(backoffDelay(s, 1, () => 0.5)).toBe(1000);
    expect(backoffDelay(s, 2, () => 0.5)).toBe(2000);
    expect(backoffDelay(s, 3, () => 0.5)).toBe(4000);
    expect(backoffDelay(s, 9, () => 0.5)).toBe(10_000);
    expect(backoffDelay(s, 2, () => 0)).toBe(1600);
    expect(backoffDelay(s, 2, () => 1)).toBe(2400);
  });
});

describe("SSRF guard", () => {
  it("classifies private, loopback, link-local and mapped addresses", () => {
    for (const ip of ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "::", "fe80::1", "fd00::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "::ffff:169.254.169.254", "224.0.0.1"]) {
      expect(isPrivateAddress(ip), ip).toBe(true);
    }
    for (const ip of ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "93.184.216.34"]) expect(isPrivateAddress(ip), ip).toBe(false);
  });

  it("refuses every special-use range and every IPv6 form that embeds an IPv4 address (security row l)", async () => {
    const special = [
      "::7f00:1", "::127.0.0.1", "::ffff:0:7f00:1", "::ffff:0:127.0.0.1", "64:ff9b::7f00:1", "64:ff9b:1::a9fe:a9fe",
      "2002:7f00:1::", "2001::1", "5f00::1", "100::1", "2001:db8::1", "192.0.0.8", "192.0.2.1", "198.18.0.1",
      "198.51.100.1", "203.0.113.1", "240.0.0.1", "255.255.255.255", "not-an-ip",
    ];
    for (const ip of special) expect(isPrivateAddress(ip), ip).toBe(true);
    await expect(checkTarget(new URL("http://[::7f00:1]:9/x"), false)).rejects.toThrow(/is not allowed/);
    await expect(checkTarget(new URL("http://[::ffff:0:7f00:1]:9/x"), false)).rejects.toThrow(/is not allowed/);
    await expect(checkTarget(new URL("http://0x7f.1:9/x"), false)).rejects.toThrow(/^host 127\.0\.0\.1 is not allowed/);
  });

  it("refuses loopback targets (literal and by name) unless allowed", async () => {
    await expect(checkTarget(new URL("http://127.0.0.1:9/x"), false)).rejects.toBeInstanceOf(TargetRefused);
    await expect(checkTarget(new URL("http://[::1]:9/x"), false)).rejects.toThrow(/is not allowed/);
    await expect(checkTarget(new URL("http://localhost:9/x"), false)).rejects.toThrow(/^host localhost is not allowed: [^0-9]*$/);
    await expect(checkTarget(new URL("http://169.254.169.254/latest/meta-data"), false)).rejects.toThrow(/^host 169\.254\.169\.254 is not allowed/);
    await expect(checkTarget(new URL("http://localhost:9/x"), true)).resolves.not.toHaveLength(0);
  });

  it("a delivery to a private address is refused and dead at once (no request made)", async () => {
    const r = await rule("webhook", `${receiver.url}/private`);
    const before = receiver.requests.length;
    const { jobs } = await dispatchFirings(sql, [firing(r, "error:private-1")], { publicWebUrl: WEB });
    const res = await deliverNow({ sql, pubsub: memoryPubSub(), settings: settings({ RUNWATCH_ALLOW_PRIVATE_WEBHOOKS: "0" }), logger }, jobs[0]!);
    expect(res?.status).toBe("dead");
    expect(res?.error).toMatch(/^target refused: host 127\.0\.0\.1 is not allowed/);
    expect(receiver.requests.length).toBe(before);
  });
});

describe("dedupe and cooldown", () => {
  it("the same firing key (a replayed batch) queues one job", async () => {
    const r = await rule("dashboard", "", { cooldown_seconds: 0 });
    const a = await dispatchFirings(sql, [firing(r, "error:same"), firing(r, "error:same")], { publicWebUrl: WEB });
    const b = await dispatchFirings(sql, [firing(r, "error:same")], { publicWebUrl: WEB });
    expect(a.jobs).toHaveLength(1);
    expect(b).toEqual({ jobs: [], suppressed: 0, duplicates: 1 });
  });

  it("1,000 firings of one rule in many concurrent dispatches: one notification per cooldown, the rest counted", async () => {
    // A window far longer than the burst takes on a loaded machine; its end is then brought forward by hand.
    const r = await rule("dashboard", "", { cooldown_seconds: 3600 });
    const all = Array.from({ length: 1000 }, (_, i) => firing(r, `error:storm-${i}`));
    const chunks = Array.from({ length: 20 }, (_, i) => all.slice(i * 50, i * 50 + 50));
    const results = await Promise.all(chunks.map((c) => dispatchFirings(sql, c, { publicWebUrl: WEB })));
    expect(results.flatMap((x) => x.jobs)).toHaveLength(1);
    expect(results.reduce((n, x) => n + x.suppressed, 0)).toBe(999);
    const [state] = await sql.query<{ suppressed: number }>("SELECT suppressed FROM alert_rule_state WHERE rule_id = $1", [r.id]);
    expect(Number(state!.suppressed)).toBe(999);
    // After the window, the next firing is sent and reports what was suppressed.
    await sql.query("UPDATE alert_rule_state SET cooldown_until = now() - interval '1 second' WHERE rule_id = $1", [r.id]);
    const next = await dispatchFirings(sql, [firing(r, "error:storm-after")], { publicWebUrl: WEB });
    expect(next.jobs).toHaveLength(1);
    expect((await getJob(sql, next.jobs[0]!))!.payload.suppressed_since_last).toBe(999);
  });

  it("a disabled or deleted rule queues nothing", async () => {
    const r = await rule("dashboard", "");
    await sql.query("UPDATE alert_rules SET enabled = false WHERE id = $1", [r.id]);
    expect((await dispatchFirings(sql, [firing(r, "error:off")], { publicWebUrl: WEB })).jobs).toHaveLength(0);
    await sql.query("DELETE FROM alert_rules WHERE id = $1", [r.id]);
    expect((await dispatchFirings(sql, [firing(r, "error:gone")], { publicWebUrl: WEB })).jobs).toHaveLength(0);
  });
});

describe.skipIf(!process.env.DATABASE_URL && process.env.REQUIRE_SERVICES !== "1")("cooldown across processes (Postgres server)", () => {
  it("two connection pools firing the same rule at once send one notification", async () => {
    if (!process.env.DATABASE_URL) throw new Error("REQUIRE_SERVICES=1 but DATABASE_URL is not set");
    const { openPg } = await import("../../core/postgres/pg.js");
    const a = await openPg(process.env.DATABASE_URL);
    const b = await openPg(process.env.DATABASE_URL);
    try {
      await migratePostgres(a);
      const [u] = await a.query<{ id: number }>("WITH u AS (INSERT INTO users (name, email, password_hash) VALUES ('Ops', $1, 'x') RETURNING id), p AS (INSERT INTO projects (id, slug, name, personal_of) SELECT id, 'p-' || id, 'P', id FROM u) SELECT id FROM u", [`ops-${Date.now()}@example.com`]);
      const uid = Number(u!.id);
      const id = await createRule(a, uid, { name: "storm", trigger_type: "run_error", channel: "dashboard", target: "", config: { cooldown_seconds: 60 }, enabled: true });
      const r: AlertRule = { id: id as number, project_id: uid, name: "storm", trigger_type: "run_error", channel: "dashboard", target: "", config: {} };
      const all = Array.from({ length: 400 }, (_, i) => ({ ...firing(r, `error:pg-${i}`), rule: r }));
      const results = await Promise.all(all.map((f, i) => dispatchFirings(i % 2 ? a : b, [f], { publicWebUrl: WEB })));
      expect(results.flatMap((x) => x.jobs)).toHaveLength(1);
      expect(results.reduce((n, x) => n + x.suppressed, 0)).toBe(399);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
