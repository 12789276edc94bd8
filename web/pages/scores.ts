/**
 * Feedback on a run from its page (/dashboard/{run}): thumbs up or down with an optional comment, stored as a
 * score named "user_feedback" (value true/false, source "human"; docs/API.md, Scores), and the run's scores listed.
 *
 * - POST /dashboard/:run/scores: the form (session + CSRF, checked by the session middleware); 303 back to the
 *   run's scores. A refused comment re-renders nothing: the error page names the field (422).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { listRunScores, type Score } from "../../stores/scores.js";
import { giveScore } from "../api/scores.js";
import type { RunRecord } from "../../core/events/run.js";
import type { SessionUser, WebDeps } from "../deps.js";
import { requireUser } from "../auth/session.js";
import { readForm } from "../forms.js";

/** The score the page's thumbs give. */
export const FEEDBACK_SCORE = "user_feedback";

/** What web/views/_scores.njk shows: the run's scores, newest first, and the thumbs tally. */
export async function scoresView(deps: WebDeps, run: RunRecord): Promise<{ scores: Score[]; up: number; down: number }> {
  const scores = (await listRunScores(deps.ports.clickhouse, run.user_id, run.run_id)).reverse();
  const feedback = scores.filter((s) => s.name === FEEDBACK_SCORE);
  return { scores, up: feedback.filter((s) => s.value === true).length, down: feedback.filter((s) => s.value === false).length };
}

export function register(router: Router, deps: WebDeps): void {
  router.post("/dashboard/:run/scores", requireUser, async (ctx: Context) => {
    const user = ctx.state.user as SessionUser;
    const sdkRunId = String(ctx.params.run ?? "");
    const form = await readForm(ctx);
    if (form.value !== "up" && form.value !== "down") throw new ValidationError({ field: "value", message: "value must be up or down" });
    await giveScore(deps, user.id, {
      sdk_run_id: sdkRunId, name: FEEDBACK_SCORE, value: form.value === "up", source: "human",
      ...(form.comment?.trim() ? { comment: form.comment.trim() } : {}),
    });
    deps.logger.info("run scored", { user_id: user.id, sdk_run_id: sdkRunId, via: "dashboard" });
    ctx.status = 303;
    ctx.redirect(`/dashboard/${encodeURIComponent(sdkRunId)}#scores`);
  });
}
