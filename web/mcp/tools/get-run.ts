/**
 * get_run: one run — its header and totals (the read API's run), its input and output, its run-level events, and its
 * spans' skeletons in tree order a page at a time (the trace view's reads: web/runs/trace-reads.ts).
 */
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import { runOverview, skeletonOf } from "../../runs/trace-reads.js";
import { defineTool } from "../tool.js";
import { limitArg, runOfKey, sdkRunIdArg } from "./args.js";

const MAX_SPANS = 500;
/** Run-level events shown (start, end, errors, questions and answers); the rest are counted. */
const RUN_EVENTS_SHOWN = 20;

export const getRun = defineTool({
  name: "get_run",
  title: "Get a run",
  description:
    "One run by its sdk_run_id: status, agent, config version, times, tokens, cost, tags, metadata, its input and output, its " +
    "run-level events (start, end, errors, questions), and its span tree as skeletons in tree order (span_id, parent, depth, " +
    "name, kind, status, start, duration, model, tokens, cost, scores). Long traces page: pass next_span_cursor as span_cursor. " +
    "Read one span's payloads with get_span.",
  input: {
    sdk_run_id: sdkRunIdArg,
    span_limit: limitArg(100, MAX_SPANS, "spans"),
    span_cursor: z.string().min(1).max(256).optional().describe("next_span_cursor of the previous answer, for the next page of spans."),
  },
  action: "read",
  async run(args, ctx) {
    const run = await runOfKey(ctx, args.sdk_run_id);
    const [overview, sk] = await Promise.all([runOverview(ctx.deps, run), skeletonOf(ctx.deps, run)]);
    let from = 0;
    if (args.span_cursor !== undefined) {
      const i = sk.spans.findIndex((s) => s.span_id === args.span_cursor);
      if (i < 0) throw new ValidationError({ field: "span_cursor", message: "span_cursor must be the next_span_cursor of the previous answer for this run" });
      from = i + 1;
    }
    const limit = args.span_limit ?? 100;
    const spans = sk.spans.slice(from, from + limit);
    const events = overview.events as unknown[];
    return {
      run: overview.run,
      input: overview.input,
      output: overview.output,
      events: events.slice(0, RUN_EVENTS_SHOWN),
      ...(events.length > RUN_EVENTS_SHOWN ? { events_not_shown: events.length - RUN_EVENTS_SHOWN } : {}),
      total_spans: sk.spans.length,
      spans,
      next_span_cursor: from + spans.length < sk.spans.length && spans.length ? spans[spans.length - 1]!.span_id : null,
    };
  },
});
