/**
 * The runs chart (GET /api/runs/chart, docs/API.md; stores/runs/run-charts.ts) over real HTTP: runs sent through
 * ingest at known times, with known durations, tokens, costs, statuses and scores, come back bucketed exactly as a
 * reference computed here from what was sent (counts, error rate, latency percentiles by quantileExact's rule,
 * tokens, cost, score means); a config activation in the range is a marker; another project's runs and a malformed
 * filter never count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import { bearer, json, startTestServer, until, type TestServer } from "./harness.js";

let srv: TestServer;
let key: string;
let otherKey: string;
let projectId: number;

interface Sent { id: string; start: number; end?: number; status: "success" | "error" | "running"; tokens: number; cost: number; scores: Record<string, number[]> }
const sent: Sent[] = [];
const BUCKET = 300;
const now = Date.now();
const base = now - 3 * 3_600_000;

const ingest = async (k: string, events: unknown[]) => {
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(k, { events }));
  expect([res.status, (await res.json()).rejected]).toEqual([207, 0]);
};
const chart = async (q: string, k = key) => {
  const res = await fetch(`${srv.url}/api/runs/chart?q=${encodeURIComponent(q)}`, bearer(k));
  return { status: res.status, body: await res.json() };
};

/** quantileExact: the value at position floor(level × n) of the sorted values (the last one at most). */
const quantile = (sorted: number[], level: number) => sorted[Math.min(Math.floor(level * sorted.length), sorted.length - 1)]!;

