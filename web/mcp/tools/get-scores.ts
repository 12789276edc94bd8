/**
 * get_scores: a run's scores (GET /api/runs/{id}/scores: stores/scores.ts listRunScores), or one score's latest value
 * on each run that matches a filter (the runs list with a `score.<name>` condition, then the runs' score chips of
 * that name) with the mean of that page's numeric and boolean values.
 */
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import { runJson } from "../../../core/events/run-json.js";
import { listRunScores, MAX_SCORE_NAME, scoreChips } from "../../../stores/scores.js";
import { defineTool, type ToolContext } from "../tool.js";
import { cursorArg, filterArg, limitArg, readFilter, runOfKey } from "./args.js";

const MAX_SCORES = 200;
const MAX_RUNS = 100;

export const getScores = defineTool({
  name: "get_scores",
  title: "Get scores",
  description:
    "Scores (evaluations, feedback, judge verdicts). Give sdk_run_id for every score of that run (name, value, comment, " +
    "source, span, time), oldest first. Or give name (and optionally a runs filter) for that score's latest value on each " +
    "matching run, newest run first, with the page's mean. Pages: pass next_cursor back as cursor.",
  input: {
    sdk_run_id: z.string().min(1).max(256).optional().describe("A run's sdk_run_id: its scores."),
    name: z.string().min(1).max(MAX_SCORE_NAME).optional().describe("A score name: its values over the runs that match `filter`."),
    filter: filterArg,
    limit: limitArg(50, MAX_SCORES, "scores (or runs, with name)"),
    cursor: cursorArg,
  },
  action: "read",
  async run(args, ctx) {
    if ((args.sdk_run_id === undefined) === (args.name === undefined)) {
      throw new ValidationError({ field: "sdk_run_id", message: "give either sdk_run_id (a run's scores) or name (one score over runs)" });
    }
    if (args.sdk_run_id !== undefined) {
      const run = await runOfKey(ctx, args.sdk_run_id);
      const page = await listRunScores(ctx.deps.ports.clickhouse, ctx.key.projectId, run.run_id, { limit: args.limit ?? 50, cursor: args.cursor });
      return { sdk_run_id: run.external_id, scores: page.scores, next_cursor: page.next_cursor };
    }
    return scoreOverRuns(ctx, args.name!, args.filter, Math.min(args.limit ?? 50, MAX_RUNS), args.cursor);
  },
});

async function scoreOverRuns(ctx: ToolContext, name: string, filterText: string | undefined, limit: number, cursor: string | undefined) {
  const filter = readFilter(filterText);
  // Only runs that have the score: the filter's own condition on it, else any value.
  const score = filter.score?.some((c) => c.name === name) ? filter.score : [...(filter.score ?? []), { name }];
  const page = await ctx.deps.events.listRuns(ctx.key.projectId, { filter: { ...filter, score }, limit, cursor });
  const chips = await scoreChips(ctx.deps.ports.clickhouse, ctx.key.projectId, page.runs.map((r) => r.run_id), 1, name);
  const runs = page.runs.map((r) => {
    const j = runJson(r);
    return { sdk_run_id: j.sdk_run_id, agent_name: j.agent_name, status: j.status, started_at: j.started_at, config_version: j.config_version, value: chips.get(r.run_id)?.[0]?.value ?? null };
  });
  const numbers = runs.flatMap((r) => (typeof r.value === "number" ? [r.value] : typeof r.value === "boolean" ? [r.value ? 1 : 0] : []));
  return {
    name, runs, next_cursor: page.next_cursor,
    page_summary: { runs: runs.length, numeric_values: numbers.length, mean: numbers.length ? numbers.reduce((a, b) => a + b, 0) / numbers.length : null },
  };
}
