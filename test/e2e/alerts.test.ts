/**
 * Alerts end to end: a real web server with the pipeline (file log, chDB, PGlite in a temp dir), the notification
 * worker, the realtime gateway and real peers on loopback. Rules are managed through the /alerts forms (session
 * + CSRF), events go through POST /api/ingest, notifications arrive at an HTTP receiver or a WebSocket client.
 */
process.env.RUNWATCH_ALLOW_PRIVATE_WEBHOOKS = "1";
process.env.RUNWATCH_NOTIFY_BACKOFF_MS = "50";
process.env.RUNWATCH_NOTIFY_POLL_MS = "50";
process.env.RUNWATCH_ALERT_SWEEP_MS = "300";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import WebSocket from "ws";
import { CookieJar, csrfFrom, json, startTestServer, type TestServer } from "./harness.js";
import { startNotificationWorker, type NotificationWorker } from "../../alerts/index.js";
import { startHttpReceiver, type HttpReceiver } from "../../alerts/testing/peers.js";
import { verifySignature } from "../../alerts/index.js";
import { startGateway, type Gateway } from "../../gateway/server.js";
import { REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../../core/tokens.js";
import type { SessionUser } from "../../web/deps.js";

const SECRET = "alerts-e2e-secret-0123456789abcdef";
const TOKENS_TRIGGER = fileURLToPath(new URL("./fixtures/tokens-trigger.ts", import.meta.url));

let srv: TestServer;
let worker: NotificationWorker;
let gateway: Gateway;
let receiver: HttpReceiver;
let user: SessionUser;
let key: string;
let jar: CookieJar;

async function page(path: string): Promise<string> {
  const res = await jar.fetch(`${srv.url}${path}`);
  expect(res.status).toBe(200);
  return res.text();
}

/** Submits the rule form like a browser (CSRF token from the page). */
async function submitRule(fields: Record<string, string>, action = "/alerts"): Promise<Response> {
  const csrf = csrfFrom(await page("/alerts/new"));
  return jar.form(`${srv.url}${action}`, { _csrf: csrf, enabled: "on", ...fields });
}

async function ruleIdByName(name: string): Promise<number> {
  const [r] = await srv.ports.sql.query<{ id: number }>("SELECT id FROM alert_rules WHERE project_id = $1 AND name = $2", [user.id, name]);
  return Number(r!.id);
}

async function jobsOf(ruleId: number) {
  return srv.ports.sql.query<{ id: number; status: string; payload: any; attempts: number; kind: string }>(
    "SELECT id, status, payload, attempts, kind FROM notification_jobs WHERE rule_id = $1 ORDER BY id", [ruleId]);
}

const ingest = (body: unknown) => fetch(`${srv.url}/api/ingest`, json(key, body));
const ingestBatch = (events: unknown[]) => fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));

