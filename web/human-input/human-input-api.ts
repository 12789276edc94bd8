/**
 * Human-in-the-loop API (Bearer key, the read API's rate-limit bucket):
 *
 *   GET  /api/runs/{sdk_run_id}/input?wait=N  → 200 {response, responded_by, answered_at, request_event_id}
 *        when the run's latest question has an answer the agent has not reported yet; 204 when not (after
 *        waiting up to N seconds, 0..30, for one); 404 for an unknown run.
 *   POST /api/runs/{sdk_run_id}/input {response, responded_by?, request_event_id?} → 201 the answer
 *        (answers from outside the dashboard: a chat bot, a script); 409 when already answered.
 *
 * The waiting (a long poll woken by the answer, on this process or another) is human-input/wait.ts.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { NotFound, ValidationError } from "../../core/errors.js";
import { humanInputDeps, type WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import { readJsonBody } from "../json-body.js";
import { findUserById } from "../../stores/accounts/users.js";
import { answerQuestion, waitForAnswer, type AnswerInput } from "../../human-input/index.js";
import type { HumanAnswer } from "../../stores/human-input.js";
import { mountApi } from "../route-table.js";

export const MAX_WAIT_SECONDS = 30;
const BODY_LIMIT = 64 * 1024;

export const answerJson = (a: HumanAnswer) => ({
  response: a.response,
  responded_by: a.responded_by,
  answered_at: a.answered_at,
  request_event_id: a.request_event_id,
  question: a.question,
});

function waitSeconds(ctx: Context): number {
  const raw = ctx.query.wait;
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (typeof raw !== "string" || !Number.isFinite(n) || n < 0 || n > MAX_WAIT_SECONDS) {
    throw new ValidationError({ message: `wait must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`, field: "wait" });
  }
  return n;
}

/** Registers the input API and the run page's answer routes (web/human-input/human-input-page.ts). */
export function registerHumanInputApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  const authorizeAgent = readAuthorizer(deps, auth, "ingest"); // an agent waits for the answer to its own question

  mountApi(router, deps, authorizeAgent, {
    read: { "GET /api/runs/:sdk_run_id/input": getInput },
  });
  mountApi(router, deps, authorize, {
    answer_input: { "POST /api/runs/:sdk_run_id/input": postInput },
  });
}

/** GET /api/runs/:sdk_run_id/input: the answer, or 204 when none came within `wait` seconds (given up when the client leaves). */
async function getInput(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const wait = waitSeconds(ctx);
  const sdkRunId = ctx.params.sdk_run_id!;
  const run = await deps.events.getRun(p.projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  ctx.set("Cache-Control", "no-store");

  const gone = new AbortController();
  const onClose = () => gone.abort();
  ctx.req.once("close", onClose);
  let answer: HumanAnswer | undefined;
  try {
    answer = await waitForAnswer(humanInputDeps(deps), run, wait * 1000, gone.signal);
  } finally {
    ctx.req.off("close", onClose);
  }
  if (!answer) {
    ctx.status = 204;
    return;
  }
  ctx.body = answerJson(answer);
}

/** POST /api/runs/:sdk_run_id/input: an answer given with the key of its owner. */
async function postInput(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = await readJsonBody(ctx, BODY_LIMIT, { unstorable: "repair" });
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new ValidationError({ message: "the body must be a JSON object like {\"response\": \"yes\"}" });
  }
  const owner = await findUserById(deps.ports.sql, p.userId);
  if (!owner) throw new NotFound({ resource: "user", message: "the key's user no longer exists" });
  const answer = await answerQuestion(humanInputDeps(deps), p.projectId, ctx.params.sdk_run_id!, body as AnswerInput, owner);
  deps.logger.info("human input answered", { user_id: p.userId, sdk_run_id: ctx.params.sdk_run_id, via: "api" });
  ctx.status = 201;
  ctx.body = answerJson(answer);
}
