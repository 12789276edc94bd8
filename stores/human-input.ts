/**
 * Human in the loop, shared by the API (web/human-input/human-input-api.ts) and the run page (web/human-input/human-input-page.ts).
 *
 * - The question is the run's latest human_input_requested event (ClickHouse agent_events). It is *open* while
 *   no human_input_received follows it: once the agent reports the answer it used, the question is closed.
 * - The answer is a Postgres row (human_inputs) keyed by the request's event_id: one answer per question,
 *   a second question in the same run needs a new answer, answering twice is a 409 decided by the unique key.
 * - Waiting agents (GET /api/runs/{id}/input?wait=N) are woken by an in-process notifier, and through
 *   PubSub channel `input.{projectId}` when the answer was given on another web process (scale mode).
 */
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import type { Logger } from "../core/logger.js";
import type { RunRecord } from "../core/events/run.js";
import { Conflict, NotFound, ValidationError } from "../core/errors.js";
import type { EventStore } from "../core/ports/event-store.js";
import { displayTextProblem } from "../core/display-text.js";
import { repairString } from "../core/events/storable.js";

export const MAX_RESPONSE_CHARS = 20_000;
export const MAX_RESPONDED_BY_CHARS = 200;
export const INPUT_CHANNEL_PREFIX = "input.";
export const inputChannel = (projectId: number): string => `${INPUT_CHANNEL_PREFIX}${projectId}`;

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
/** What answering needs: the stores, the event store (the run's status) and the logger. */
export interface HumanInputDeps {
  readonly sql: Sql;
  readonly clickhouse: ClickHouse;
  readonly pubsub: PubSub;
  readonly events: EventStore;
  readonly logger: Logger;
}

export async function pendingAnswer(deps: Pick<HumanInputDeps, "sql" | "clickhouse">, run: RunRecord): Promise<HumanAnswer | undefined> {
  const req = await latestRequest(deps.clickhouse, run.project_id, run.run_id);
  if (!req?.open) return undefined;
  return findAnswer(deps.sql, run.project_id, run.external_id, req.event_id);
}

export interface AnswerInput {
  response: unknown;
  /** Who answered, as shown to the agent; defaults to the answering user. */
  responded_by?: unknown;
  /** The question being answered (the form carries it, so an answer never lands on a newer question). */
  request_event_id?: unknown;
}

export interface Responder {
  readonly id: number;
  readonly name: string;
  readonly email: string;
}

export const responderLabel = (u: Responder): string => (u.name && u.name !== u.email ? `${u.name} <${u.email}>` : u.email);

function validateAnswer(input: AnswerInput, responder: Responder): { response: string; responded_by: string; request_event_id?: string } {
  if (typeof input.response !== "string" || input.response.trim() === "") {
    throw new ValidationError({ message: "response must be a non-empty string", field: "response" });
  }
  if (input.response.length > MAX_RESPONSE_CHARS) {
    throw new ValidationError({ message: `response is longer than ${MAX_RESPONSE_CHARS} characters`, field: "response" });
  }
  let respondedBy = responderLabel(responder);
  if (input.responded_by !== undefined && input.responded_by !== null && input.responded_by !== "") {
    if (typeof input.responded_by !== "string" || input.responded_by.length > MAX_RESPONDED_BY_CHARS) {
      throw new ValidationError({ message: `responded_by must be a string of at most ${MAX_RESPONDED_BY_CHARS} characters`, field: "responded_by" });
    }
    const problem = displayTextProblem(input.responded_by);
    if (problem) throw new ValidationError({ message: `responded_by ${problem}`, field: "responded_by" });
    respondedBy = input.responded_by.trim();
  }
  let requestEventId: string | undefined;
  if (input.request_event_id !== undefined && input.request_event_id !== null && input.request_event_id !== "") {
    if (typeof input.request_event_id !== "string" || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(input.request_event_id)) {
      throw new ValidationError({ message: "request_event_id must be the event_id (UUID) of the human_input_requested event", field: "request_event_id" });
    }
    requestEventId = input.request_event_id.toLowerCase();
  }
  // Free text like an event's strings: NUL (which Postgres refuses in text) and lone surrogates become U+FFFD.
  return { response: repairString(input.response), responded_by: respondedBy, request_event_id: requestEventId };
}

/**
 * Records the answer to the run's open question and wakes the agents waiting for it.
 * 404 unknown run, 409 no open question / a newer question / already answered, 422 bad input.
 */
