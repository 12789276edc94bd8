/**
 * What the runs explorer bench (test/bench/explorer.ts) times, and the two ways it times each: through the store (the
 * code path of GET /api/runs: the filter's string form parsed, EventStore.listRuns, its rows decoded; the chart
 * module for a chart) and raw (the very SQL text and parameters the store sends, captured from its ClickHouse port,
 * sent straight to chDB sessions, the result left unread).
 */
import { Session } from "chdb";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { inlineParams } from "../../core/clickhouse/inline-params.js";
import { CLICKHOUSE_SETTINGS } from "../../core/clickhouse/settings.js";
import { parseRunsFilter, parseRunsSort } from "../../core/runs-filter/index.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { runsChart } from "../../stores/runs/run-charts.js";
import { PROJECT, type DatasetInfo } from "./explorer-data.js";

export type Group = "sort" | "filter" | "combination" | "text" | "chart";

export interface Case {
  readonly name: string;
  readonly group: Group;
  /** The filter's string form (docs/EXPLORER.md). */
  readonly q: string;
  readonly sort?: string;
  readonly order?: string;
}

/** Values the cases look for that only the stored data can tell (a session, an order number, an id prefix). */
export interface Samples {
  readonly session: string;
  readonly order_number: string;
  readonly id_prefix: string;
}

