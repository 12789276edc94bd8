/**
 * A project's worth of runs for the runs filter's tests (stores/runs/runs-filter.test.ts), with their LLM calls,
 * scores and run text, and the reference: what each RunsFilter field and each sort mean, said in plain JS over the
 * same rows. Values repeat on purpose (ties for every sort) and facts vary independently enough that each filter
 * keeps some runs and drops others.
 */
import { newRunRecord, type RunRecord } from "../../../core/events/run.js";
import { RUN_STATUSES } from "../../../core/events/schema.js";
import { JUDGE_AGENT } from "../../../core/events/judge-runs.js";
import { runIdFor, uuidv7 } from "../../../core/ids.js";
import { scoreOfSort, SINCE_UNIT_MS, type RunsFilter, type RunsSort } from "../../../core/runs-filter/index.js";

/** What the fixture's times count back from. */
export const FIXTURE_NOW = Date.now();
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

type Row = Record<string, unknown>;
export interface Fixture {
  runs: RunRecord[];
  calls: Row[];
  scores: Row[];
  /** Scores re-written under the id of one in `scores`, later (inserted after them): only these rows count. */
  rewrites: Row[];
  texts: Row[];
}

const pick = <T>(values: readonly T[], n: number): T => values[n % values.length]!;

/**
 * `count` runs named run-00, run-01, …; with an `offset`, run-NN has the facts of run NN+offset (another project's
 * copy under the same names, so a query that forgot the project would find wrong facts, not just extra rows).
 */
export function fixture(project: number, offset = 0, count = 48): Fixture {
  const f: Fixture = { runs: [], calls: [], scores: [], rewrites: [], texts: [] };
  for (let n = 0; n < count; n++) {
    const id = `run-${String(n).padStart(2, "0")}`;
    const i = (n + offset) % count;
    const runId = runIdFor(project, id);
    const status = pick(RUN_STATUSES, i);
    // Pairs of runs start at the same time; running and waiting runs have not ended; the last run has no run_start.
    const started = i === count - 1 ? null : FIXTURE_NOW - Math.floor(i / 2) * 3 * HOUR - HOUR / 2;
    const ended = started === null || status === "running" || status === "waiting_for_input" ? null : started + pick([5_000, 10_000, 30_000, 60_000, 30_000], i);
    const metadata: Record<string, string> = {};
    const customer = pick(['"acme"', '"X"', undefined, undefined, '"acme"'], i);
    if (customer) metadata.customer = customer;
    const tier = pick(["2", '"3"', "5", '"high"', undefined, "-1"], i);
    if (tier) metadata.tier = tier;
    const flag = pick(["true", '"true"', undefined], i);
    if (flag) metadata.flag = flag;
    if (i % 9 === 0) metadata["odd key"] = '"x"';
    const model = pick(["gpt-4o", "claude", ""], Math.floor(i / 4));
    f.runs.push({
      ...newRunRecord({ project_id: project, user_id: project }, id, runId, iso(started ?? FIXTURE_NOW - 100 * HOUR)),
      agent_name: i % 11 === 0 ? JUDGE_AGENT : pick(["refund", "support", "refund", "refund bot"], Math.floor(i / 3)),
      status,
      started_at: started === null ? null : iso(started),
      ended_at: ended === null ? null : iso(ended),
      last_event_at: iso(ended ?? (started === null ? FIXTURE_NOW - 100 * HOUR : started + 1_000)),
      model,
      cost_usd: pick([0, 0.01, 0.05, 0.5, 2, 0.05, 0.01], i),
      total_tokens: pick([0, 500, 1000, 5000, 1000, 499, 2000], Math.floor(i / 2)),
      error_count: i % 5 === 1 ? 1 : 0,
      tags: pick([["vip"], ["beta", "vip"], ["beta"], ["a,b"], [], ["vip", "x"], []], i),
      metadata,
      end_user: pick(["cust-0", "cust-1", "cust-2", ""], Math.floor(i / 2)),
      environment: pick(["production", "staging", "", "production", "dev"], Math.floor(i / 2)),
      release: pick(["v1", "v2", ""], Math.floor(i / 5)),
      session_id: pick(["sess-1", "sess-2", "sess-3", "", "sess-30"], i),
      config_version: pick([null, 1, 2], Math.floor(i / 4)),
      experiment_id: i % 10 === 9 ? `0190c000-0000-7000-8000-${String(i).padStart(12, "0")}` : "",
      version: 1,
    });
    const day = iso(started ?? FIXTURE_NOW).slice(0, 10);
    const call = (m: string) => f.calls.push({ user_id: project, project_id: project, run_id: runId, sdk_run_id: id, call_id: `c-${i}-${m}`, model: m, day, started_at: iso(FIXTURE_NOW), ended_at: iso(FIXTURE_NOW) });
    if (model === "claude" && i % 2 === 0) call("gpt-4o-mini");
    if (model === "" && i % 3 === 0) call("gpt-4o");
    // As the pipeline folds them (plugins/llm-calls.ts): the calls' models, in each version of the run.
    f.runs.at(-1)!.models = f.calls.filter((c) => c.run_id === runId).map((c) => String(c.model));
    const score = (name: string, type: string, value: number | string, at: number) => f.scores.push({
      score_id: uuidv7(), user_id: project, project_id: project, run_id: runId, sdk_run_id: id, span_id: "", name, value_type: type,
      value_number: typeof value === "number" ? value : 0, value_string: typeof value === "string" ? value : "", source: "api", created_at: iso(at),
    });
    if (i % 3 !== 2) {
      // Given twice: the latest (not the first, not the largest) is the run's value for sorting.
      score("correctness", "number", (i % 7) / 7, FIXTURE_NOW - 2 * HOUR - i * 1000);
      score("correctness", "number", ((i * 3) % 10) / 10, FIXTURE_NOW - HOUR - i * 1000);
    }
    if (i % 4 === 3) {
      // Re-written under the same id, later: the first value (low, in every low range) must neither match nor sort.
      score("correctness", "number", 0.05, FIXTURE_NOW - 3 * HOUR);
      f.rewrites.push({ ...f.scores.at(-1)!, value_number: 0.95 - (i % 8) / 100, created_at: iso(FIXTURE_NOW - HOUR / 2 - i * 1000) });
    }
    if (i % 4 === 1 || i % 4 === 2) score("helpful", "boolean", i % 4 === 1 ? 1 : 0, FIXTURE_NOW - i * 1000);
    if (i % 5 === 0) score("label", "string", "good", FIXTURE_NOW - i * 1000);
    const text = (t: string) => f.texts.push({ project_id: project, run_id: runId, sdk_run_id: id, event_id: uuidv7(), at: iso(started ?? FIXTURE_NOW), text: t.toLowerCase() });
    if (i % 4 === 0) text("Refund failed: Timeout after 30s");
    if (i % 4 === 1) text("Hello World");
    if (i % 6 === 2) text("100% done_ok");
    if (i % 7 === 3) text("abc donexok");
    if (i % 9 === 4) text("a_c value");
    if (i % 8 === 5) text("back\\slash");
    if (i % 5 === 0) text("call refund tool");
  }
  return f;
}

