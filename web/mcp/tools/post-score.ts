/**
 * post_score: a score of a run or one of its spans, given as POST /api/scores gives it (web/runs/scores-api.ts
 * giveScore: stored, routed to the queues of the rules that route such scores, announced to open comparisons).
 * Needs what that route needs: the `send` action.
 */
import { z } from "zod";
import { MAX_SPAN_ID_CHARS } from "../../../core/events/schema.js";
import { MAX_SCORE_COMMENT, MAX_SCORE_NAME, MAX_SCORE_STRING } from "../../../stores/scores.js";
import { giveScore, keyGiver } from "../../runs/scores-api.js";
import { defineTool } from "../tool.js";
import { sdkRunIdArg } from "./args.js";

export const postScore = defineTool({
  name: "post_score",
  title: "Score a run",
  description:
    "Gives a run (or one of its spans) a score: a number, a boolean (thumbs up/down) or a short label, with an optional " +
    "comment. Answers the new score's id. Scores show on the run, in the runs list and in experiments' comparisons. Needs " +
    "a key whose owner may send (member or above).",
  input: {
    sdk_run_id: sdkRunIdArg,
    name: z.string().min(1).max(MAX_SCORE_NAME).describe("The score's name, e.g. correctness, helpful."),
    value: z.union([z.number(), z.boolean(), z.string().max(MAX_SCORE_STRING)]).describe(`A number, a boolean, or a label of at most ${MAX_SCORE_STRING} characters.`),
    comment: z.string().max(MAX_SCORE_COMMENT).optional().describe("Why: shown beside the score."),
    span_id: z.string().min(1).max(MAX_SPAN_ID_CHARS).optional().describe("One of the run's spans, to score it rather than the whole run."),
  },
  action: "send",
  async run(args, { deps, key }) {
    const score_id = await giveScore(deps, key, { ...args, source: "api" }, keyGiver(key));
    return { score_id, sdk_run_id: args.sdk_run_id, name: args.name, value: args.value };
  },
});
