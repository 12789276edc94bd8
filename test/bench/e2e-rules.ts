/**
 * bench:e2e with alert rules on (BENCH_RULES=anomaly,slo; test/bench/e2e.ts): the sweeping rules a team would have,
 * made before the load so the server's sweep (every 15 s) and the anomaly roll-up run while it ingests.
 *
 *   anomaly   one `anomaly` rule per metric (every agent; medium, 30 min, min_runs 10; score_mean on "helpfulness")
 *   slo       an SLO per agent (99% of runs succeed over 30 days, POST /api/slos) and an `slo_burn_rate` rule on it
 *
 * Made through the /alerts form and the API, as a user makes them. So that the sweep does all of its work, not only
 * the reads of an agent still "learning", the bench agent is given a history first, through ingest: 4 runs an hour
 * over the 30 hours before now (its band is then learned from those hours once the sweep has rolled them up), and
 * 12 failed runs in the last 3 minutes, which make the SLO burn on the first sweep before the load and stop burning
 * once the load's runs fill its windows. After the server stops, evaluatedRules() reads from its data dir what only
 * the sweep writes: the hourly rows its roll-up made of the history, and the episodes the SLO rule fired and resolved.
 */
import { loadConfig } from "../../core/config.js";
import { openPorts } from "../../core/runtime.js";
import { METRIC_NAMES } from "../../alerts/baselines/metrics.js";
import { csrfFrom, loginJar } from "../e2e/harness.js";

const HOUR = 3_600_000;
export const RULE_KINDS = ["anomaly", "slo"] as const;
export type RuleKind = (typeof RULE_KINDS)[number];
const SLO_NAME = "research-agent succeeds";

/** BENCH_RULES parsed: "anomaly,slo" → both; an unknown name throws. */
export function ruleKinds(raw: string | undefined): RuleKind[] {
  const kinds = (raw ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  for (const k of kinds) if (!(RULE_KINDS as readonly string[]).includes(k)) throw new Error(`BENCH_RULES: unknown "${k}" (anomaly, slo)`);
  return kinds as RuleKind[];
}

const post = async (url: string, key: string, path: string, body: unknown): Promise<Response> =>
  fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });

/** The agent's history (see above), through POST /api/ingest/batch; returns the events sent. */
async function seedHistory(url: string, key: string, agent: string): Promise<number> {
  const now = Date.now();
  const run = (id: string, end: number, failed: boolean) => [
    { event_type: "run_start", sdk_run_id: id, agent_name: agent, occurred_at: new Date(end - 1000).toISOString(), payload: {} },
    failed
      ? { event_type: "error", sdk_run_id: id, occurred_at: new Date(end).toISOString(), payload: { error_type: "UpstreamError", error_message: "bench: a failed run" } }
      : { event_type: "run_end", sdk_run_id: id, occurred_at: new Date(end).toISOString(), payload: { total_tokens: 900 } },
  ];
  const hourStart = Math.floor(now / HOUR) * HOUR;
  const events = [
    ...Array.from({ length: 30 * 4 }, (_, n) => run(`history-${n}`, hourStart - Math.floor(n / 4 + 1) * HOUR + (n % 4) * 12 * 60_000 + 60_000, false)),
    ...Array.from({ length: 12 }, (_, n) => run(`failed-${n}`, now - 180_000 + n * 10_000, true)),
  ].flat();
  const res = await post(url, key, "/api/ingest/batch", { events });
  if (res.status !== 207) throw new Error(`the history batch answered ${res.status}: ${await res.text()}`);
  return events.length;
}

/**
 * Makes the rules of `kinds` on the key's project; `email`/`password` sign in to the /alerts form. Returns what was
 * made, in words, and the events of the history sent (the load's "all visible" counts them in).
 */
export async function makeBenchRules(o: { url: string; key: string; email: string; password: string; agent: string; kinds: readonly RuleKind[] }): Promise<{ words: string; events: number }> {
  const events = await seedHistory(o.url, o.key, o.agent);
  const forms: Record<string, string>[] = [];
  if (o.kinds.includes("anomaly")) {
    for (const metric of METRIC_NAMES) {
      forms.push({
        name: `anomaly ${metric}`, trigger_type: "anomaly", "config.metric": metric, ...(metric === "score_mean" ? { "config.score_name": "helpfulness" } : {}),
        "config.sensitivity": "medium", "config.window_minutes": "30", "config.min_runs": "10",
      });
    }
  }
  if (o.kinds.includes("slo")) {
    const res = await post(o.url, o.key, "/api/slos", { name: SLO_NAME, agent_name: o.agent, objective: "success_rate", target: 0.99, window_days: 30 });
    if (res.status !== 201) throw new Error(`POST /api/slos answered ${res.status}: ${await res.text()}`);
    forms.push({ name: "SLO burn", trigger_type: "slo_burn_rate", "config.slo": SLO_NAME, "config.min_runs": "10" });
  }
  const jar = await loginJar(o.url, o.email, o.password);
  for (const f of forms) {
    const page = await (await jar.fetch(`${o.url}/alerts/new`)).text();
    const res = await jar.form(`${o.url}/alerts`, { _csrf: csrfFrom(page), enabled: "on", channel: "dashboard", ...f });
    if (res.status !== 302) throw new Error(`the /alerts form refused "${f.name}": ${res.status}`);
  }
  return { events, words: `${forms.length} rules on (${o.kinds.join(", ")}): ${forms.map((f) => f.name).join(", ")}; history of ${o.agent}: 120 runs over 30 hours, 12 failed runs in the last 3 minutes` };
}

/** What the server's sweep wrote, read from its data dir once it has stopped. */
export async function evaluatedRules(env: NodeJS.ProcessEnv, agent: string): Promise<string> {
  const ports = await openPorts(loadConfig(env), ["clickhouse", "sql"]);
  try {
    const [hours] = await ports.clickhouse.query<{ rows: string | number; hours: string | number; metrics: string | number; rolls: string | number }>(
      `SELECT count() AS rows, uniqExact(hour) AS hours, uniqExact(metric) AS metrics, uniqExact(rolled_at) AS rolls FROM agent_metric_hours WHERE agent_name = {agent:String}`,
      { agent },
    );
    const firings = await ports.sql.query<{ trigger_type: string; dedup_key: string }>(
      `SELECT r.trigger_type, f.dedup_key FROM alert_firings f JOIN alert_rules r ON r.id = f.rule_id ORDER BY f.dedup_key`,
    );
    const keys = firings.map((f) => `${f.trigger_type} ${f.dedup_key}`).join(", ") || "none";
    return `the sweep's roll-up wrote ${hours?.rows ?? 0} hourly rows (${hours?.hours ?? 0} hours × ${hours?.metrics ?? 0} metrics, in ${hours?.rolls ?? 0} roll-ups); episodes in alert_firings: ${keys}`;
  } finally {
    await ports.close();
  }
}
