/**
 * Scores API (Bearer key, the read API's rate-limit bucket; docs/API.md, Scores):
 *
 *   POST /api/scores {sdk_run_id, span_id?, name, value, comment?, source?} → 201 {score_id}
 *        404 for a run the key's owner does not have (another tenant's included); 422 naming the field.
 *   POST /api/scores/batch {scores: [… up to 1,000 of those]} → 207 {results: [{index, status: 201, score_id} |
 *        {index, status: 404 | 422, error}]}: each score stored or refused on its own (an experiment's evaluators
 *        send theirs this way: one request, one bucket token, for many scores).
 *   A score given here (or with the run page's thumbs) adds its run to the queues of the rules that route such
 *   scores (evaluation/online/routing.ts).
 *   GET  /api/runs/{sdk_run_id}/scores?limit&cursor → {scores: [{score_id, name, value, comment, source, span_id, created_at}],
 *        next_cursor}: oldest first, a page of at most `limit` (default 1,000, at most 5,000) and 8 MiB
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { Either } from "effect";
import { can } from "../../core/access/roles.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { uuidv7 } from "../../core/ids.js";
import { insertScore, insertScoreRows, listRunScores, parseScore, scoreCursor, scoreRow } from "../../stores/scores.js";
import { announceExperimentScores } from "../../core/pubsub/experiment-scores.js";
import type { WebDeps } from "../deps.js";
import type { ApiKeyAuth, KeyPrincipal } from "../middleware/api-key-auth.js";
import { intParam, keyPrincipalOf, readAuthorizer, stringParam } from "../api/read-api.js";
import { countWithinBytes, jsonSize, MAX_EVENTS_PAGE_BYTES } from "./byte-pages.js";
import type { Sender } from "../../core/events/sender.js";
import { readJsonBody } from "../json-body.js";
import { type GivenScore, routeGivenScores } from "../../evaluation/index.js";
import { mountApi } from "../route-table.js";

const DEFAULT_SCORES_PAGE = 1_000;
const MAX_SCORES_PAGE = 5_000;
const BODY_LIMIT = 16 * 1024;
export const MAX_SCORES_PER_BATCH = 1_000;
const BATCH_BODY_LIMIT = 4 * 1024 * 1024;

async function ownRun(deps: WebDeps, projectId: number, sdkRunId: string) {
  const run = await deps.events.getRun(projectId, sdkRunId);
  if (!run) throw new NotFound({ resource: "run", message: `run ${JSON.stringify(sdkRunId)} not found` });
  return run;
}

/**
 * Who a key's scores are from (stores/scores.ts, SCORE_GIVERS): a key of scope read+ingest whose creator is now a
 * member, admin or owner of its project is a member's (the activation gate counts its scores); any other is a key's.
 */
export const keyGiver = (p: Pick<KeyPrincipal, "scope" | "role">): "member_key" | "key" =>
  p.scope === "read+ingest" && can(p.role, "give_feedback") ? "member_key" : "key";

/**
 * Stores a score (a POST /api/scores body) of one of the project's runs, given by the sender's user (`givenBy`: the
 * sender as the server knows it); its id. Throws ValidationError (422), NotFound (404).
 */
export async function giveScore(deps: WebDeps, sender: Sender, body: unknown, givenBy: "reviewer" | "member_key" | "key"): Promise<string> {
  const score = parseScore(body);
  if (Either.isLeft(score)) throw score.left;
  const run = await ownRun(deps, sender.projectId, score.right.sdk_run_id);
  const id = await insertScore(deps.ports.clickhouse, { ...run, user_id: sender.userId }, score.right, givenBy);
  await routeGivenScores(deps.ports.sql, sender.projectId, [{ run, name: score.right.name, value: score.right.value }]);
  await announceExperimentScores(deps.ports.pubsub, sender.projectId, [run]);
  return id;
}

export function registerScoresApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  const authorize = readAuthorizer(deps, auth);
  const authorizeSending = readAuthorizer(deps, auth, "ingest");
  mountApi(router, deps, authorizeSending, {
    send: { "POST /api/scores": postScore, "POST /api/scores/batch": postScoreBatch },
  });
  mountApi(router, deps, authorize, {
    read: { "GET /api/runs/:sdk_run_id/scores": getRunScores },
  });
}

async function postScore(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const scoreId = await giveScore(deps, p, await readJsonBody(ctx, BODY_LIMIT, { unstorable: "repair" }), keyGiver(p));
  ctx.status = 201;
  ctx.body = { score_id: scoreId };
}

/** Each score stored or refused on its own: 207 with one result per score. */
async function postScoreBatch(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const body = (await readJsonBody(ctx, BATCH_BODY_LIMIT, { unstorable: "repair" })) as { scores?: unknown } | null;
  const list = typeof body === "object" && body !== null && !Array.isArray(body) ? body.scores : undefined;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_SCORES_PER_BATCH) {
    throw new ValidationError({ field: "scores", message: `scores must be an array of 1 to ${MAX_SCORES_PER_BATCH} scores like {"sdk_run_id", "name", "value"}` });
  }
  const parsed = list.map((raw) => parseScore(raw));
  const wanted = [...new Set(parsed.flatMap((r) => (Either.isRight(r) ? [r.right.sdk_run_id] : [])))];
  const runs = new Map((await deps.events.loadRuns(wanted.map((external_id) => ({ project_id: p.projectId, external_id })))).map((r) => [r.external_id, r]));
  const now = new Date().toISOString();
  const givenBy = keyGiver(p);
  const rows: Record<string, unknown>[] = [];
  const given: GivenScore[] = [];
  const results = parsed.map((r, index) => {
    if (Either.isLeft(r)) return { index, status: 422, error: { code: "invalid", message: r.left.message, field: r.left.field } };
    const run = runs.get(r.right.sdk_run_id);
    if (!run) return { index, status: 404, error: { code: "not_found", message: `run ${JSON.stringify(r.right.sdk_run_id)} not found` } };
    const scoreId = uuidv7();
    rows.push(scoreRow({ ...run, user_id: p.userId }, r.right, scoreId, now, givenBy));
    given.push({ run, name: r.right.name, value: r.right.value });
    return { index, status: 201, score_id: scoreId };
  });
  if (rows.length) await insertScoreRows(deps.ports.clickhouse, rows);
  await routeGivenScores(deps.ports.sql, p.projectId, given);
  await announceExperimentScores(deps.ports.pubsub, p.projectId, given.map((g) => g.run));
  ctx.status = 207;
  ctx.body = { results };
}

async function getRunScores(ctx: Context, deps: WebDeps): Promise<void> {
  const p = keyPrincipalOf(ctx);
  const run = await ownRun(deps, p.projectId, ctx.params.sdk_run_id!);
  ctx.set("Cache-Control", "no-store");
  const limit = intParam(ctx, "limit", 1, MAX_SCORES_PAGE) ?? DEFAULT_SCORES_PAGE;
  const page = await listRunScores(deps.ports.clickhouse, p.projectId, run.run_id, { limit, cursor: stringParam(ctx, "cursor") });
  // A page ends by bytes too (long comments and string values): the cursor then continues after the last one sent.
  const fit = countWithinBytes(page.scores, MAX_EVENTS_PAGE_BYTES, jsonSize);
  const cut = fit < page.scores.length;
  ctx.body = { scores: page.scores.slice(0, fit), next_cursor: cut ? scoreCursor(page.scores[fit - 1]!) : page.next_cursor };
}
