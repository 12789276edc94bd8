/**
 * Scores API (Bearer key, the read API's rate-limit bucket; docs/API.md, Scores):
 *
 *   POST /api/scores {sdk_run_id, span_id?, name, value, comment?, source?} → 201 {score_id}
 *        404 for a run the key's owner does not have (another tenant's included); 422 naming the field.
 *   GET  /api/runs/{sdk_run_id}/scores?limit&cursor → {scores: [{score_id, name, value, comment, source, span_id, created_at}],
 *        next_cursor}: oldest first, a page of at most `limit` (default 1,000, at most 5,000) and 8 MiB
 */
import type Router from "@koa/router";
import { Either } from "effect";
import { NotFound } from "../../core/errors.js";
import { insertScore, listRunScores, parseScore, scoreCursor } from "../../stores/scores.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { intParam, readAuthorizer, stringParam } from "./read-api.js";
import { countWithinBytes, jsonSize, MAX_EVENTS_PAGE_BYTES } from "./byte-pages.js";
import type { Sender } from "../../core/events/sender.js";

const DEFAULT_SCORES_PAGE = 1_000;
const MAX_SCORES_PAGE = 5_000;
import { readJsonBody } from "../json-body.js";

const BODY_LIMIT = 16 * 1024;

async function ownRun(deps: WebDeps, projectId: number, sdkRunId: string) {
  const run = await deps.events.getRun(projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  return run;
}

/**
 * Stores a score (a POST /api/scores body) of one of the project's runs, given by the sender's user; its id. Throws
 * ValidationError (422), NotFound (404).
 */
export async function giveScore(deps: WebDeps, sender: Sender, body: unknown): Promise<string> {
  const score = parseScore(body);
  if (Either.isLeft(score)) throw score.left;
  const run = await ownRun(deps, sender.projectId, score.right.sdk_run_id);
  return insertScore(deps.ports.clickhouse, { ...run, user_id: sender.userId }, score.right);
}

export function registerScoresApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  const authorizeSending = readAuthorizer(deps, auth, "ingest");

  router.post("/api/scores", async (ctx) => {
    const p = await authorizeSending(ctx);
    const scoreId = await giveScore(deps, p, await readJsonBody(ctx, BODY_LIMIT));
    ctx.status = 201;
    ctx.body = { score_id: scoreId };
  });

  router.get("/api/runs/:sdk_run_id/scores", async (ctx) => {
    const p = await authorize(ctx);
    const run = await ownRun(deps, p.projectId, ctx.params.sdk_run_id!);
    ctx.set("Cache-Control", "no-store");
    const limit = intParam(ctx, "limit", 1, MAX_SCORES_PAGE) ?? DEFAULT_SCORES_PAGE;
    const page = await listRunScores(deps.ports.clickhouse, p.projectId, run.run_id, { limit, cursor: stringParam(ctx, "cursor") });
    // A page ends by bytes too (long comments and string values): the cursor then continues after the last one sent.
    const fit = countWithinBytes(page.scores, MAX_EVENTS_PAGE_BYTES, jsonSize);
    const cut = fit < page.scores.length;
    ctx.body = { scores: page.scores.slice(0, fit), next_cursor: cut ? scoreCursor(page.scores[fit - 1]!) : page.next_cursor };
  });
}