function reference(runs: Sent[]) {
  const out = new Map<string, { runs: number; errors: number; durations: number[]; tokens: number; cost: number; scores: Record<string, number[]> }>();
  for (const r of runs) {
    const at = new Date(Math.floor(r.start / 1000 / BUCKET) * BUCKET * 1000).toISOString();
    const b = out.get(at) ?? { runs: 0, errors: 0, durations: [], tokens: 0, cost: 0, scores: {} };
    b.runs++;
    if (r.status === "error") b.errors++;
    if (r.end !== undefined) b.durations.push(r.end - r.start);
    b.tokens += r.tokens;
    b.cost += r.cost;
    for (const [n, values] of Object.entries(r.scores)) (b.scores[n] ??= []).push(...values);
    out.set(at, b);
  }
  return out;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  const owner = await srv.account();
  key = owner.key;
  otherKey = (await srv.account()).key;
  projectId = owner.id; // a user's first project is their personal one, with the user's id
  const t = (ms: number) => new Date(ms).toISOString();
  const events: unknown[] = [];
  for (let i = 0; i < 36; i++) {
    const start = base + i * 4 * 60_000 + 17_000;
    const dur = 100 + ((i * 1_379) % 9_000);
    const status = i === 7 || i === 21 ? "running" : i % 5 === 0 ? "error" : "success";
    const run: Sent = { id: `c-${i}`, start, status, tokens: status === "success" ? 10 * i : 0, cost: status === "success" ? 0.001 * i : 0, scores: {} };
    events.push({ event_type: "run_start", sdk_run_id: run.id, agent_name: "chart-bot", occurred_at: t(start), payload: { input: `question ${i}` } });
    if (status === "error") {
      run.end = start + dur;
      events.push({ event_type: "error", sdk_run_id: run.id, occurred_at: t(run.end), payload: { error_message: "boom" } });
    } else if (status === "success") {
      run.end = start + dur;
      events.push({ event_type: "run_end", sdk_run_id: run.id, occurred_at: t(run.end), payload: { output: "ok", total_tokens: run.tokens, cost_usd: run.cost } });
    }
    sent.push(run);
  }
  // Another agent's runs, and the same agent in another project: neither is in the chart of agent:chart-bot.
  events.push({ event_type: "run_start", sdk_run_id: "other-agent", agent_name: "other-bot", occurred_at: t(base + 60_000), payload: {} });
  await ingest(key, events);
  await ingest(otherKey, [{ event_type: "run_start", sdk_run_id: "c-0", agent_name: "chart-bot", occurred_at: t(base + 60_000), payload: {} }]);
  await until("the runs are stored", async () => (await (await fetch(`${srv.url}/api/runs?agent_name=chart-bot&limit=100`, bearer(key))).json()).runs?.length, (n) => n === 36);
  for (const r of sent.filter((_, i) => i % 3 === 0)) {
    const values = [r.start % 7 / 10, 0.25];
    for (const value of values) expect((await fetch(`${srv.url}/api/scores`, json(key, { sdk_run_id: r.id, name: "quality", value }))).status).toBe(201);
    r.scores.quality = values;
  }
  for (const r of sent.filter((_, i) => i % 4 === 1)) {
    const value = r.start % 2 === 0;
    expect((await fetch(`${srv.url}/api/scores`, json(key, { sdk_run_id: r.id, name: "helpful", value }))).status).toBe(201);
    r.scores.helpful = [value ? 1 : 0];
  }
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe("GET /api/runs/chart", () => {
  it("buckets the filter's runs as the reference does", async () => {
    const { status, body } = await until("the chart counts every run and score", () => chart("agent:chart-bot since:4h"),
      (c) => c.status === 200 && c.body.buckets.reduce((n: number, b: { runs: number }) => n + b.runs, 0) === 36 && c.body.scores.length === 2);
    expect(status).toBe(200);
    expect(body.range.bucket_seconds).toBe(BUCKET);
    expect(Date.parse(body.range.to) - Date.parse(body.range.from)).toBe(4 * 3_600_000);
    // Every bucket of the range, in order, on the bucket grid.
    const ats = body.buckets.map((b: { at: string }) => Date.parse(b.at) / 1000);
    expect(ats.every((t: number, i: number) => t % BUCKET === 0 && (i === 0 || t - ats[i - 1] === BUCKET))).toBe(true);
    expect(body.buckets.length).toBeGreaterThanOrEqual(48);
    expect(body.scores.sort()).toEqual(["helpful", "quality"]);

    const ref = reference(sent);
    const nonEmpty = body.buckets.filter((b: { runs: number }) => b.runs > 0);
    expect(nonEmpty.map((b: { at: string }) => b.at)).toEqual([...ref.keys()].sort());
    for (const b of nonEmpty) {
      const r = ref.get(b.at)!;
      const d = [...r.durations].sort((x, y) => x - y);
      const mean = (v: number[] | undefined) => (v ? v.reduce((s, x) => s + x, 0) / v.length : undefined);
      expect({ at: b.at, runs: b.runs, errors: b.errors, error_rate: b.error_rate, p50: b.p50_ms, p95: b.p95_ms, p99: b.p99_ms, tokens: b.tokens }).toEqual({
        at: b.at, runs: r.runs, errors: r.errors, error_rate: r.errors / r.runs,
        p50: d.length ? quantile(d, 0.5) : null, p95: d.length ? quantile(d, 0.95) : null, p99: d.length ? quantile(d, 0.99) : null, tokens: r.tokens,
      });
      expect(b.cost_usd).toBeCloseTo(r.cost, 9);
      for (const n of ["quality", "helpful"]) {
        if (r.scores[n]) expect(b.scores[n]).toBeCloseTo(mean(r.scores[n])!, 9);
        else expect(b.scores[n]).toBeUndefined();
      }
    }
    // The empty buckets say so.
    const empty = body.buckets.find((b: { runs: number }) => b.runs === 0);
    expect(empty).toMatchObject({ runs: 0, errors: 0, error_rate: null, p50_ms: null, tokens: 0, cost_usd: 0, scores: {} });
  });

  it("narrows to the filter: errors only, a tag-less other agent, another project", async () => {
    const errors = (await chart("agent:chart-bot status:error since:4h")).body;
    expect(errors.buckets.reduce((n: number, b: { runs: number; errors: number }) => n + b.runs, 0)).toBe(sent.filter((r) => r.status === "error").length);
    expect(errors.buckets.every((b: { runs: number; errors: number }) => b.runs === b.errors)).toBe(true);
    const all = (await chart("since:4h")).body;
    expect(all.buckets.reduce((n: number, b: { runs: number }) => n + b.runs, 0)).toBe(37);
    const other = (await chart("since:4h", otherKey)).body;
    expect(other.buckets.reduce((n: number, b: { runs: number }) => n + b.runs, 0)).toBe(1);
  });

  it("chooses the bucket from the range", async () => {
    const day = (await chart("agent:chart-bot since:24h")).body;
    expect(day.range.bucket_seconds).toBe(900);
    const month = (await chart("agent:chart-bot since:30d")).body;
    expect(month.range.bucket_seconds).toBe(6 * 3600);
    expect(month.buckets.length).toBeLessThanOrEqual(121);
    const hour = (await chart(`agent:chart-bot from:${new Date(base).toISOString()} to:${new Date(base + 3_600_000).toISOString()}`)).body;
    expect(hour.range).toMatchObject({ from: new Date(base).toISOString(), to: new Date(base + 3_600_000).toISOString(), bucket_seconds: 60 });
    expect(hour.buckets.reduce((n: number, b: { runs: number }) => n + b.runs, 0)).toBe(sent.filter((r) => r.start < base + 3_600_000).length);
  });

  it("marks the config activations of the range, of the filter's agents", async () => {
    const { sql } = srv.ports;
    for (const name of ["chart-bot", "unrelated-bot"]) {
      // chart-bot is in the registry since its first run_start; unrelated-bot is made here.
      const known = await sql.query("SELECT 1 FROM agents WHERE project_id = $1 AND name = $2", [projectId, name]);
      if (known.length === 0) await createAgent(sql, projectId, { name });
      await addVersion(sql, projectId, name, { config: JSON.stringify({ prompt: "v1" }) });
      await addVersion(sql, projectId, name, { config: JSON.stringify({ prompt: "v2" }) });
      for (const v of [1, 2, 1]) {
        const res = await fetch(`${srv.url}/api/agents/${name}/configs/${v}/activate`, json(key, {}));
        expect([name, v, res.status]).toEqual([name, v, 200]);
      }
    }
    const marked = (await chart("agent:chart-bot since:1h")).body.activations;
    expect(marked.map((a: { agent: string; version: number }) => `${a.agent} v${a.version}`)).toEqual(["chart-bot v1", "chart-bot v2", "chart-bot v1"]);
    expect(marked.every((a: { at: string }) => Date.now() - Date.parse(a.at) < 60_000)).toBe(true);
    const every = (await chart("since:1h")).body.activations;
    expect(every).toHaveLength(6);
    expect((await chart("agent:chart-bot since:1h", otherKey)).body.activations).toEqual([]);
  });

  it("answers a malformed filter 422 naming it, and needs a read key", async () => {
    for (const q of ["colour:red", "cost>abc", '"unclosed', "x".repeat(2001)]) {
      const { status, body } = await chart(q);
      expect([q.slice(0, 20), status, body.error.field]).toEqual([q.slice(0, 20), 422, "q"]);
    }
    expect((await fetch(`${srv.url}/api/runs/chart`)).status).toBe(401);
  });
});