export async function answerQuestion(deps: HumanInputDeps, projectId: number, sdkRunId: string, input: AnswerInput, responder: Responder): Promise<HumanAnswer> {
  const v = validateAnswer(input, responder);
  const run = await deps.events.getRun(projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  if (run.status === "success" || run.status === "error") {
    throw new Conflict({ code: "run_ended", message: `run ${JSON.stringify(sdkRunId)} has already ended (${run.status}); it is not waiting for input` });
  }
  const req = await latestRequest(deps.clickhouse, projectId, run.run_id);
  if (!req) throw new Conflict({ code: "no_open_question", message: `run ${JSON.stringify(sdkRunId)} has not asked for human input` });
  if (v.request_event_id && v.request_event_id !== req.event_id) {
    throw new Conflict({ code: "question_superseded", message: "the agent has asked a newer question since this one was shown; reload to see it", field: "request_event_id" });
  }
  if (!req.open) throw new Conflict({ code: "no_open_question", message: "the agent has already received an answer to its latest question" });
  const rows = await deps.sql.query<Record<string, unknown>>(
    `INSERT INTO human_inputs (project_id, sdk_run_id, request_event_id, question, response, responded_by, responder_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (project_id, sdk_run_id, request_event_id) DO NOTHING
     RETURNING request_event_id, question, response, responded_by, answered_at`,
    [projectId, sdkRunId, req.event_id, req.question, v.response, v.responded_by, responder.id],
  );
  if (!rows[0]) {
    const existing = await findAnswer(deps.sql, projectId, sdkRunId, req.event_id);
    throw new Conflict({
      code: "already_answered",
      message: existing ? `this question was already answered by ${existing.responded_by} at ${existing.answered_at}` : "this question was already answered",
    });
  }
  const answer = answerOf(rows[0]);
  await inputNotifier(deps.pubsub, deps.logger).notify(projectId, sdkRunId);
  return answer;
}

/** A waiter registered before the state is read, so a notification between read and wait is not lost. */
export interface InputListener {
  /** Resolves on a notification (or one that came since the last wait), after `ms`, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

export interface InputNotifier {
  /** Subscribes this process to `input.*` (once) and registers a listener for the run. */
  listen(projectId: number, sdkRunId: string): Promise<InputListener>;
  /** Wakes local listeners and publishes to other processes. */
  notify(projectId: number, sdkRunId: string): Promise<void>;
}

const notifiers = new WeakMap<PubSub, InputNotifier>();

/** One notifier per PubSub (per web process). */
export function inputNotifier(pubsub: PubSub, logger: Logger): InputNotifier {
  let n = notifiers.get(pubsub);
  if (!n) notifiers.set(pubsub, (n = createInputNotifier(pubsub, logger)));
  return n;
}

export function createInputNotifier(pubsub: PubSub, logger: Logger): InputNotifier {
  const origin = randomUUID();
  const listeners = new Map<string, Set<{ fire(): void }>>();
  const key = (projectId: number | string, sdkRunId: string) => `${projectId}\u0000${sdkRunId}`;
  let subscribed: Promise<unknown> | undefined;

  const wakeLocal = (k: string) => {
    for (const l of listeners.get(k) ?? []) l.fire();
  };

  const subscribe = () =>
    (subscribed ??= pubsub
      .subscribePrefix(INPUT_CHANNEL_PREFIX, (channel, message) => {
        try {
          const m = JSON.parse(message) as { origin?: string; sdk_run_id?: string };
          if (m.origin === origin || typeof m.sdk_run_id !== "string") return;
          wakeLocal(key(channel.slice(INPUT_CHANNEL_PREFIX.length), m.sdk_run_id));
        } catch { /* not ours */ }
      })
      .catch((err) => {
        subscribed = undefined;
        logger.warn("could not subscribe to human-input notifications; waiting agents fall back to periodic checks", { err });
      }));

  return {
    async listen(projectId, sdkRunId) {
      await subscribe();
      const k = key(projectId, sdkRunId);
      let fired = false;
      let wake: (() => void) | undefined;
      const l = { fire() { fired = true; wake?.(); } };
      let set = listeners.get(k);
      if (!set) listeners.set(k, (set = new Set()));
      set.add(l);
      return {
        wait(ms, signal) {
          if (fired || signal?.aborted) { fired = false; return Promise.resolve(); }
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener("abort", done);
              wake = undefined;
              fired = false;
              resolve();
            };
            const timer = setTimeout(done, Math.max(0, ms));
            signal?.addEventListener("abort", done, { once: true });
            wake = done;
          });
        },
        dispose() {
          wake?.();
          set!.delete(l);
          if (set!.size === 0 && listeners.get(k) === set) listeners.delete(k);
        },
      };
    },
    async notify(projectId, sdkRunId) {
      wakeLocal(key(projectId, sdkRunId));
      try {
        await pubsub.publish(inputChannel(projectId), JSON.stringify({ type: "human_input_answered", sdk_run_id: sdkRunId, origin }));
      } catch (err) {
        logger.warn("could not publish a human-input notification; agents on other processes find it at their next check", { err });
      }
    },
  };
}