/** A metadata value as text: a JSON string's content, else the JSON as written. */
const metaText = (v: string): string => (v.startsWith('"') ? (JSON.parse(v) as string) : v);
const asNumber = (t: string): number | null => (/^[+-]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : null);
const inRange = (n: number | null, r: { min?: number; max?: number; min_exclusive?: true; max_exclusive?: true }): boolean =>
  n !== null && (r.min === undefined || (r.min_exclusive ? n > r.min : n >= r.min)) && (r.max === undefined || (r.max_exclusive ? n < r.max : n <= r.max));
const ms = (s: string) => Date.parse(s);
const durationOf = (r: RunRecord) => (r.started_at && r.ended_at ? ms(r.ended_at) - ms(r.started_at) : null);

/** The scores that count: each score id's latest row. */
function currentScores(fx: Fixture): Row[] {
  const latest = new Map<string, Row>();
  for (const s of [...fx.scores, ...fx.rewrites]) {
    const seen = latest.get(String(s.score_id));
    if (!seen || ms(String(s.created_at)) > ms(String(seen.created_at))) latest.set(String(s.score_id), s);
  }
  return [...latest.values()];
}

/** Whether run `r` of the fixture is listed under `f` (the meaning of each field; docs/EXPLORER.md). */
export function matches(fx: Fixture, r: RunRecord, f: RunsFilter, now: number): boolean {
  const scores = currentScores(fx).filter((s) => s.run_id === r.run_id);
  const texts = fx.texts.filter((t) => t.sdk_run_id === r.external_id).map((t) => String(t.text));
  const models = new Set([r.model, ...fx.calls.filter((c) => c.run_id === r.run_id).map((c) => String(c.model))]);
  const oneOf = (v: string, list: readonly string[] | undefined) => list === undefined || list.includes(v);
  const noneOf = (v: string, list: readonly string[] | undefined) => list === undefined || !list.includes(v);
  const checks = [
    f.include_judge || f.agent?.includes(JUDGE_AGENT) || r.agent_name !== JUDGE_AGENT,
    f.include_experiments || r.experiment_id === "",
    f.from === undefined || ms(r.last_event_at) >= ms(f.from),
    f.since === undefined || ms(r.last_event_at) >= now - Number(f.since.slice(0, -1)) * SINCE_UNIT_MS[f.since.slice(-1) as "h"],
    f.to === undefined || ms(r.started_at ?? r.last_event_at) <= ms(f.to),
    oneOf(r.status, f.status), noneOf(r.status, f.status_not),
    oneOf(r.agent_name, f.agent), noneOf(r.agent_name, f.agent_not),
    f.config_version === undefined || r.config_version === f.config_version,
    f.model === undefined || f.model.some((m) => models.has(m)),
    f.model_not === undefined || !f.model_not.some((m) => models.has(m)),
    (f.tags_all ?? []).every((t) => r.tags.includes(t)),
    f.tags_any === undefined || f.tags_any.some((t) => r.tags.includes(t)),
    !(f.tags_none ?? []).some((t) => r.tags.includes(t)),
    ...(f.metadata ?? []).map((c) => {
      const raw = Object.hasOwn(r.metadata, c.key) ? r.metadata[c.key]! : undefined;
      if (!("value" in c)) return (raw !== undefined) === (c.op === "exists");
      if (typeof c.value === "string") return (raw !== undefined && metaText(raw) === c.value) === (c.op === "=");
      const n = raw === undefined ? null : asNumber(metaText(raw));
      return n !== null && (c.op === ">" ? n > c.value : c.op === "<" ? n < c.value : c.op === ">=" ? n >= c.value : n <= c.value);
    }),
    f.end_user === undefined || r.end_user === f.end_user,
    f.session === undefined || r.session_id === f.session,
    oneOf(r.environment, f.environment), noneOf(r.environment, f.environment_not),
    oneOf(r.release, f.release), noneOf(r.release, f.release_not),
    !f.cost || inRange(r.cost_usd, f.cost),
    !f.duration_ms || inRange(durationOf(r), f.duration_ms),
    !f.tokens || inRange(r.total_tokens, f.tokens),
    ...(f.score ?? []).map((c) => scores.some((s) => s.name === c.name
      && (c.min === undefined && c.max === undefined || (s.value_type !== "string" && inRange(Number(s.value_number), c))))),
    f.has_error === undefined || (r.error_count > 0 || r.status === "error") === f.has_error,
    (f.text ?? []).every((t) => texts.some((x) => x.includes(t.toLowerCase()))),
    !(f.text_not ?? []).some((t) => texts.some((x) => x.includes(t.toLowerCase()))),
    f.id_prefix === undefined || r.external_id.startsWith(f.id_prefix) || r.run_id.startsWith(f.id_prefix.toLowerCase()) || r.session_id.startsWith(f.id_prefix),
  ];
  return checks.every(Boolean);
}

