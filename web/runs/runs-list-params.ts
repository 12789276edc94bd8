/**
 * The runs list's query parameters: `q` (the filter's string form, docs/EXPLORER.md), `sort` and `order`, and the
 * older parameters (status, agent_name, session_id, since, config_version, score_name, score_min, score_max), which
 * the store maps onto RunsFilter fields (stores/runs/run-query.ts legacyRunsFilter) and ANDs with `q`. A bad token of
 * `q` is a 422 naming `q`, its message naming the token.
 */
import type { Context } from "koa";
import { ValidationError } from "../../core/errors.js";
import { RUN_STATUSES, type RunStatus } from "../../core/events/schema.js";
import type { RunFilter } from "../../core/ports/event-store.js";
import { parseRunsFilter, parseRunsSort, type RunsFilter } from "../../core/runs-filter/index.js";
import { MAX_SCORE_NAME } from "../../stores/scores.js";
import { intParam, numberParam, sinceParam, stringParam } from "../api/read-api.js";

/** `q` as a RunsFilter; its ValidationError names `q`. */
export function filterOfQ(ctx: Context): RunsFilter {
  const q = stringParam(ctx, "q");
  if (q === undefined) return {};
  try {
    return parseRunsFilter(q);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError({ message: err.message, field: "q" });
    throw err;
  }
}

/** The page of runs GET /api/runs asks for: the filter, its sort, the older fields, the cursor and the limit. */
export function runsListQuery(ctx: Context): RunFilter & { filter: RunsFilter; sort: NonNullable<RunFilter["sort"]> } {
  const status = stringParam(ctx, "status");
  if (status !== undefined && !RUN_STATUSES.includes(status as RunStatus)) {
    throw new ValidationError({ message: `status must be one of ${RUN_STATUSES.join(", ")}`, field: "status" });
  }
  const scoreName = stringParam(ctx, "score_name");
  if (scoreName !== undefined && scoreName.length > MAX_SCORE_NAME) throw new ValidationError({ message: `score_name is at most ${MAX_SCORE_NAME} characters`, field: "score_name" });
  const [scoreMin, scoreMax] = [numberParam(ctx, "score_min"), numberParam(ctx, "score_max")];
  if ((scoreMin !== undefined || scoreMax !== undefined) && scoreName === undefined) {
    throw new ValidationError({ message: "score_min and score_max need score_name", field: "score_name" });
  }
  const older: RunFilter = {
    status: status as RunStatus | undefined,
    score_name: scoreName,
    score_min: scoreMin,
    score_max: scoreMax,
    agent_name: stringParam(ctx, "agent_name"),
    session_id: stringParam(ctx, "session_id"),
    since: sinceParam(ctx),
    config_version: intParam(ctx, "config_version", 1, 2 ** 31 - 1),
    cursor: stringParam(ctx, "cursor"),
    limit: intParam(ctx, "limit", 1, 500),
  };
  return {
    ...(Object.fromEntries(Object.entries(older).filter(([, v]) => v !== undefined)) as RunFilter),
    filter: filterOfQ(ctx),
    sort: parseRunsSort(stringParam(ctx, "sort"), stringParam(ctx, "order")),
  };
}