function wsClient(uid: number) {
  const ws = new WebSocket(`${gateway.url}/ws`, [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${signRealtimeToken(SECRET, uid, "alerts-test-session-0001", 60, Date.now(), uid).token}`]);
  const frames: any[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
  return { ws, frames };
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000", RUNWATCH_PUBLIC_URL: "http://runwatch.test", RUNWATCH_ALERT_TRIGGERS: TOKENS_TRIGGER } });
  worker = await startNotificationWorker({ sql: srv.ports.sql, pubsub: srv.ports.pubsub });
  gateway = await startGateway(srv.ports, { ...srv.ports.config, gatewayPort: 0 }, { sessionSecret: SECRET });
  receiver = await startHttpReceiver();
  user = await srv.user();
  key = await srv.key(user.id);
  jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
  const res = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" });
  expect(res.status).toBe(302);
});

afterAll(async () => {
  await worker?.close();
  await gateway?.close();
  await receiver?.close();
  await srv?.close();
});

describe("/alerts rule management", () => {
  it("validation errors are shown next to the fields (422), and forms need the CSRF token", async () => {
    const bad = await submitRule({ name: "", trigger_type: "run_cost_above", channel: "webhook", target: "ftp://example.com", "config.threshold_usd": "-1" });
    expect(bad.status).toBe(422);
    const html = await bad.text();
    expect(html).toContain("Give the rule a name.");
    expect(html).toContain("must be an http:// or https:// URL");
    expect(html).toContain("Threshold (USD): the threshold must be greater than 0");
    const missing = await submitRule({ name: "x", trigger_type: "run_duration_above", channel: "dashboard" });
    expect(await missing.text()).toContain("Longer than (seconds) is required");
    const email = await submitRule({ name: "x", trigger_type: "run_error", channel: "email", target: "not-an-address" });
    expect(await email.text()).toContain("“not-an-address” is not an email address");
    const forged = await jar.form(`${srv.url}/alerts`, { name: "forged", trigger_type: "run_error", channel: "dashboard" });
    expect(forged.status).toBe(403);
    expect(await srv.ports.sql.query("SELECT 1 FROM alert_rules WHERE name = 'forged'")).toHaveLength(0);
  });

  it("create, edit, disable/enable, test-send (signed), history, delete", async () => {
    const created = await submitRule({ name: "Hook", trigger_type: "run_error", channel: "webhook", target: `${receiver.url}/hook`, "config.agent_name": "planner" });
    expect(created.status).toBe(302);
    const id = await ruleIdByName("Hook");
    expect(created.headers.get("location")).toBe(`/alerts/${id}/edit?notice=created`);
    const edit = await page(`/alerts/${id}/edit?notice=created`);
    const secret = /<code id="rule-secret">([^<]+)<\/code>/.exec(edit)![1]!;
    expect(secret).toMatch(/^whsec_[0-9a-f]{48}$/);

    const csrf = csrfFrom(edit);
    const saved = await jar.form(`${srv.url}/alerts/${id}`, { _csrf: csrf, name: "Hook (planner)", trigger_type: "run_error", channel: "webhook", target: `${receiver.url}/hook2`, enabled: "on", "config.agent_name": "planner", "config.cooldown_seconds": "120" });
    expect(saved.headers.get("location")).toBe("/alerts?notice=updated");
    let list = await page("/alerts");
    expect(list).toContain("Hook (planner)");
    expect(list).toContain("agent: planner");
    expect(list).toContain("cooldown 120 s");

    await jar.form(`${srv.url}/alerts/${id}/toggle`, { _csrf: csrf });
    expect((await srv.ports.sql.query<{ enabled: boolean }>("SELECT enabled FROM alert_rules WHERE id = $1", [id]))[0]!.enabled).toBe(false);
    await jar.form(`${srv.url}/alerts/${id}/toggle`, { _csrf: csrf });
    expect((await srv.ports.sql.query<{ enabled: boolean }>("SELECT enabled FROM alert_rules WHERE id = $1", [id]))[0]!.enabled).toBe(true);

    const before = receiver.requests.length;
    const test = await jar.form(`${srv.url}/alerts/${id}/test`, { _csrf: csrf });
    expect(test.status).toBe(302);
    const req = (await receiver.waitFor(before + 1))[before]!;
    expect(req.path).toBe("/hook2");
    expect(req.headers["x-runwatch-event"]).toBe("alert.test");
    expect(verifySignature(secret, req.body, { signature: req.headers["x-runwatch-signature"] as string, timestamp: req.headers["x-runwatch-timestamp"] as string })).toEqual({ ok: true });
    // The attempt runs after the answer: the history shows it once it is delivered.
    for (let i = 0; i < 50; i++) {
      list = await page(test.headers.get("location")!.replace("#history", ""));
      if (list.includes('data-status="delivered"')) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(list).toContain("Test notification delivered via webhook.");
    expect(list).toMatch(/<tr data-job-id="\d+" data-status="delivered">/);

    // Another user cannot touch it.
    const other = new CookieJar();
    const u2 = await srv.user();
    const c2 = csrfFrom(await (await other.fetch(`${srv.url}/login`)).text());
    await other.form(`${srv.url}/login`, { _csrf: c2, email: u2.email, password: "correct horse battery" });
    const page2 = await (await other.fetch(`${srv.url}/alerts`)).text();
    expect(page2).not.toContain("Hook (planner)");
    const steal = await other.form(`${srv.url}/alerts/${id}/delete`, { _csrf: csrfFrom(page2) });
    expect(steal.status).toBe(404);

    const del = await jar.form(`${srv.url}/alerts/${id}/delete`, { _csrf: csrf });
    expect(del.headers.get("location")).toBe("/alerts?notice=deleted");
    expect(await srv.ports.sql.query("SELECT 1 FROM alert_rules WHERE id = $1", [id])).toHaveLength(0);
    expect(await page("/alerts")).toContain("Test notification"); // the history outlives the rule
  });
});

describe("evaluation on ingest", () => {
  it("1,000 error events within a minute produce one notification per cooldown; the rest are counted", async () => {
    const storm = await startHttpReceiver();
    try {
      await submitRule({ name: "Storm", trigger_type: "run_error", channel: "webhook", target: `${storm.url}/storm`, "config.cooldown_seconds": "600" });
      const id = await ruleIdByName("Storm");
      // 1,000 failing runs, in batches of 250 over a few seconds.
      for (let b = 0; b < 4; b++) {
        const events = Array.from({ length: 250 }, (_, i) => ({
          event_type: "error", sdk_run_id: `storm-${b * 250 + i}`, payload: { error_type: "RateLimitError", error_message: "429 from the provider" },
        }));
        expect((await ingestBatch(events)).status).toBe(207);
      }
      await expect.poll(async () => Number((await srv.ports.sql.query<{ suppressed: number }>("SELECT suppressed FROM alert_rule_state WHERE rule_id = $1", [id]))[0]?.suppressed ?? 0), { timeout: 30_000, interval: 200 }).toBe(999);
      await storm.waitFor(1);
      await new Promise((r) => setTimeout(r, 500));
      expect(storm.requests).toHaveLength(1);
      expect(JSON.parse(storm.requests[0]!.body)).toMatchObject({ type: "alert.fired", rule: { id, trigger_type: "run_error" }, message: expect.stringContaining("RateLimitError: 429 from the provider") });
      const jobs = await jobsOf(id);
      expect(jobs).toHaveLength(1);
      expect(jobs[0]!.status).toBe("delivered");
      expect(await page("/alerts")).toContain("999 suppressed since");
    } finally {
      await storm.close();
    }
  });

  it("run_duration_above fires for a run left running, on the dashboard channel, to a subscribed WebSocket client", async () => {
    await submitRule({ name: "Slow", trigger_type: "run_duration_above", channel: "dashboard", "config.seconds": "1" });
    const id = await ruleIdByName("Slow");
    const c = wsClient(user.id);
    await expect.poll(() => c.frames.some((f) => f.type === "hello"), { timeout: 5000 }).toBe(true);
    c.ws.send(JSON.stringify({ type: "subscribe", channel: `project.${user.id}` }));
    await expect.poll(() => c.frames.some((f) => f.type === "subscribed"), { timeout: 5000 }).toBe(true);
    // A finished run must not fire; the one left running must.
    expect((await ingest({ event_type: "run_start", sdk_run_id: "quick-1", agent_name: "slowpoke", payload: {} })).status).toBe(202);
    expect((await ingest({ event_type: "run_end", sdk_run_id: "quick-1", payload: {} })).status).toBe(202);
    expect((await ingest({ event_type: "run_start", sdk_run_id: "stuck-1", agent_name: "slowpoke", payload: { framework: "langgraph" } })).status).toBe(202);
    await expect.poll(() => c.frames.find((f) => f.type === "notification" && f.rule?.id === id), { timeout: 15_000, interval: 100 }).toBeTruthy();
    const n = c.frames.find((f) => f.type === "notification" && f.rule?.id === id);
    expect(n).toMatchObject({ project_id: user.id, run: { sdk_run_id: "stuck-1", agent_name: "slowpoke", status: "running" }, url: "http://runwatch.test/dashboard/stuck-1" });
    expect(n.message).toMatch(/slowpoke run stuck-1 has been running for \d+ s, longer than 1 s/);
    await new Promise((r) => setTimeout(r, 1000)); // more sweeps: still one notification for this run
    const jobs = await jobsOf(id);
    expect(jobs.map((j) => j.payload.run.sdk_run_id)).toEqual(["stuck-1"]);
    c.ws.close();
  });

  it("waiting_for_input, run_cost_above, tool_error, agent_budget_exceeded and error_rate_above fire from ingested events", async () => {
    const rules = {
      ask: { name: "Ask", trigger_type: "waiting_for_input", channel: "dashboard" },
      cost: { name: "Cost", trigger_type: "run_cost_above", channel: "dashboard", "config.threshold_usd": "0.5" },
      tool: { name: "Tool", trigger_type: "tool_error", channel: "dashboard", "config.tool_name": "search" },
      budget: { name: "Budget", trigger_type: "agent_budget_exceeded", channel: "dashboard", "config.period": "day" },
      rate: { name: "Rate", trigger_type: "error_rate_above", channel: "dashboard", "config.agent_name": "buyer", "config.threshold_pct": "50", "config.min_runs": "4", "config.window_minutes": "10" },
    };
    for (const r of Object.values(rules)) expect((await submitRule(r)).status).toBe(302);
    const ids = Object.fromEntries(await Promise.all(Object.entries(rules).map(async ([k, r]) => [k, await ruleIdByName(r.name)] as const)));

    // The agent exists after its first run; give it a $1 daily budget.
    expect((await ingest({ event_type: "run_start", sdk_run_id: "b-0", agent_name: "buyer", payload: {} })).status).toBe(202);
    await expect.poll(async () => (await srv.ports.sql.query("SELECT 1 FROM agents WHERE project_id = $1 AND name = 'buyer'", [user.id])).length, { timeout: 10_000 }).toBe(1);
    await srv.ports.sql.query("UPDATE agents SET budget_usd = 1 WHERE project_id = $1 AND name = 'buyer'", [user.id]);

    const events = [
      { event_type: "human_input_requested", sdk_run_id: "b-0", payload: { question: "Approve the refund?" } },
      { event_type: "tool_call", sdk_run_id: "b-0", payload: { tool_name: "search", phase: "end", error: "TimeoutError: search backend timed out" } },
      { event_type: "tool_call", sdk_run_id: "b-0", payload: { tool_name: "search", phase: "end", output_preview: "fine" } },
      { event_type: "tool_call", sdk_run_id: "b-0", payload: { tool_name: "calc", phase: "end", error: "ZeroDivisionError" } },
      { event_type: "run_end", sdk_run_id: "b-0", payload: { cost_usd: 0.4 } },
      { event_type: "run_start", sdk_run_id: "b-1", agent_name: "buyer", payload: {} },
      { event_type: "run_end", sdk_run_id: "b-1", payload: { cost_usd: 0.7 } },
      { event_type: "run_start", sdk_run_id: "b-2", agent_name: "buyer", payload: {} },
      { event_type: "error", sdk_run_id: "b-2", payload: { error_type: "ValueError", error_message: "bad" } },
      { event_type: "run_start", sdk_run_id: "b-3", agent_name: "buyer", payload: {} },
      { event_type: "error", sdk_run_id: "b-3", payload: { error_type: "ValueError", error_message: "bad" } },
    ];
    for (const e of events) expect((await ingest(e)).status).toBe(202); // one by one: several batches
    // The error rate is judged at most every 5 s per rule on ingest; the sweep (300 ms here) catches up.
    await expect.poll(async () => {
      const n = await Promise.all(Object.values(ids).map(async (id) => (await jobsOf(id)).length));
      return n;
    }, { timeout: 20_000, interval: 200 }).toEqual([1, 1, 1, 1, 1]);
    expect((await jobsOf(ids.ask))[0]!.payload.message).toContain("“Approve the refund?”");
    expect((await jobsOf(ids.cost))[0]!.payload).toMatchObject({ run: { sdk_run_id: "b-1" }, details: { cost_usd: 0.7, threshold_usd: 0.5 } });
    expect((await jobsOf(ids.tool))[0]!.payload.message).toBe("Tool search failed in buyer run b-0: TimeoutError: search backend timed out");
    expect((await jobsOf(ids.budget))[0]!.payload).toMatchObject({ details: { agent_name: "buyer", budget_usd: 1, period: "day" } });
    expect((await jobsOf(ids.budget))[0]!.payload.details.spend_usd).toBeCloseTo(1.1);
    const rate = (await jobsOf(ids.rate))[0]!.payload;
    expect(rate.details).toMatchObject({ errors: 2, runs: 4, error_rate_pct: 50 });
    for (const id of Object.values(ids)) await expect.poll(async () => (await jobsOf(id))[0]!.status, { timeout: 5000 }).toBe("delivered");
  });

  it("score_below fires from the sweep when the average of a score given through the API drops below the threshold", async () => {
    expect((await submitRule({ name: "Unhappy", trigger_type: "score_below", channel: "dashboard", "config.score_name": "user_feedback", "config.threshold": "0.5", "config.min_scores": "3", "config.agent_name": "helper" })).status).toBe(302);
    const id = await ruleIdByName("Unhappy");
    for (const run of ["h-1", "h-2", "o-1"]) {
      const agent = run.startsWith("h") ? "helper" : "other";
      expect((await ingestBatch([{ event_type: "run_start", sdk_run_id: run, agent_name: agent, payload: {} }, { event_type: "run_end", sdk_run_id: run, payload: {} }])).status).toBe(207);
    }
    const score = (run: string, value: boolean) => fetch(`${srv.url}/api/scores`, json(key, { sdk_run_id: run, name: "user_feedback", value, source: "human" }));
    await expect.poll(async () => (await score("h-2", true)).status, { timeout: 10_000 }).toBe(201); // the runs are stored
    expect((await score("h-1", false)).status).toBe(201);
    expect((await score("o-1", false)).status).toBe(201); // another agent's: not counted
    await new Promise((r) => setTimeout(r, 1000)); // two scores of helper: below min_scores, no firing
    expect(await jobsOf(id)).toHaveLength(0);
    expect((await score("h-1", false)).status).toBe(201);
    await expect.poll(async () => (await jobsOf(id)).length, { timeout: 10_000, interval: 200 }).toBe(1);
    expect((await jobsOf(id))[0]!.payload).toMatchObject({ details: { score_name: "user_feedback", scores: 3, threshold: 0.5, min_scores: 3 } });
    expect((await jobsOf(id))[0]!.payload.details.average).toBeCloseTo(1 / 3, 3);
    await new Promise((r) => setTimeout(r, 1000)); // later sweeps of the same window: no second notification
    expect(await jobsOf(id)).toHaveLength(1);
  });

  it("a team's own trigger (RUNWATCH_ALERT_TRIGGERS) is offered by the form, validated by its schema and fired by the pipeline", async () => {
    expect(await page("/alerts/new")).toContain("Run used many tokens");
    const bad = await submitRule({ name: "Tokens", trigger_type: "run_tokens_above", channel: "dashboard", "config.max_tokens": "-5" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("Max tokens must be greater than 0");
    expect((await submitRule({ name: "Tokens", trigger_type: "run_tokens_above", channel: "dashboard", "config.max_tokens": "1000" })).status).toBe(302);
    const id = await ruleIdByName("Tokens");
    for (const [run, tokens] of [["t-small", 900], ["t-big", 1500]] as const) {
      expect((await ingest({ event_type: "run_start", sdk_run_id: run, agent_name: "writer", payload: {} })).status).toBe(202);
      expect((await ingest({ event_type: "run_end", sdk_run_id: run, payload: { total_tokens: tokens } })).status).toBe(202);
    }
    await expect.poll(async () => (await jobsOf(id)).length, { timeout: 10_000 }).toBe(1);
    expect((await jobsOf(id))[0]!.payload).toMatchObject({ run: { sdk_run_id: "t-big" }, details: { total_tokens: 1500, max_tokens: 1000 } });
    expect((await jobsOf(id))[0]!.payload.message).toBe("writer run t-big used 1500 tokens (more than 1000)");
  });
});
