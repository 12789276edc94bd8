/**
 * A project's data for the query tests (docs/QUERY.md): eight runs of two agents over two days, the second day on
 * config version 2 (slower, scored lower), each with two tool calls and a score — every name and payload carrying the
 * project's marker, so a test can tell whose rows an answer holds. `EXPECTED` is what the rows say.
 */
import { expect } from "vitest";
import { json, until, bearer } from "./harness.js";

export interface SeededRun {
  readonly sdk: string;
  readonly agent: string;
  readonly config: number;
  readonly day: string;
  readonly cost: number;
  readonly durationMs: number;
  readonly searchMs: number;
  readonly quality: number;
}

export function seededRuns(marker: string): SeededRun[] {
  return Array.from({ length: 8 }, (_, i) => ({
    sdk: `${marker}-run-${i}`,
    agent: i % 2 === 0 ? `${marker}-planner` : `${marker}-coder`,
    config: i < 4 ? 1 : 2,
    day: i < 4 ? "2026-11-20" : "2026-11-21",
    cost: 0.01 * (i + 1),
    durationMs: i < 4 ? 1_000 : 3_000,
    searchMs: 100 * (i + 1),
    quality: i < 4 ? 0.9 : 0.5,
  }));
}

const at = (day: string, ms: number) => new Date(Date.parse(`${day}T10:00:00.000Z`) + ms).toISOString();

export async function seedProject(url: string, key: string, marker: string): Promise<SeededRun[]> {
  const runs = seededRuns(marker);
  const events = runs.flatMap((r, i) => {
    const base = { sdk_run_id: r.sdk, agent_name: r.agent, config_version: r.config };
    return [
      { ...base, event_type: "run_start", occurred_at: at(r.day, i * 10_000), payload: { input: { secret: `${marker}-input-${i}` } } },
      { ...base, event_type: "tool_call", span_id: `${r.sdk}-s1`, occurred_at: at(r.day, i * 10_000 + 10), payload: { tool_name: "search", phase: "start", input_preview: `${marker} query` } },
      { ...base, event_type: "tool_call", span_id: `${r.sdk}-s1`, occurred_at: at(r.day, i * 10_000 + 20), payload: { tool_name: "search", phase: "end", duration_ms: r.searchMs, output_preview: `${marker} results` } },
      { ...base, event_type: "tool_call", span_id: `${r.sdk}-s2`, occurred_at: at(r.day, i * 10_000 + 30), payload: { tool_name: `${marker}-fetch`, phase: "end", duration_ms: 50 } },
      { ...base, event_type: "run_end", occurred_at: at(r.day, i * 10_000 + r.durationMs), payload: { output: { answer: `${marker}-output-${i}` }, cost_usd: r.cost, total_tokens: 100, model: `${marker}-model` } },
    ];
  });
  const res = await fetch(`${url}/api/ingest/batch`, json(key, { events }));
  expect(res.status).toBe(207);
  for (const r of runs) {
    const scored = await fetch(`${url}/api/scores`, json(key, { sdk_run_id: r.sdk, name: "quality", value: r.quality, comment: `${marker} note` }));
    // A score may only be given to a stored run: wait for it first.
    if (scored.status !== 201) {
      await until(`run ${r.sdk} stored`, async () => (await fetch(`${url}/api/runs/${r.sdk}`, bearer(key))).status, (s) => s === 200);
      expect((await fetch(`${url}/api/scores`, json(key, { sdk_run_id: r.sdk, name: "quality", value: r.quality, comment: `${marker} note` }))).status).toBe(201);
    }
  }
  const done = async () => (await query(url, key, "SELECT (SELECT count() FROM runs WHERE status = 'success'), (SELECT count() FROM scores), (SELECT count() FROM spans)")).body;
  await until(`${marker}'s runs, scores and spans stored`, done, (b) => JSON.stringify(b.rows) === JSON.stringify([["8", "8", "16"]]));
  return runs;
}

export interface QueryAnswer {
  readonly status: number;
  readonly text: string;
  readonly body: { columns: { name: string; type: string }[]; rows: unknown[][]; truncated: boolean; limit: string | null; error?: { code: string; message: string; field?: string; limit?: string } };
}

export async function query(url: string, key: string, sql: string, extra: Record<string, unknown> = {}): Promise<QueryAnswer> {
  const res = await fetch(`${url}/api/query`, json(key, { sql, ...extra }));
  const text = await res.text();
  let body: QueryAnswer["body"];
  try {
    body = JSON.parse(text) as QueryAnswer["body"];
  } catch {
    body = { columns: [], rows: [], truncated: false, limit: null };
  }
  return { status: res.status, text, body };
}

/** The server's ClickHouse when CLICKHOUSE_URL is set (scale mode), in a database of the test's own; else embedded chDB. */
export const serverEnv = (): Record<string, string> =>
  process.env.CLICKHOUSE_URL ? { CLICKHOUSE_URL: process.env.CLICKHOUSE_URL, CLICKHOUSE_DATABASE: `rwq_${process.pid}_${Date.now()}` } : {};