/** A few of the project's own values, read once from the middle of the dataset. */
export async function readSamples(ch: ClickHouse): Promise<Samples> {
  const [run] = await ch.query<{ session_id: string; external_id: string; input_preview: string }>(
    `SELECT session_id, external_id, input_preview FROM agent_runs
      WHERE project_id = ${PROJECT} AND session_id != '' AND status = 'success' ORDER BY external_id LIMIT 1 OFFSET 1000`,
  );
  if (!run) throw new Error("the dataset has no runs");
  return { session: run.session_id, order_number: /#\d+/.exec(run.input_preview)![0], id_prefix: run.external_id.slice(0, 5) };
}

/** Every case: each sort's first page, each filter alone, three filters together, free text, the 30-day charts. */
export function benchCases(info: DatasetInfo, s: Samples): Case[] {
  const ago = (ms: number) => new Date(info.anchor - ms).toISOString().replace(/\.\d{3}Z$/, "Z");
  const HOUR = 3_600_000;
  const thirtyDays = `from:${ago(30 * 24 * HOUR)} to:${ago(0)}`;
  return [
    { name: "newest first (no filter)", group: "sort", q: "" },
    { name: "sort: duration desc", group: "sort", q: "", sort: "duration" },
    { name: "sort: cost desc", group: "sort", q: "", sort: "cost" },
    { name: "sort: tokens desc", group: "sort", q: "", sort: "tokens" },
    { name: "sort: score.correctness asc", group: "sort", q: "", sort: "score.correctness", order: "asc" },
    { name: "status:error", group: "filter", q: "status:error" },
    { name: "-status:success", group: "filter", q: "-status:success" },
    { name: "agent:refund-bot", group: "filter", q: "agent:refund-bot" },
    { name: "version:7", group: "filter", q: "version:7" },
    { name: "model:claude-haiku-4 (any LLM call)", group: "filter", q: "model:claude-haiku-4" },
    { name: "tag:vip", group: "filter", q: "tag:vip" },
    { name: "tag:canary,holiday (any)", group: "filter", q: "tag:canary,holiday" },
    { name: "meta.customer:cust-4242", group: "filter", q: "meta.customer:cust-4242" },
    { name: "meta.tier>=4", group: "filter", q: "meta.tier>=4" },
    { name: "meta.beta:* (exists)", group: "filter", q: "meta.beta:*" },
    { name: "user:user-4242", group: "filter", q: "user:user-4242" },
    { name: "session:…", group: "filter", q: `session:${s.session}` },
    { name: "env:staging", group: "filter", q: "env:staging" },
    { name: "release:v2.5", group: "filter", q: "release:v2.5" },
    { name: "cost>0.05", group: "filter", q: "cost>0.05" },
    { name: "duration>1m", group: "filter", q: "duration>1m" },
    { name: "tokens>=20000", group: "filter", q: "tokens>=20000" },
    { name: "score.correctness<0.2", group: "filter", q: "score.correctness<0.2" },
    { name: "has:error", group: "filter", q: "has:error" },
    { name: "last 24 h (from:)", group: "filter", q: `from:${ago(24 * HOUR)}` },
    { name: "to: (older than 30 days)", group: "filter", q: `to:${ago(30 * 24 * HOUR)}` },
    { name: "id: prefix", group: "filter", q: `id:${s.id_prefix}` },
    { name: "is:experiment", group: "filter", q: "is:experiment" },
    { name: "env:production agent:support-triage tag:vip", group: "combination", q: "env:production agent:support-triage tag:vip" },
    { name: "status:error agent:refund-bot env:production, last 12 h, slowest first", group: "combination", q: `status:error agent:refund-bot env:production from:${ago(12 * HOUR)}`, sort: "duration" },
    { name: 'text "connection reset"', group: "text", q: '"connection reset"' },
    { name: "text: an order number", group: "text", q: `"${s.order_number}"` },
    { name: "text + env:production status:error", group: "text", q: 'timeout env:production status:error' },
    { name: "chart, 30 days", group: "chart", q: thirtyDays },
    { name: "chart, 30 days, agent:support-triage env:production", group: "chart", q: `${thirtyDays} agent:support-triage env:production` },
  ];
}

export const PAGE = 50;

/** A case through the store, as GET /api/runs (or the chart route) runs it; the rows it returned. */
export async function runThroughStore(c: Case, ch: ClickHouse, store: EventStore, now: number): Promise<number> {
  const filter = parseRunsFilter(c.q);
  if (c.group === "chart") return (await runsChart(ch, PROJECT, filter, now)).buckets.length;
  return (await store.listRuns(PROJECT, { filter, sort: parseRunsSort(c.sort, c.order), limit: PAGE })).runs.length;
}

export interface SentQuery {
  readonly sql: string;
  readonly params: Record<string, unknown>;
}

/**
 * The queries the store sends for a case, captured from its ClickHouse port while it runs: in rounds, each round the
 * queries sent side by side (a chart's two), a round sent once the one before has answered (the runs list's reads,
 * each taking the last one's answer).
 */
export async function capturedQueries(c: Case, ch: ClickHouse, now: number): Promise<SentQuery[][]> {
  const rounds: SentQuery[][] = [];
  let pending = 0;
  const fail = () => Promise.reject(new Error("the bench captures reads only"));
  const capture: ClickHouse = {
    query: async <T>(sql: string, params?: Record<string, unknown>) => {
      if (pending === 0) rounds.push([]);
      rounds.at(-1)!.push({ sql, params: { ...params } });
      pending++;
      try {
        return await ch.query<T>(sql, params);
      } finally {
        pending--;
      }
    },
    exec: fail, insert: fail, insertEncoded: fail, close: async () => {},
    sandbox: () => { throw new Error("the bench captures the store's reads only"); },
  };
  await runThroughStore(c, capture, createEventStore(capture), now);
  return rounds;
}

/** chDB sessions of the raw path, with the settings the adapter (core/clickhouse/chdb.ts) gives its own. */
export async function openRawSessions(dir: string, n: number): Promise<Session[]> {
  const connectionArgs = Object.entries(CLICKHOUSE_SETTINGS).map(([k, v]) => `--${k}=${v}`);
  const sessions = Array.from({ length: n }, () => new Session(dir, { connectionArgs }));
  for (const s of sessions) await s.queryAsync("USE runwatch");
  return sessions;
}

/**
 * The captured queries sent straight to chDB, round after round, the queries of a round side by side (each on a
 * session of its own, as the adapter's pool does); as the text with literals where the adapter writes them so
 * (inline-params.ts), else bound. The answers are left unread.
 */
export async function runRaw(rounds: readonly SentQuery[][], sessions: readonly Session[]): Promise<void> {
  for (const round of rounds) {
    await Promise.all(round.map((q, i) => {
      const s = sessions[i % sessions.length]!;
      const plain = Object.keys(q.params).length > 0 ? inlineParams(q.sql, q.params) : q.sql;
      return plain === undefined ? s.queryBindAsync(q.sql, q.params, { format: "JSONEachRow" }) : s.queryAsync(plain, { format: "JSONEachRow" });
    }));
  }
}
