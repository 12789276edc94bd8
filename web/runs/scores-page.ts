/**
 * Feedback on a run from its page (/dashboard/{run}): thumbs up or down with an optional comment, stored as a
 * score named "user_feedback" (value true/false, source "human"; docs/API.md, Scores), and the run's scores listed.
 *
 * - POST /dashboard/:run/scores: the form (session + CSRF, checked by the session middleware); 303 back to the
 *   run's scores, or with `span_id` (the trace panel's form) a score of that span and back to it (#span=…). A
 *   refused comment re-renders nothing: the error page names the field (422).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { listRunScores, tallyBooleanScore, type Score } from "../../stores/scores.js";
import { giveScore } from "./scores-api.js";
import type { RunRecord } from "../../core/events/run.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { projectOfRequest } from "../auth/project.js";
import { readForm } from "../forms.js";
import { mountPages } from "../route-table.js";

/** The score the page's thumbs give. */
export const FEEDBACK_SCORE = "user_feedback";

/** The scores a run page lists (newest first); the API pages through the rest. */
export const SCORES_ON_PAGE = 200;

/** What web/runs/views/_scores.njk shows: the run's latest scores, newest first, whether there are more, and the thumbs tally among them. */
export async function scoresView(deps: WebDeps, run: RunRecord): Promise<{ scores: Score[]; more: boolean; up: number; down: number }> {
  const [page, tally] = await Promise.all([
    listRunScores(deps.ports.clickhouse, run.project_id, run.run_id, { limit: SCORES_ON_PAGE, newestFirst: true }),
    tallyBooleanScore(deps.ports.clickhouse, run.project_id, run.run_id, FEEDBACK_SCORE),
  ]);
  return { scores: page.scores, more: page.next_cursor !== null, ...tally };
}

export function registerScoresPage(router: Router, deps: WebDeps): void {
  mountPages(router, deps, {
    give_feedback: { "POST /dashboard/:run/scores": giveFeedback },
  });
}

/** POST /dashboard/:run/scores: the thumbs, then back to the run's scores (303). */
async function giveFeedback(ctx: Context, deps: WebDeps): Promise<void> {
  const user = ctx.state.user as SessionUser;
  const project = projectOfRequest(ctx);
  const sdkRunId = String(ctx.params.run ?? "");
  const form = await readForm(ctx);
  if (form.value !== "up" && form.value !== "down") throw new ValidationError({ field: "value", message: "value must be up or down" });
  const spanId = form.span_id?.trim() || undefined;
  await giveScore(deps, { projectId: project.id, userId: user.id }, {
    sdk_run_id: sdkRunId, name: FEEDBACK_SCORE, value: form.value === "up", source: "human",
    ...(spanId ? { span_id: spanId } : {}),
    ...(form.comment?.trim() ? { comment: form.comment.trim() } : {}),
  }, "reviewer");
  deps.logger.info("run scored", { user_id: user.id, sdk_run_id: sdkRunId, via: "dashboard" });
  ctx.status = 303;
  ctx.redirect(`/dashboard/${encodeURIComponent(sdkRunId)}${spanId ? `#span=${encodeURIComponent(spanId)}` : "#scores"}`);
}
