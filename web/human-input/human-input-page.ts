/**
 * Answering a waiting run's question from its page (/dashboard/{run}).
 *
 * - humanInputView: what the partial web/human-input/views/_human_input.njk shows (question, context, the answer if one
 *   was given and the agent has not picked it up yet); run.ts passes it as `human_input`.
 * - POST /dashboard/:run/input: the answer form (CSRF-checked by the session middleware). A plain form post
 *   redirects back to the run (303); web/static/human-input.js posts it with fetch (Accept: JSON) and gets
 *   201 with the answer, or the JSON error (409 already answered, 422 empty answer) to show inline.
 * - GET /dashboard/:run/input: the partial alone, which the script re-fetches when the run changes live.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import type { RunRecord } from "../../core/events/run.js";
import { humanInputDeps, type SessionUser, type WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { readForm } from "../forms.js";
import { NotFound } from "../../core/errors.js";
import { answerQuestion } from "../../human-input/index.js";
import { findAnswer, latestRequest, type HumanAnswer, type HumanRequest } from "../../stores/human-input.js";
import { renderFragment } from "../common/render.js";
import { mountPages } from "../route-table.js";

export interface HumanInputView {
  request: HumanRequest;
  answer: HumanAnswer | null;
}

/** The open question of a waiting run, with its answer if already given; null when nothing is asked. */
export async function humanInputView(deps: WebDeps, run: RunRecord): Promise<HumanInputView | null> {
  if (run.status !== "waiting_for_input") return null;
  const request = await latestRequest(deps.ports.clickhouse, run.project_id, run.run_id);
  if (!request?.open) return null;
  const answer = await findAnswer(deps.ports.sql, run.project_id, run.external_id, request.event_id);
  return { request, answer: answer ?? null };
}

const wantsJson = (ctx: Context) => ctx.get("Accept").includes("application/json") && !ctx.get("Accept").includes("text/html");

export function registerHumanInputPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    read: { "GET /dashboard/:run/input": inputFragment },
    answer_input: { "POST /dashboard/:run/input": answerFromPage },
  });
}

/** GET /dashboard/:run/input: the partial alone. */
async function inputFragment(ctx: Context, deps: WebDeps): Promise<void> {
  const run = await loadRun(ctx, deps);
  renderFragment(ctx, "_human_input.njk", { run, human_input: await humanInputView(deps, run) });
}

/** POST /dashboard/:run/input: 201 with the answer to a script (Accept: JSON), else back to the run (303). */
async function answerFromPage(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const sdkRunId = String(ctx.params.run ?? "");
  const form = await readForm(ctx);
  const answer = await answerQuestion(humanInputDeps(deps), project.id, sdkRunId, { response: form.response, request_event_id: form.request_event_id }, user);
  deps.logger.info("human input answered", { user_id: user.id, sdk_run_id: sdkRunId, via: "dashboard" });
  if (wantsJson(ctx)) {
    ctx.status = 201;
    ctx.body = { answer };
    return;
  }
  ctx.status = 303;
  ctx.redirect(`/dashboard/${encodeURIComponent(sdkRunId)}#human-input`);
}

async function loadRun(ctx: Context, deps: WebDeps): Promise<RunRecord> {
  const project = projectOfRequest(ctx);
  const sdkRunId = String(ctx.params.run ?? "");
  const run = await deps.events.getRun(project.id, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `There is no run “${sdkRunId}” in your account.` });
  return run;
}
