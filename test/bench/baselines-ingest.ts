/**
 * bench:baselines-ingest — bench:baselines' fleet replayed through ingest: the anomaly and slo_burn_rate triggers
 * judge runs that went through POST /api/ingest/batch and the pipeline into ClickHouse, on a simulated clock.
 *
 *   1. A real server in this process (web and pipeline on a temp data dir: file log, chDB, PGlite; test/e2e/harness.ts
 *      startTestServer), its own alert sweep held off (RUNWATCH_ALERT_SWEEP_MS: the bench sweeps on its own clock).
 *   2. FLEET agents (default 6) with the incidents of bench:baselines (two of each kind; baselines-fleet.ts
 *      incidentsAt), their runs recorded once (baselines-ingest-runs.ts) over 28 days of history and the replayed
 *      week, and sent as the events an agent sends with the simulated times as occurred_at: run_start, three tool
 *      call ends, run_end with tokens, cost and scores, an error for a failed run. The history goes through ingest
 *      too; agent_metric_hours is filled by the product's roll-up from those runs (the first sweep's backfill of 28
 *      days, then each hour as it ends), nothing is seeded. In a second project, the SLO stream of baselines-slo.ts.
 *   3. Rules made through the /alerts form: one anomaly rule per metric (all agents, medium, 30 min, min_runs 10;
 *      score_mean for correctness and helpfulness), and an slo_burn_rate rule on an SLO made with POST /api/slos.
 *   4. For each simulated minute of the week, a sweep at its last millisecond (baselines-ingest-sweep.ts): each
 *      trigger's own sweep with that `now` (roll-up, baseline reads, window read from ClickHouse, band,
 *      confirmation, one alert per episode kept in alert_firings), the firings to the notification queue. The SLO
 *      rule is swept over the stream's 3,000 minutes.
 *   5. The in-process replay of bench:baselines (baselines-replay.ts, the trigger's rule set) over the very same
 *      runs, on the same ClickHouse under a project id of its own; both scored alike: precision, recall, time to
 *      detect per incident, false alerts per agent-week; the alerts of one missing from the other are listed. The
 *      SLO alerts against the hand-computed reference.
 *
 * Simulated time: the week ends at the start of the hour 30 to 90 minutes from now, so its history (28 days before
 * it) is inside agent_metric_hours' 35-day TTL for the whole run, and its last windows read tool calls received
 * (received_at, the events table's partition key) well within the hour of look-back the window SQL allows. The
 * week therefore starts on any weekday, and its incidents fall on other weekdays than bench:baselines' (which starts on
 * a Monday): compare its figures with the in-process replay printed beside them, not with bench:baselines'.
 *
 * Run: npm run bench:baselines-ingest   (env: BENCH_FLEET=6, BENCH_DAYS=7 days replayed, BENCH_CONNECTIONS=4)
 */
import os from "node:os";
import { startTestServer, loginJar, csrfFrom } from "../e2e/harness.js";
import { projectsOf } from "../../stores/accounts/projects.js";
import { HISTORY_DAYS } from "../../alerts/baselines/band.js";
import { FLEET_METRICS, HOUR, MINUTE, incidentsAt, type FleetMetric } from "./baselines-fleet.js";
import { DAY, REPLAY_DAYS, TRIGGER_VARIANT, replayInProcess, report, type Fire } from "./baselines-replay.js";
import { SLO_MINUTES, SLO_RUNS_PER_MINUTE, SLO_TARGET, SLO_WINDOW_DAYS, judgeSloInProcess, sloBad, sloHeading, sloLines, type FireResolve } from "./baselines-slo.js";
import { RecordedRuns, fleetEvents, sendAll, sloEvents } from "./baselines-ingest-runs.js";
import { SimulatedSweep } from "./baselines-ingest-sweep.js";

