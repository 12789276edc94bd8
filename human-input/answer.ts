/**
 * Answering a run's open question, from its page or the API: the answer is checked, kept (stores/human-input.ts) and
 * the agents waiting for it are woken (notifier.ts).
 */
import { Conflict, NotFound, ValidationError } from "../core/errors.js";
import { displayTextProblem } from "../core/display-text.js";
import { repairString } from "../core/events/storable.js";
import { findAnswer, insertAnswer, latestRequest, type HumanAnswer } from "../stores/human-input.js";
import type { HumanInputDeps } from "./deps.js";
import { inputNotifier } from "./notifier.js";

export const MAX_RESPONSE_CHARS = 20_000;
export const MAX_RESPONDED_BY_CHARS = 200;

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
  const answer = await insertAnswer(deps.sql, { projectId, sdkRunId, request: req, response: v.response, respondedBy: v.responded_by, responderId: responder.id });
  if (!answer) {
    const existing = await findAnswer(deps.sql, projectId, sdkRunId, req.event_id);
    throw new Conflict({
      code: "already_answered",
      message: existing ? `this question was already answered by ${existing.responded_by} at ${existing.answered_at}` : "this question was already answered",
    });
  }
  await inputNotifier(deps.pubsub, deps.logger).notify(projectId, sdkRunId);
  return answer;
}

