/** search_runs: the runs list as GET /api/runs reads it (EventStore.listRuns), by the explorer's filter string. */
import { z } from "zod";
import { runJson } from "../../../core/events/run-json.js";
import { parseRunsSort } from "../../../core/runs-filter/index.js";
import { defineTool } from "../tool.js";
import { cursorArg, filterArg, limitArg, readFilter } from "./args.js";

const MAX_RUNS = 100;

export const searchRuns = defineTool({
  name: "search_runs",
  title: "Search runs",
  description:
    "Lists the project's agent runs that match a filter, newest first unless sorted otherwise: each run's sdk_run_id, agent, " +
    "status, times, duration, tokens, cost, model, the models of its LLM calls, tags, metadata, error and input/output previews. Use it to find runs, then " +
    "get_run for one run's spans. Pages: pass next_cursor back as cursor with the same filter and sort.",
  input: {
    filter: filterArg,
    sort: z.string().max(120).optional().describe("start_time (default), duration, cost, tokens, or score.<name>."),
    order: z.enum(["asc", "desc"]).optional().describe("desc (default) or asc."),
    limit: limitArg(20, MAX_RUNS, "runs"),
    cursor: cursorArg,
  },
  action: "read",
  async run(args, { deps, key }) {
    const filter = readFilter(args.filter);
    const sort = parseRunsSort(args.sort, args.order);
    const page = await deps.events.listRuns(key.projectId, { filter, sort, cursor: args.cursor, limit: args.limit ?? 20 });
    return { runs: page.runs.map(runJson), next_cursor: page.next_cursor, filter, sort };
  },
});
