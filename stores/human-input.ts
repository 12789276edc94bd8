/**
 * Human in the loop, its rows (the answering, notifying and waiting are human-input/, the feature).
 *
 * - The question is the run's latest human_input_requested event (ClickHouse agent_events). It is *open* while
 *   no human_input_received follows it: once the agent reports the answer it used, the question is closed.
 * - The answer is a Postgres row (human_inputs) keyed by the request's event_id: one answer per question,
 *   a second question in the same run needs a new answer, answering twice is a 409 decided by the unique key.
 */
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import type { RunRecord } from "../core/events/run.js";

export interface HumanRequest {
  event_id: string;
  question: string;
  context: unknown;
  channel: string | null;
  occurred_at: string;
  /** False once a human_input_received follows the request. */
  open: boolean;
}

export interface HumanAnswer {
  request_event_id: string;
  question: string;
  response: string;
  responded_by: string;
  answered_at: string;
}

const toIso = (s: string): string => (s.includes("T") ? s : `${s.replace(" ", "T")}Z`);

/** The run's latest human_input_requested, and whether the agent has reported an answer to it since. */
export async function latestRequest(ch: ClickHouse, projectId: number, runId: string): Promise<HumanRequest | undefined> {
  // Newest two distinct events of the two kinds, in processing order (toString(event_id): see event-store.ts).
  const rows = await ch.query<{ event_id: string; event_type: string; payload: string; occurred_at: string }>(
    `SELECT toString(event_id) AS event_id, event_type, payload, toString(occurred_at) AS occurred_at
       FROM agent_events
      WHERE project_id = {pid:UInt64} AND run_id = {rid:UUID}
        AND event_type IN ('human_input_requested', 'human_input_received')
      ORDER BY toString(event_id) DESC
      LIMIT 1 BY event_id
      LIMIT 50`,
    { pid: projectId, rid: runId },
  );
  const idx = rows.findIndex((r) => r.event_type === "human_input_requested");
  if (idx === -1) return undefined;
  const r = rows[idx]!;
  let p: Record<string, unknown> = {};
  try { p = JSON.parse(r.payload) as Record<string, unknown>; } catch { /* stored payloads are JSON */ }
  return {
    event_id: r.event_id,
    question: typeof p.question === "string" ? p.question : "",
    context: p.context ?? null,
    channel: typeof p.channel === "string" ? p.channel : null,
    occurred_at: toIso(r.occurred_at),
    open: idx === 0,
  };
}

const answerOf = (r: Record<string, unknown>): HumanAnswer => ({
  request_event_id: String(r.request_event_id),
  question: String(r.question ?? ""),
  response: String(r.response),
  responded_by: String(r.responded_by),
  answered_at: new Date(r.answered_at as string).toISOString(),
});

export async function findAnswer(sql: Sql, projectId: number, sdkRunId: string, requestEventId: string): Promise<HumanAnswer | undefined> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT request_event_id, question, response, responded_by, answered_at FROM human_inputs
      WHERE project_id = $1 AND sdk_run_id = $2 AND request_event_id = $3`,
    [projectId, sdkRunId, requestEventId],
  );
  return rows[0] ? answerOf(rows[0]) : undefined;
}

/** The answer the agent should get now: the one to the latest request, while that request is open. */
export async function pendingAnswer(stores: { readonly sql: Sql; readonly clickhouse: ClickHouse }, run: RunRecord): Promise<HumanAnswer | undefined> {
  const req = await latestRequest(stores.clickhouse, run.project_id, run.run_id);
  if (!req?.open) return undefined;
  return findAnswer(stores.sql, run.project_id, run.external_id, req.event_id);
}

export interface NewAnswer {
  readonly projectId: number;
  readonly sdkRunId: string;
  /** The question's request: its human_input_requested event_id and text. */
  readonly request: Pick<HumanRequest, "event_id" | "question">;
  readonly response: string;
  readonly respondedBy: string;
  readonly responderId: number;
}

/** Adds the answer to its question; undefined when the question has an answer already (the unique key decides). */
export async function insertAnswer(sql: Sql, a: NewAnswer): Promise<HumanAnswer | undefined> {
  const rows = await sql.query<Record<string, unknown>>(
    `INSERT INTO human_inputs (project_id, sdk_run_id, request_event_id, question, response, responded_by, responder_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (project_id, sdk_run_id, request_event_id) DO NOTHING
     RETURNING request_event_id, question, response, responded_by, answered_at`,
    [a.projectId, a.sdkRunId, a.request.event_id, a.request.question, a.response, a.respondedBy, a.responderId],
  );
  return rows[0] ? answerOf(rows[0]) : undefined;
}
