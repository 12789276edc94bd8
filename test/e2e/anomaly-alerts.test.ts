/**
 * The anomaly trigger end to end: a real web server with the pipeline (file log, chDB, PGlite in a temp dir), the
 * notification worker and an HTTP receiver on loopback. Four weeks of hourly history are seeded through the
 * baselines store; the rule is made through the /alerts form; runs arrive through POST /api/ingest/batch.
 * It fires once, in words, naming the config activation; an agent whose baseline is still learning is not judged;
 * the episode resolves when the window is back in its band. The tool error rate (from tool_call events) and a score's
 * mean (from POST /api/scores, judged on its lower edge) ride the same bands. A rule on one environment judges only
 * that environment's runs against its own band (an incident elsewhere does not fire it), and /api/baselines and the
 * agent page show each environment's and recent config version's band.
 */
process.env.RUNWATCH_ALLOW_PRIVATE_WEBHOOKS = "1";
process.env.RUNWATCH_NOTIFY_BACKOFF_MS = "50";
process.env.RUNWATCH_NOTIFY_POLL_MS = "50";
process.env.RUNWATCH_ALERT_SWEEP_MS = "300";
// Out of band on sweeps 0.6 s apart (two or three) fires: the 1-minute default scaled to the sweep above.
process.env.RUNWATCH_ANOMALY_CONFIRM_MS = "600";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, csrfFrom, json, startTestServer, type TestServer } from "./harness.js";
import { startNotificationWorker, type NotificationWorker } from "../../alerts/index.js";
import { startHttpReceiver, type HttpReceiver } from "../../alerts/testing/peers.js";
import { insertMetricHours, type MetricHour } from "../../stores/baselines/metric-hours.js";
import { insertDimensionHours, type DimensionHour } from "../../stores/baselines/dimension-hours.js";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import type { SessionUser } from "../../web/deps.js";

const HOUR = 3_600_000;

let srv: TestServer;
let worker: NotificationWorker;
let receiver: HttpReceiver;
let user: SessionUser;
let key: string;
let jar: CookieJar;

async function submitRule(fields: Record<string, string>): Promise<Response> {
  const res = await jar.fetch(`${srv.url}/alerts/new`);
  return jar.form(`${srv.url}/alerts`, { _csrf: csrfFrom(await res.text()), enabled: "on", ...fields });
}

const jobsOf = (name: string) => srv.ports.sql.query<{ payload: any; status: string }>(
  "SELECT j.payload, j.status FROM notification_jobs j JOIN alert_rules r ON r.id = j.rule_id WHERE r.name = $1 ORDER BY j.id", [name]);

/** `n` runs of `agent` that took `seconds` and ended `endedAgoMs` ago. */
function runs(agent: string, prefix: string, n: number, seconds: number, endedAgoMs: number, release = "2.4.1") {
  const end = Date.now() - endedAgoMs;
  return Array.from({ length: n }, (_, i) => [
    { event_type: "run_start", sdk_run_id: `${prefix}-${i}`, agent_name: agent, release, payload: {}, occurred_at: new Date(end - seconds * 1000).toISOString() },
    { event_type: "run_end", sdk_run_id: `${prefix}-${i}`, payload: {}, occurred_at: new Date(end).toISOString() },
  ]).flat();
}

/**
 * Waits, when the clock is within 100 s of an hour's end or 70 s of its start, until 70 s into the next hour: the
 * runs a test sends (ended up to 40 s before) and its sweeps then stay in one hour, and the roll-up of a just-ended
 * hour does not fold them into the history the test wrote. About one start in twenty waits, at most 170 s.
 */