// The server's own sweep (on the wall clock) never runs during the bench: read when the server starts, below.
process.env.RUNWATCH_ALERT_SWEEP_MS = "2000000000";
const FLEET = Number(process.env.BENCH_FLEET ?? 6);
/** Days of the week replayed and judged (fewer: a quicker run, judging only the incidents that start in them). */
const DAYS = Number(process.env.BENCH_DAYS ?? REPLAY_DAYS);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 4);
/** The in-process replay's hourly rows, apart from every real project's. */
const TWIN_PID = 999_999_999;
const SLO_NAME = "slo-agent succeeds";

const log = (line: string) => console.log(line);
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(" ");
const rss = () => `${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const T0 = Math.floor((Date.now() + 90 * MINUTE) / HOUR) * HOUR - DAYS * DAY;
const incidents = incidentsAt(T0, FLEET).filter((x) => x.start < T0 + DAYS * DAY);
const SLO_LENGTH = Math.min(SLO_MINUTES, DAYS * 1440);

log(`machine: ${os.cpus().length} cores, Node ${process.version}; load average ${load()}`);
log(`replayed week from ${new Date(T0).toISOString().slice(0, 16)}Z (${new Date(T0).toLocaleDateString("en-US", { weekday: "long", timeZone: "UTC" })}); history from ${new Date(T0 - HISTORY_DAYS * DAY).toISOString().slice(0, 16)}Z`);
let t = performance.now();
const runs = new RecordedRuns(FLEET, incidents, T0 - HISTORY_DAYS * DAY, T0 + DAYS * DAY);
log(`fleet: ${FLEET} agents, ${incidents.length} incidents, ${runs.count.toLocaleString("en-US")} runs over ${HISTORY_DAYS + DAYS} days recorded in ${secs(performance.now() - t)}`);

const srv = await startTestServer({
  pipeline: true,
  env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0", RUNWATCH_RETENTION_SWEEP_MS: "0" },
});
try {
  const ch = srv.ports.clickhouse;
  const fleetUser = await srv.user();
  const sloUser = await srv.user();
  const [fleetKey, sloKey] = [await srv.key(fleetUser.id), await srv.key(sloUser.id)];
  const projectOf = async (userId: number) => (await projectsOf(srv.ports.sql, userId))[0]!.id; // the personal project, the key's
  const [fleetProject, sloProject] = [await projectOf(fleetUser.id), await projectOf(sloUser.id)];

  // Ingest: the fleet's 35 days, then the SLO stream, over CONNECTIONS connections in batches of up to 1,000 events.
  t = performance.now();
  const fleetSent = await sendAll(srv.url, fleetKey, fleetEvents(runs), { batchSize: 1000, connections: CONNECTIONS });
  const sloSent = await sendAll(srv.url, sloKey, sloEvents("slo-agent", T0, SLO_LENGTH, SLO_RUNS_PER_MINUTE, sloBad), { batchSize: 1000, connections: CONNECTIONS });
  const acked = performance.now() - t;
  const count = async (sql: string, pid: number) => Number((await ch.query<{ n: string | number }>(sql, { pid }))[0]?.n ?? 0);
  const ended = `SELECT count() AS n FROM agent_runs FINAL WHERE project_id = {pid:UInt64} AND status IN ('success', 'error')`;
  const scores = countScores(runs);
  for (;;) {
    const [fr, sr, sc] = [await count(ended, fleetProject), await count(ended, sloProject), await count(`SELECT count() AS n FROM scores FINAL WHERE project_id = {pid:UInt64}`, fleetProject)];
    if (fr === runs.count && sr === SLO_LENGTH * SLO_RUNS_PER_MINUTE && sc === scores) break;
    if (performance.now() - t > acked + 600_000) throw new Error(`not stored 10 min after the last ack: ${fr} of ${runs.count} fleet runs, ${sr} SLO runs, ${sc} of ${scores} scores`);
    await new Promise((r) => setTimeout(r, 500));
  }
  const stored = performance.now() - t;
  const events = fleetSent + sloSent;
  log(`ingest: ${events.toLocaleString("en-US")} events (${(runs.count + SLO_LENGTH * SLO_RUNS_PER_MINUTE).toLocaleString("en-US")} runs, ${scores.toLocaleString("en-US")} scores) acknowledged in ${secs(acked)}, all stored after ${secs(stored)} (${Math.round(events / (stored / 1000)).toLocaleString("en-US")} events/s end to end); RSS ${rss()}, load ${load()}`);

  // Rules, as a user makes them: the /alerts form, and POST /api/slos.
  await makeRules(srv.url, fleetUser.email, FLEET_METRICS.map((m) => anomalyForm(m)));
  const slo = await fetch(`${srv.url}/api/slos`, {
    method: "POST", headers: { authorization: `Bearer ${sloKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name: SLO_NAME, agent_name: "slo-agent", objective: "success_rate", target: SLO_TARGET, window_days: SLO_WINDOW_DAYS }),
  });
  if (slo.status !== 201) throw new Error(`POST /api/slos answered ${slo.status}: ${await slo.text()}`);
  await makeRules(srv.url, sloUser.email, [{ name: "SLO burn", trigger_type: "slo_burn_rate", "config.slo": SLO_NAME, "config.min_runs": "10" }]);

  // The sweep at the last millisecond of each simulated minute.
  const sweep = new SimulatedSweep(srv.ports);
  const rules = await sweep.loadRules();
  const fires: Fire[] = [];
  const seen: FireResolve = { fast: {}, slow: {} };
  let firings = 0;
  const anomalyOnly = (r: { trigger_type: string }) => r.trigger_type === "anomaly";
  t = performance.now();
  let rssMax = 0;
  for (let k = 0; k < DAYS * 24 * 60; k++) {
    const now = T0 + (k + 1) * MINUTE - 1;
    const out = await sweep.sweepAt(new Date(now), k + 1 <= SLO_LENGTH ? undefined : anomalyOnly);
    firings += out.length;
    for (const f of out) {
      const d = f.details as Record<string, any>;
      if (f.rule.trigger_type === "anomaly" && d.state === "fired") {
        const metric = (d.metric === "score_mean" ? `score_mean:${d.score_name}` : d.metric) as FleetMetric;
        fires.push({ agent: Number(/(\d+)$/.exec(String(d.agent_name))![1]), metric, t: now + 1, volume: Number(d.runs) });
      }
      if (f.rule.trigger_type === "slo_burn_rate") {
        const speed = d.speed as "fast" | "slow";
        if (d.state === "fired") seen[speed].fire ??= k + 1;
        else seen[speed].resolve ??= k + 1;
      }
    }
    if ((k + 1) % 360 === 0) {
      rssMax = Math.max(rssMax, process.memoryUsage().rss);
      log(`  simulated day ${((k + 1) / 1440).toFixed(2)} swept in ${secs(performance.now() - t)} so far (${[...sweep.ms].map(([x, v]) => `${x} ${secs(v)}`).join(", ")}); RSS ${rss()}, load ${load()}`);
    }
  }
  const sweepMs = performance.now() - t;
  const ms = [...sweep.ms].map(([k, v]) => `${k} ${secs(v)}`).join(", ");
  log(`sweeps: ${(DAYS * 1440).toLocaleString("en-US")} simulated minutes, ${rules.length} rules, in ${secs(sweepMs)} (${(sweepMs / (DAYS * 1440)).toFixed(1)} ms a minute; wall time in each trigger type's sweeps: ${ms}); ${firings} firings dispatched`);
  const episodes = await srv.ports.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM alert_firings f JOIN alert_rules r ON r.id = f.rule_id WHERE r.trigger_type = 'anomaly' AND f.dedup_key LIKE 'episode:%:fired:%'`,
  );
  log(`  anomaly episodes in alert_firings: ${episodes[0]?.n} (alerts counted here: ${fires.length})`);

  // The in-process replay of the same runs, the trigger's rule set.
  t = performance.now();
  const [twin] = await replayInProcess(ch, { pid: TWIN_PID, source: runs, t0: T0, days: DAYS, variants: [TRIGGER_VARIANT], log });
  log(`in-process replay: ${secs(performance.now() - t)}`);

  log("");
  log(`anomaly alerts, ${FLEET} agents × ${DAYS} days (minutes to detect: latency steps, error-rate ramps, cost spikes, score drops):`);
  report("through ingest, the anomaly trigger", { fires }, incidents, FLEET, true, log, DAYS);
  report("in process, the same runs", twin!, incidents, FLEET, true, log, DAYS);
  compareFires(fires, twin!.fires);
  log("");
  log(sloHeading);
  if (SLO_LENGTH < SLO_MINUTES) log(`  (the stream cut at minute ${SLO_LENGTH} by BENCH_DAYS: only the alerts that end before it)`);
  for (const line of sloLines(seen, SLO_LENGTH)) log(`  through ingest, the slo_burn_rate trigger: ${line}`);
  for (const line of sloLines(judgeSloInProcess())) log(`  in process: ${line}`);
  log(`process RSS (server, chDB, PGlite and the bench in one process): ${rss()} at the end, ${(Math.max(rssMax, process.memoryUsage().rss) / 2 ** 20).toFixed(0)} MiB at most at the end of a simulated day; load ${load()}`);
} finally {
  await srv.close();
}

function countScores(r: RecordedRuns): number {
  let n = 0;
  for (let t = r.from; t < r.to; t += MINUTE) {
    for (let i = 0; i < r.size; i++) for (const x of r.runsInMinute(i, t)) n += (x.correctness !== undefined ? 1 : 0) + (x.helpfulness !== undefined ? 1 : 0);
  }
  return n;
}

function anomalyForm(m: FleetMetric): Record<string, string> {
  const score = m.startsWith("score_mean:") ? m.slice("score_mean:".length) : undefined;
  return {
    name: `anomaly ${m}`, trigger_type: "anomaly", "config.metric": score ? "score_mean" : m, ...(score ? { "config.score_name": score } : {}),
    "config.sensitivity": "medium", "config.window_minutes": "30", "config.min_runs": "10",
  };
}

/** Submits each rule through the /alerts form (dashboard channel, enabled), signed in as `email`. */
async function makeRules(url: string, email: string, forms: readonly Record<string, string>[]): Promise<void> {
  const jar = await loginJar(url, email);
  for (const f of forms) {
    const page = await (await jar.fetch(`${url}/alerts/new`)).text();
    const res = await jar.form(`${url}/alerts`, { _csrf: csrfFrom(page), enabled: "on", channel: "dashboard", ...f });
    if (res.status !== 302) throw new Error(`the /alerts form refused ${f.name}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  }
}

/** The alerts one replay raised and the other did not (same agent, metric and minute). */
function compareFires(ingest: readonly Fire[], twin: readonly Fire[]): void {
  const key = (f: Fire) => `${f.agent} ${f.metric} ${f.t}`;
  const a = new Set(ingest.map(key)), b = new Set(twin.map(key));
  const onlyIngest = ingest.filter((f) => !b.has(key(f))), onlyTwin = twin.filter((f) => !a.has(key(f)));
  const words = (f: Fire) => `agent ${f.agent} ${f.metric} at ${new Date(f.t).toISOString().slice(5, 16)}Z (${f.volume} in the window)`;
  log(`  the same alerts in both: ${ingest.length - onlyIngest.length}; only through ingest: ${onlyIngest.length}${onlyIngest.length ? ` (${onlyIngest.slice(0, 10).map(words).join("; ")})` : ""}; only in process: ${onlyTwin.length}${onlyTwin.length ? ` (${onlyTwin.slice(0, 10).map(words).join("; ")})` : ""}`);
}