/** A run's place in `sort`: [1 when it has a value, the value, its id]. */
export function sortKey(fx: Fixture, r: RunRecord, sort: RunsSort): readonly [number, number, string] {
  const score = scoreOfSort(sort);
  let value: number | null;
  if (score !== undefined) {
    const given = currentScores(fx).filter((s) => s.run_id === r.run_id && s.name === score && s.value_type !== "string")
      .sort((a, b) => ms(String(b.created_at)) - ms(String(a.created_at)));
    value = given.length > 0 ? Number(given[0]!.value_number) : null;
  } else if (sort.field === "duration") value = durationOf(r);
  else if (sort.field === "cost") value = r.cost_usd;
  else if (sort.field === "tokens") value = r.total_tokens;
  else value = ms(r.started_at ?? r.last_event_at);
  return [value === null ? 0 : 1, value ?? 0, r.external_id];
}

/**
 * An older version (version 0) of each of the fixture's runs whose every fact differs from the run's latest: status,
 * agent, labels, tags, metadata, model, error (and for some the experiment), and sort values at the extremes (half
 * before every latest version in each order, half after). A read that does not fold versions would list runs by them
 * or place runs by them; the runs list reads versions without FINAL first (run-list.ts), so these test that it folds
 * them, and that it reads more candidates when stale ones fill the first round.
 */
export function staleVersions(f: Fixture): RunRecord[] {
  return f.runs.map((r, i) => {
    const first = i % 2 === 0;
    const start = FIXTURE_NOW + (first ? 10 * HOUR : -1000 * HOUR);
    return {
      ...r,
      version: 0,
      agent_name: r.agent_name === "refund" ? "support" : "refund",
      status: r.status === "running" ? "error" : "running",
      started_at: iso(start),
      ended_at: iso(start + (first ? 1000 * HOUR : 1)),
      last_event_at: iso(start + (first ? 1000 * HOUR : 1)),
      model: r.model === "gpt-4o" ? "" : "gpt-4o",
      models: r.models.length > 0 ? [] : ["gpt-4o-mini"],
      cost_usd: first ? 1000 : 0,
      total_tokens: first ? 1e9 : 0,
      error_count: r.error_count > 0 ? 0 : 1,
      tags: r.tags.length > 0 ? [] : ["vip", "beta"],
      metadata: Object.keys(r.metadata).length > 0 ? {} : ({ customer: '"acme"', tier: "9", flag: "true" } as Record<string, string>),
      end_user: r.end_user === "" ? "cust-1" : "",
      environment: r.environment === "production" ? "staging" : "production",
      release: r.release === "" ? "v1" : "",
      session_id: r.session_id === "" ? "sess-2" : "",
      config_version: r.config_version === 2 ? 1 : 2,
      // Flipped for a few only: the list leaves experiments out, and the others must rank among the listed runs.
      experiment_id: i % 6 !== 5 ? r.experiment_id : r.experiment_id === "" ? "0190c000-0000-7000-8000-ffffffffffff" : "",
    };
  });
}