async function awayFromHourBoundary(): Promise<void> {
  const into = Date.now() % HOUR;
  if (into < 70_000) await new Promise((r) => setTimeout(r, 70_000 - into));
  else if (HOUR - into < 100_000) await new Promise((r) => setTimeout(r, HOUR - into + 70_000));
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  worker = await startNotificationWorker({ sql: srv.ports.sql, pubsub: srv.ports.pubsub });
  receiver = await startHttpReceiver();
  user = await srv.user();
  key = await srv.key(user.id);
  jar = new CookieJar();
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
  expect((await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" })).status).toBe(302);
}, 60_000);

afterAll(async () => {
  await worker?.close();
  await receiver?.close();
  await srv?.close();
});

describe("anomaly alerts", () => {
  it("the form refuses a missing or unknown metric and a bad sensitivity, naming the field", async () => {
    const missing = await submitRule({ name: "x", trigger_type: "anomaly", channel: "dashboard" });
    expect(missing.status).toBe(422);
    expect(await missing.text()).toContain("Metric is required");
    const unknown = await submitRule({ name: "x", trigger_type: "anomaly", channel: "dashboard", "config.metric": "mood" });
    expect(await unknown.text()).toContain("Metric: must be one of error_rate, latency_p50, latency_p95, cost_per_run, tokens_per_run, tool_error_rate, score_mean");
    const unnamed = await submitRule({ name: "x", trigger_type: "anomaly", channel: "dashboard", "config.metric": "score_mean" });
    expect(unnamed.status).toBe(422);
    expect(await unnamed.text()).toContain("Score: name the score whose mean is watched");
    const sens = await submitRule({ name: "x", trigger_type: "anomaly", channel: "dashboard", "config.metric": "error_rate", "config.sensitivity": "extreme" });
    expect(await sens.text()).toContain("Sensitivity: must be &quot;low&quot;, &quot;medium&quot; or &quot;high&quot;");
  });

  it("fires once when an agent's p95 latency leaves its learned band, says how far and what changed, and resolves when it returns", async () => {
    await awayFromHourBoundary();
    // Four weeks of hours: refund-bot's p95 latency is 4.5 – 4.7 s every hour; new-bot has five hours (learning).
    const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
    const history: MetricHour[] = [];
    for (let h = 1; h <= 28 * 24; h++) {
      const week = Math.floor((h - 1) / 168);
      history.push({ agent_name: "refund-bot", metric: "latency_p95", hour: new Date(hourStart - h * HOUR), runs: 20, value: [4.5, 4.6, 4.7, 4.6][week]! });
      if (h <= 5) history.push({ agent_name: "new-bot", metric: "latency_p95", hour: new Date(hourStart - h * HOUR), runs: 20, value: 1 });
    }
    await insertMetricHours(srv.ports.clickhouse, user.id, history);
    await createAgent(srv.ports.sql, user.id, { name: "refund-bot" });
    await addVersion(srv.ports.sql, user.id, "refund-bot", { config: "{\"model\":\"a\"}", activate: true });
    await addVersion(srv.ports.sql, user.id, "refund-bot", { config: "{\"model\":\"b\"}", activate: true });

    const created = await submitRule({
      name: "Slow", trigger_type: "anomaly", channel: "webhook", target: `${receiver.url}/hook`,
      "config.metric": "latency_p95", "config.window_minutes": "1", "config.min_runs": "5",
    });
    expect(created.status).toBe(302);
    // The list says the rule's conditions in words: the metric's label, not its key.
    const list = await (await jar.fetch(`${srv.url}/alerts`)).text();
    expect(list).toContain("metric: p95 latency");
    expect(list).not.toContain("latency_p95");
    // The form: "When" lists the triggers' names only (each description is shown in its own fieldset), and the
    // cooldown help says what a default of 0 means.
    const form = await (await jar.fetch(`${srv.url}/alerts/new`)).text();
    expect(form).toContain('<option value="anomaly">Anomaly (learned baseline)</option>');
    expect(form).toMatch(/<legend>Anomaly \(learned baseline\)<\/legend>\s*<p class="help trigger-description">An agent&#39;s metric leaves the band/);
    expect(form).toContain("0 sends every firing. Default 0: every firing is sent");
    expect(form).toContain("0 sends every firing. Default 300 s.");

    // Slow runs that ended 40 s ago: inside the 1-minute window for about 20 s.
    const ingest = (events: unknown[]) => fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));
    expect((await ingest([...runs("refund-bot", "slow", 5, 14.2, 40_000), ...runs("new-bot", "new", 5, 30, 40_000)])).status).toBe(207);
    await expect.poll(async () => (await jobsOf("Slow")).length, { timeout: 15_000, interval: 200 }).toBe(1);
    const [fired] = await jobsOf("Slow");
    expect(fired!.payload.message).toMatch(
      /^refund-bot p95 latency 14\.2 s, 3\.1× its usual 4\.6 s for (Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days \d\d:00; since config v2 was activated \d+ s ago$/,
    );
    expect(fired!.payload.details).toMatchObject({
      state: "fired", metric: "latency_p95", agent_name: "refund-bot", value: 14.2, runs: 5, window_minutes: 1, sensitivity: "medium",
      baseline: { basis: "slot", hours: 4, median: 4.6, history_days: 28 },
      change: { kind: "config_activation", version: 2 },
    });
    // The 5% floor (MAD 0.1 × 1.4826 < 0.23), doubled: the window's 5 runs are a quarter of an hour's 20.
    expect(fired!.payload.details.baseline.upper).toBeCloseTo(4.6 + 4 * 0.23 * 2, 5);
    await expect.poll(async () => receiver.requests.filter((r) => r.path === "/hook").length, { timeout: 5000 }).toBe(1);

    // Still out of band on later sweeps: no second notification; new-bot (learning) never fires.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await jobsOf("Slow")).toHaveLength(1);

    // Once the slow runs have left the window, runs at the usual latency close the episode.
    await new Promise((r) => setTimeout(r, Math.max(0, 21_000 - 1500)));
    expect((await ingest(runs("refund-bot", "fast", 5, 4.5, 0, "2.4.2"))).status).toBe(207);
    await expect.poll(async () => (await jobsOf("Slow")).length, { timeout: 15_000, interval: 200 }).toBe(2);
    const resolved = (await jobsOf("Slow"))[1]!;
    expect(resolved.payload.message).toMatch(/^refund-bot p95 latency is back to 4\.5 s, within its usual 4\.6 s for \w+ \d\d:00 \(band up to 6\.44 s\)$/);
    expect(resolved.payload.details).toMatchObject({ state: "resolved", value: 4.5, runs: 5 });
    expect((await jobsOf("Slow")).every((j) => j.payload.message.startsWith("refund-bot"))).toBe(true);

    // The band opened up: the numbers it came from, the window, and the change points with before/after.
    const get = (q: string) => fetch(`${srv.url}/api/baselines?${q}`, { headers: { authorization: `Bearer ${key}` } });
    const res = await get("agent=refund-bot&metric=latency_p95&window_minutes=5");
    expect(res.status).toBe(200);
    const b = await res.json();
    expect(b).toMatchObject({ agent: "refund-bot", metric: "latency_p95", label: "p95 latency", bands: { medium: { state: "ready", basis: "slot", hours: 4, median: 4.6 }, low: { state: "ready" } } });
    expect(b.learned_from.map((h: { value: number }) => h.value).sort()).toEqual([4.5, 4.6, 4.6, 4.7]);
    expect(b.window.runs).toBe(10);
    expect(b.changes.map((c: { label: string }) => c.label)).toEqual(["config v1", "config v2", "release 2.4.2"]);
    expect(b.changes[1]).toMatchObject({ kind: "config_activation", version: 2, before: { hours: 24, runs: 480 }, after: { runs: 0, value: null }, shift_in_spreads: null });
    expect(b.changes[1].before.value).toBeCloseTo(4.5, 5);
    expect((await (await get("agent=new-bot&metric=latency_p95")).json()).bands.medium).toEqual({ state: "learning", hours: 5, needed: 24 });
    const bad = await get("agent=refund-bot&metric=mood");
    expect(bad.status).toBe(422);
    expect((await bad.json()).error).toMatchObject({ field: "metric" });
    expect((await get("metric=error_rate")).status).toBe(422);
    expect((await fetch(`${srv.url}/api/baselines?agent=x&metric=error_rate`)).status).toBe(401);

    // The agent page: each metric's usual value for this hour, the last 30 minutes, and the latest change.
    const agentPage = await (await jar.fetch(`${srv.url}/agents/refund-bot`)).text();
    const card = agentPage.slice(agentPage.indexOf('id="baselines"'), agentPage.indexOf("</section>", agentPage.indexOf('id="baselines"')));
    expect(card).toMatch(/<td>p95 latency<\/td><td class="small">4\.6 s \(up to 5\.52 s\) for \w+ \d\d:00<\/td><td class="small">14\.2 s \(10 runs\) <span class="badge badge-error" title="outside its usual band">unusual<\/span><\/td><td class="small">release 2\.4\.2 \([0-9-]+ [0-9:]+ UTC\): 4\.\d+ s before it, no whole hour with runs since yet<\/td>/);
    expect(card).toContain("<td>error rate</td><td class=\"small\">learning: 0 of 24 hours</td>");
    expect(card.match(/unusual<\/span>/g)).toHaveLength(1); // only the metric out of its band is marked
  }, 270_000);

  it("the tool error rate and a score's mean: rolled up from tool calls and scores, judged against their own bands", async () => {
    await awayFromHourBoundary();
    const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
    const history: MetricHour[] = [];
    for (let h = 1; h <= 28 * 24; h++) {
      const hour = new Date(hourStart - h * HOUR);
      history.push({ agent_name: "tool-bot", metric: "tool_error_rate", hour, runs: 40, value: [0.02, 0.03, 0.02, 0.04][h % 4]! });
      history.push({ agent_name: "tool-bot", metric: "score_mean:correctness", hour, runs: 10, value: [0.84, 0.86, 0.85, 0.85][h % 4]! });
    }
    await insertMetricHours(srv.ports.clickhouse, user.id, history);
    for (const [name, fields] of [["Tools", { "config.metric": "tool_error_rate" }], ["Correctness", { "config.metric": "score_mean", "config.score_name": "correctness" }]] as const) {
      const created = await submitRule({ name, trigger_type: "anomaly", channel: "dashboard", "config.window_minutes": "30", "config.min_runs": "5", "config.agent_name": "tool-bot", ...fields });
      expect(created.status).toBe(302);
    }

    // Two runs with six tool calls, three of them failed (error text, error object, status "error"), then poor scores.
    const end = Date.now() - 20_000;
    const at = (ms: number) => new Date(end - ms).toISOString();
    const call = (run: string, i: number, payload: Record<string, unknown>) =>
      ({ event_type: "tool_call", sdk_run_id: run, payload: { phase: "end", tool_name: "search", call_id: `${run}-${i}`, ...payload }, occurred_at: at(1000 - i) });
    const events = ["t1", "t2"].flatMap((run) => [
      { event_type: "run_start", sdk_run_id: run, agent_name: "tool-bot", payload: {}, occurred_at: at(5000) },
      call(run, 1, { error: "timeout" }), call(run, 2, {}), call(run, 3, { status: "error" }),
      { event_type: "run_end", sdk_run_id: run, payload: {}, occurred_at: at(0) },
    ]);
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await expect.poll(async () => (await jobsOf("Tools")).length, { timeout: 15_000, interval: 200 }).toBe(1);
    const tools = (await jobsOf("Tools"))[0]!;
    expect(tools.payload.message).toMatch(/^tool-bot tool error rate 66\.7%, \d+\.\d× its usual [234]\.0% for \w+ \d\d:00$/);
    expect(tools.payload.details).toMatchObject({ state: "fired", metric: "tool_error_rate", runs: 6, baseline: { basis: "slot" } });

    const scores = ["t1", "t2"].flatMap((run) => [0.3, 0.4, 0.5].map((value) => ({ sdk_run_id: run, name: "correctness", value })));
    const sent = await fetch(`${srv.url}/api/scores/batch`, json(key, { scores }));
    expect(sent.status).toBe(207);
    await expect.poll(async () => (await jobsOf("Correctness")).length, { timeout: 15_000, interval: 200 }).toBe(1);
    const low = (await jobsOf("Correctness"))[0]!;
    expect(low.payload.message).toMatch(/^tool-bot correctness mean 0\.40, 0\.5× its usual 0\.8[456] for \w+ \d\d:00$/);
    expect(low.payload.details).toMatchObject({ state: "fired", metric: "score_mean", score_name: "correctness", runs: 6 });
    expect(low.payload.details.value).toBeCloseTo(0.4, 9);
    expect(low.payload.details.baseline.lower).toBeLessThan(0.85);

    const get = (q: string) => fetch(`${srv.url}/api/baselines?${q}`, { headers: { authorization: `Bearer ${key}` } });
    const b = await (await get("agent=tool-bot&metric=score_mean&score=correctness")).json();
    expect(b).toMatchObject({ metric: "score_mean", score: "correctness", label: "correctness mean", window: { runs: 6 }, bands: { medium: { state: "ready", basis: "slot" } } });
    const missing = await get("agent=tool-bot&metric=score_mean");
    expect(missing.status).toBe(422);
    expect((await missing.json()).error).toMatchObject({ field: "score" });
    expect((await (await get("agent=tool-bot&metric=tool_error_rate")).json()).window).toMatchObject({ runs: 6 });
  }, 240_000);

  it("a rule on one environment judges that environment's runs against that environment's own band", async () => {
    await awayFromHourBoundary();
    // Four weeks: env-bot's p95 latency is about 1 s in production and about 8 s in staging; v1 ran for all of it
    // at 1 s, v2 for the last 30 hours at 3 s; v3 for the last 5 (learning).
    const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
    const history: DimensionHour[] = [];
    const row = (dimension: DimensionHour["dimension"], value: string, h: number, v: number): DimensionHour =>
      ({ agent_name: "env-bot", dimension, dimension_value: value, metric: "latency_p95", hour: new Date(hourStart - h * HOUR), runs: 20, value: v });
    for (let h = 1; h <= 28 * 24; h++) {
      history.push(row("environment", "production", h, [1, 1.1, 1, 0.9][h % 4]!), row("environment", "staging", h, [8, 8.5, 8, 7.5][h % 4]!));
      history.push(row("config_version", h > 30 ? "1" : h > 5 ? "2" : "3", h, h > 30 ? 1 : 3));
    }
    await insertDimensionHours(srv.ports.clickhouse, user.id, history);
    await createAgent(srv.ports.sql, user.id, { name: "env-bot" });
    for (const model of ["a", "b"]) await addVersion(srv.ports.sql, user.id, "env-bot", { config: JSON.stringify({ model }), activate: true });

    const long = await submitRule({ name: "x", trigger_type: "anomaly", channel: "dashboard", "config.metric": "latency_p95", "config.environment": "e".repeat(101) });
    expect(long.status).toBe(422);
    expect(await long.text()).toContain("Environment: must be at most 100 characters");
    const form = await (await jar.fetch(`${srv.url}/alerts/new`)).text();
    expect(form).toContain('name="config.environment"');
    const created = await submitRule({
      name: "Slow in production", trigger_type: "anomaly", channel: "dashboard",
      "config.metric": "latency_p95", "config.window_minutes": "1", "config.min_runs": "5", "config.agent_name": "env-bot", "config.environment": "production",
    });
    expect(created.status).toBe(302);

    const ingest = (events: unknown[]) => fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));
    const inEnv = (environment: string, prefix: string, seconds: number) =>
      runs("env-bot", prefix, 5, seconds, 30_000).map((e) => (e.event_type === "run_start" ? { ...e, environment } : e));
    // Production at its usual 1 s, and an incident in staging (30 s, far above its usual 8 s): nothing fires.
    expect((await ingest([...inEnv("production", "pok", 1), ...inEnv("staging", "sbad", 30)])).status).toBe(207);
    await new Promise((r) => setTimeout(r, 2500));
    expect(await jobsOf("Slow in production")).toHaveLength(0);
    // Production at 9 s (staging's usual, but not production's): fires, naming the environment.
    expect((await ingest(inEnv("production", "pbad", 9))).status).toBe(207);
    await expect.poll(async () => (await jobsOf("Slow in production")).length, { timeout: 15_000, interval: 200 }).toBe(1);
    const [fired] = await jobsOf("Slow in production");
    expect(fired!.payload.message).toMatch(/^env-bot \(production\) p95 latency 9\.0 s, 9\.0× its usual 1\.0 s for \w+ \d\d:00; since config v2 was activated \d+ s ago$/);
    expect(fired!.payload.details).toMatchObject({ state: "fired", environment: "production", agent_name: "env-bot", runs: 10, baseline: { basis: "slot", median: 1 } });

    // The API: the band of each environment and recent version, and the activation as its two versions' bands.
    const b = await (await fetch(`${srv.url}/api/baselines?agent=env-bot&metric=latency_p95`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(b.environments.map((e: { environment: string; bands: { medium: { median: number } } }) => [e.environment, e.bands.medium.median])).toEqual([["production", 1], ["staging", 8]]);
    expect(b.config_versions.map((v: { version: number }) => v.version)).toEqual([3, 2, 1]);
    expect(b.config_versions[0].bands.medium).toEqual({ state: "learning", hours: 5, needed: 24 });
    expect(b.changes.at(-1)).toMatchObject({ kind: "config_activation", version: 2, versions: { from_version: 1, to_version: 2, before: { state: "ready", median: 1 }, after: { state: "ready", median: 3 } } });
    // The agent page: each environment's and version's band, and the activation compared by its versions' own bands.
    const page = await (await jar.fetch(`${srv.url}/agents/env-bot`)).text();
    const card = page.slice(page.indexOf('id="baselines"'), page.indexOf("</section>", page.indexOf('id="baselines"')));
    expect(card).toMatch(/<span class="dimension-name">production<\/span> 1\.0 s \(up to 1\.\d+ s\)<\/div>/);
    expect(card).toContain('<span class="dimension-name">v3</span> learning: 5 of 24 hours</div>');
    expect(card).toMatch(/config v2 \([0-9-]+ [0-9:]+ UTC\): v1 usually 1\.0 s → v2 usually 3\.0 s \(each version&#39;s own baseline\)/);
  }, 240_000);

  it("a move of the production label of a prompt an agent uses is one of its change points", async () => {
    const send = (method: string, path: string, body: unknown) => fetch(`${srv.url}${path}`, { ...json(key, body), method });
    // answer: v1 made with the label, v2 labelled later; other: moved too, but no call of prompt-bot uses it.
    expect((await send("POST", "/api/prompts/answer/versions", { prompt: "Answer {{q}}", labels: ["production"] })).status).toBe(201);
    expect((await send("POST", "/api/prompts/answer/versions", { prompt: "Answer briefly {{q}}" })).status).toBe(201);
    expect((await send("PUT", "/api/prompts/answer/labels/production", { version: 2 })).status).toBe(200);
    expect((await send("PUT", "/api/prompts/answer/labels/staging", { version: 1 })).status).toBe(200);
    expect((await send("POST", "/api/prompts/other/versions", { prompt: "Other", labels: ["production"] })).status).toBe(201);

    const events = [
      { event_type: "run_start", sdk_run_id: "pr-1", agent_name: "prompt-bot", payload: {} },
      { event_type: "step", sdk_run_id: "pr-1", span_id: "s1", payload: { kind: "llm", node_name: "answer", phase: "start", model: "gpt-4o" } },
      { event_type: "step", sdk_run_id: "pr-1", span_id: "s1", payload: { kind: "llm", node_name: "answer", phase: "end", model: "gpt-4o", prompt_tokens: 10, completion_tokens: 2, duration_ms: 300, prompt_name: "answer", prompt_version: 2 } },
      { event_type: "run_end", sdk_run_id: "pr-1", payload: {} },
    ];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    const changes = async () => (await (await fetch(`${srv.url}/api/baselines?agent=prompt-bot&metric=latency_p95`, { headers: { authorization: `Bearer ${key}` } })).json()).changes;
    await expect.poll(async () => (await changes()).length, { timeout: 15_000, interval: 200 }).toBe(2);
    const [first, second] = await changes();
    expect(first).toMatchObject({ kind: "prompt_label", label: "prompt answer v1", prompt: "answer", version: 1, from_version: null });
    expect(second).toMatchObject({ kind: "prompt_label", label: "prompt answer v2", prompt: "answer", version: 2, from_version: 1 });
    expect(Date.parse(second.at)).toBeGreaterThanOrEqual(Date.parse(first.at));

    // The agent page's card names the latest one.
    const agentPage = await (await jar.fetch(`${srv.url}/agents/prompt-bot`)).text();
    expect(agentPage).toMatch(/prompt answer v2 \([0-9-]+ [0-9:]+ UTC\): no runs in the 24 h before or after it yet/);
  }, 60_000);
});
