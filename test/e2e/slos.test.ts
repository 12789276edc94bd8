/**
 * SLOs end to end: a real web server with the pipeline and the notification worker (embedded stores). SLOs are made
 * through POST /api/slos (bad input: 422 naming the field), runs through POST /api/ingest/batch; the budget and burn
 * rates the API and the /slos page show are checked against hand-computed figures, and an slo_burn_rate rule made
 * through the /alerts form fires once per speed from the sweep.
 */
process.env.RUNWATCH_NOTIFY_BACKOFF_MS = "50";
process.env.RUNWATCH_NOTIFY_POLL_MS = "50";
process.env.RUNWATCH_ALERT_SWEEP_MS = "300";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, csrfFrom, json, startTestServer, type TestServer } from "./harness.js";
import { startNotificationWorker, type NotificationWorker } from "../../alerts/index.js";
import type { SessionUser } from "../../web/deps.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { loginJar } from "./harness.js";

let srv: TestServer;
let worker: NotificationWorker;
let user: SessionUser;
let key: string;
let jar: CookieJar;

const api = (path: string, init: RequestInit = {}) => fetch(`${srv.url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...init.headers } });
const post = (path: string, body: unknown) => fetch(`${srv.url}${path}`, json(key, body));

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  worker = await startNotificationWorker({ sql: srv.ports.sql, pubsub: srv.ports.pubsub });
  user = await srv.user();
  key = await srv.key(user.id);
  jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
  expect((await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" })).status).toBe(302);
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await srv?.close();
});

describe("SLOs", () => {
  it("refuses bad input with 422 naming the field", async () => {
    const cases: [unknown, string][] = [
      [{ agent_name: "pay-bot", objective: "success_rate", target: 0.99, window_days: 30 }, "name"],
      [{ name: "x", agent_name: "pay-bot", objective: "uptime", target: 0.99, window_days: 30 }, "objective"],
      [{ name: "x", agent_name: "pay-bot", objective: "success_rate", target: 99, window_days: 30 }, "target"],
      [{ name: "x", agent_name: "pay-bot", objective: "success_rate", target: 0.99, window_days: 365 }, "window_days"],
      [{ name: "x", agent_name: "pay-bot", objective: "latency", target: 0.95, window_days: 7 }, "threshold_seconds"],
      [{ name: "x", agent_name: "pay-bot", objective: "success_rate", target: 0.99, window_days: 7, threshold_seconds: 3 }, "threshold_seconds"],
      [{ name: "x", agent_name: "pay-bot", objective: "success_rate", target: 0.99, window_days: 7, extra: 1 }, "extra"],
      [{ name: "x", agent_name: "pay-bot", objective: "score_mean", target: 0.8, window_days: 7 }, "score_name"],
      [{ name: "x", agent_name: "pay-bot", objective: "score_mean", target: 0.8, window_days: 7, score_name: "" }, "score_name"],
      [{ name: "x", agent_name: "pay-bot", objective: "latency", threshold_seconds: 3, target: 0.8, window_days: 7, score_name: "correctness" }, "score_name"],
    ];
    for (const [body, field] of cases) {
      const res = await post("/api/slos", body);
      expect(res.status, JSON.stringify(body) + await res.clone().text()).toBe(422);
      expect((await res.json()).error.field, JSON.stringify(body)).toBe(field);
    }
    const notObject = await post("/api/slos", "nope");
    expect([notObject.status, (await notObject.json()).error.code]).toEqual([400, "malformed_json"]);
    expect((await api("/api/slos/abc")).status).toBe(422);
    expect((await api("/api/slos/999999")).status).toBe(404);
  });

  it("budget and burn rates from ingested runs, the /slos page, and burn-rate alerts that fire once per speed", async () => {
    const created = await post("/api/slos", { name: "Payments succeed", agent_name: "pay-bot", objective: "success_rate", target: 0.99, window_days: 30 });
    expect(created.status).toBe(201);
    const slo = (await created.json()).slo;
    expect(slo).toMatchObject({ name: "Payments succeed", objective_text: "99% of runs succeed over 30 days", status: { sli: null, budget: { runs: 0, remaining: 1 } } });
    expect((await post("/api/slos", { name: "Payments succeed", agent_name: "pay-bot", objective: "success_rate", target: 0.9, window_days: 7 })).status).toBe(422);
    const fast = await post("/api/slos", { name: "Payments fast", agent_name: "pay-bot", objective: "latency", target: 0.9, threshold_seconds: 2, window_days: 7 });
    expect(fast.status).toBe(201);

    // 20 runs in the last two minutes, 5 of them failed, 4 of the others slower than 2 s.
    const events = Array.from({ length: 20 }, (_, i) => {
      const end = Date.now() - 60_000 + i * 1000;
      const seconds = i >= 16 ? 3 : 1;
      return [
        { event_type: "run_start", sdk_run_id: `p-${i}`, agent_name: "pay-bot", payload: {}, occurred_at: new Date(end - seconds * 1000).toISOString() },
        i < 5
          ? { event_type: "error", sdk_run_id: `p-${i}`, payload: { error_type: "CardDeclined", error_message: "no" }, occurred_at: new Date(end).toISOString() }
          : { event_type: "run_end", sdk_run_id: `p-${i}`, payload: {}, occurred_at: new Date(end).toISOString() },
      ];
    }).flat();
    expect((await post("/api/ingest/batch", { events })).status).toBe(207);

    await expect.poll(async () => (await (await api(`/api/slos/${slo.id}`)).json()).slo.status.budget.runs, { timeout: 15_000, interval: 200 }).toBe(20);
    const s = (await (await api(`/api/slos/${slo.id}`)).json()).slo.status;
    // 5 bad of 20 = 25% against a 1% allowance: 25× in every window; 0.2 bad runs allowed, 25 times over.
    expect(s.sli).toBeCloseTo(0.75, 9);
    expect(s.budget.allowed_bad).toBeCloseTo(0.2, 9);
    expect(s.budget.remaining).toBeCloseTo(1 - 25, 9);
    for (const w of ["1h", "5m", "6h", "30m"]) expect(s.burn[w].rate).toBeCloseTo(25, 9);
    expect(s.alerts).toEqual({ fast: true, slow: true });
    const list = (await (await api("/api/slos")).json()).slos;
    const latency = list.find((x: { name: string }) => x.name === "Payments fast");
    expect(latency.status.budget).toMatchObject({ runs: 20, bad: 4 }); // the four 3-second runs; a failed run is judged by its time
    expect(latency.status.burn["1h"].rate).toBeCloseTo(2, 9); // 20% against a 10% allowance

    const page = await (await jar.fetch(`${srv.url}/slos`)).text();
    expect(page).toContain("Payments succeed");
    expect(page).toContain("99% of runs succeed over 30 days");
    expect(page).toMatch(/class="budget-left">exhausted<br><span class="subtle small">25× the budget spent/); // not "-2400%"
    expect(page).toContain("25× / 25×");

    const formPage = await (await jar.fetch(`${srv.url}/alerts/new`)).text();
    const rule = await jar.form(`${srv.url}/alerts`, { _csrf: csrfFrom(formPage), enabled: "on", name: "Budget", trigger_type: "slo_burn_rate", channel: "dashboard", "config.slo": "Payments succeed", "config.min_runs": "10" });
    expect(rule.status).toBe(302);
    const jobs = () => srv.ports.sql.query<{ payload: any }>("SELECT j.payload FROM notification_jobs j JOIN alert_rules r ON r.id = j.rule_id WHERE r.name = 'Budget' ORDER BY j.id");
    await expect.poll(async () => (await jobs()).length, { timeout: 15_000, interval: 200 }).toBe(2);
    await new Promise((r) => setTimeout(r, 1000)); // later sweeps: still burning, nothing more
    const sent = await jobs();
    expect(sent).toHaveLength(2);
    expect(sent.map((j) => j.payload.details.speed).sort()).toEqual(["fast", "slow"]);
    const fastMsg = sent.find((j) => j.payload.details.speed === "fast")!.payload.message;
    expect(fastMsg).toBe("pay-bot SLO “Payments succeed” (99% of runs succeed over 30 days) burns its error budget 25.0× too fast (1 h: 25.0×, 5 min: 25.0×; alert at 14.4×): 3.5% of the budget gone in the last 1 h, 0% left");
  }, 90_000);

  it("a score's mean as an objective: its shortfall is the budget, it burns and alerts like a success rate", async () => {
    const created = await post("/api/slos", { name: "Answers correct", agent_name: "qa-bot", objective: "score_mean", score_name: "correctness", target: 0.95, window_days: 30 });
    expect(created.status).toBe(201);
    const slo = (await created.json()).slo;
    expect(slo).toMatchObject({ objective: "score_mean", score_name: "correctness", objective_text: "mean correctness ≥ 0.95 over 30 days", status: { sli: null, budget: { runs: 0 } } });
    const runsOf = await post("/api/slos", { name: "QA runs", agent_name: "qa-bot", objective: "success_rate", target: 0.9, window_days: 30 });

    // Four runs of qa-bot, then their correctness 0.9, 0.5, 0.6 and 0.6 (mean 0.65), and a helpfulness score of 0.
    const events = [0, 1, 2, 3].flatMap((i) => [
      { event_type: "run_start", sdk_run_id: `qa-${i}`, agent_name: "qa-bot", payload: {}, occurred_at: new Date(Date.now() - 30_000).toISOString() },
      { event_type: "run_end", sdk_run_id: `qa-${i}`, payload: {}, occurred_at: new Date(Date.now() - 20_000).toISOString() },
    ]);
    expect((await post("/api/ingest/batch", { events })).status).toBe(207);
    const runsId = (await runsOf.json()).slo.id;
    await expect.poll(async () => (await (await api(`/api/slos/${runsId}`)).json()).slo.status.budget.runs, { timeout: 15_000, interval: 200 }).toBe(4);
    const scores = [0.9, 0.5, 0.6, 0.6].map((value, i) => ({ sdk_run_id: `qa-${i}`, name: "correctness", value }));
    expect((await post("/api/scores/batch", { scores: [...scores, { sdk_run_id: "qa-0", name: "helpfulness", value: 0 }] })).status).toBe(207);

    await expect.poll(async () => (await (await api(`/api/slos/${slo.id}`)).json()).slo.status.budget.runs, { timeout: 15_000, interval: 200 }).toBe(4);
    const s = (await (await api(`/api/slos/${slo.id}`)).json()).slo.status;
    // Shortfall 0.1 + 0.5 + 0.4 + 0.4 = 1.4 where 4 × 0.05 = 0.2 is allowed; burn (1 − 0.65) / 0.05 = 7× everywhere.
    expect(s.sli).toBeCloseTo(0.65, 9);
    expect(s.budget.bad).toBeCloseTo(1.4, 9);
    expect(s.budget.allowed_bad).toBeCloseTo(0.2, 9);
    for (const w of ["1h", "5m", "6h", "30m"]) expect(s.burn[w].rate).toBeCloseTo(7, 9);
    expect(s.alerts).toEqual({ fast: false, slow: true }); // 7× is under 14.4×, over 6×

    const page = await (await jar.fetch(`${srv.url}/slos`)).text();
    expect(page).toContain("mean correctness ≥ 0.95 over 30 days");
    expect(page).toContain("mean 0.65<br><span class=\"subtle\">4 scores</span>");

    const formPage = await (await jar.fetch(`${srv.url}/alerts/new`)).text();
    const rule = await jar.form(`${srv.url}/alerts`, { _csrf: csrfFrom(formPage), enabled: "on", name: "Correctness budget", trigger_type: "slo_burn_rate", channel: "dashboard", "config.slo": "Answers correct", "config.min_runs": "3" });
    expect(rule.status).toBe(302);
    const jobs = () => srv.ports.sql.query<{ payload: any }>("SELECT j.payload FROM notification_jobs j JOIN alert_rules r ON r.id = j.rule_id WHERE r.name = 'Correctness budget' ORDER BY j.id");
    await expect.poll(async () => (await jobs()).length, { timeout: 15_000, interval: 200 }).toBe(1);
    const [slow] = await jobs();
    expect(slow!.payload.details).toMatchObject({ speed: "slow", sli: expect.closeTo(0.65, 9) });
    expect(slow!.payload.message).toMatch(/^qa-bot SLO “Answers correct” \(mean correctness ≥ 0\.95 over 30 days\) burns its error budget 7\.0× too fast \(6 h: 7\.0×, 30 min: 7\.0×; alert at 6×\)/);
  }, 90_000);

  it("the /slos form creates and deletes an SLO for a member, names a refused field, and a viewer gets no form", async () => {
    const team = await createProject(srv.ports.sql, user.id, "SLO team");
    const viewer = await srv.user();
    await setMember(srv.ports.sql, team.id, viewer.email, "viewer", user.id);
    for (const u of [user, viewer]) await switchProject(srv.ports.sql, u.id, team.slug);
    const page = async (j: CookieJar) => (await j.fetch(`${srv.url}/p/${team.slug}/slos`)).text();
    const ownerJar = await loginJar(srv.url, user.email);
    const html = await page(ownerJar);
    expect(html).toContain('id="new-slo"');
    const base = { _csrf: csrfFrom(html), name: "Form SLO", agent_name: "form-bot", target: "0.9", window_days: "7" };

    const refused = await ownerJar.form(`${srv.url}/p/${team.slug}/slos`, { ...base, objective: "score_mean" });
    expect(refused.status).toBe(422);
    const body = await refused.text();
    expect(body).toContain("score_name is required with objective score_mean");
    expect(body).toMatch(/id="slo-score" name="score_name"[^>]*aria-invalid="true"/);
    expect(body).toContain('value="Form SLO"'); // what was typed is kept
    const badTarget = await ownerJar.form(`${srv.url}/p/${team.slug}/slos`, { ...base, objective: "success_rate", target: "lots" });
    expect([badTarget.status, (await badTarget.text()).includes("target must be a number")]).toEqual([422, true]);

    const created = await ownerJar.form(`${srv.url}/p/${team.slug}/slos`, { ...base, objective: "latency", threshold_seconds: "4" });
    expect(created.status).toBe(303);
    expect(await (await ownerJar.fetch(new URL(created.headers.get("location")!, srv.url).href)).text()).toContain("Created the SLO “Form SLO”.");
    const after = await page(ownerJar);
    expect(after).toContain("90% of runs end within 4 s over 7 days");
    expect(after).toMatch(/class="slo-chart" id="slo-chart-\d+" data-points="\[/); // the burn over the window, in slices of whole hours
    const id = /data-slo-id="(\d+)"/.exec(after)![1];

    const viewerJar = await loginJar(srv.url, viewer.email);
    const seen = await page(viewerJar);
    expect(seen).toContain("Form SLO");
    expect(seen).not.toContain('id="new-slo"');
    expect(seen).not.toContain("/delete");
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/slos`, { ...base, _csrf: csrfFrom(seen), objective: "success_rate" })).status).toBe(403);
    expect((await viewerJar.form(`${srv.url}/p/${team.slug}/slos/${id}/delete`, { _csrf: csrfFrom(seen) })).status).toBe(403);

    const deleted = await ownerJar.form(`${srv.url}/p/${team.slug}/slos/${id}/delete`, { _csrf: csrfFrom(after) });
    expect(deleted.status).toBe(303);
    expect(await page(ownerJar)).not.toContain("Form SLO");
  }, 60_000);
});
