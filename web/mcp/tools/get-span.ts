/**
 * get_span: one span whole (the trace view's read, web/runs/trace-reads.ts spanOf) — input, output, metadata, events,
 * scores — as JSON text, a window of it at a time: a span's payloads may be megabytes, which no model should read
 * at once.
 */
import { z } from "zod";
import { MAX_SPAN_ID_CHARS } from "../../../core/events/schema.js";
import { spanOf } from "../../runs/trace-reads.js";
import { defineTool } from "../tool.js";
import { runOfKey, sdkRunIdArg } from "./args.js";

const DEFAULT_CHARS = 20_000;
const MAX_CHARS = 100_000;

export const getSpan = defineTool({
  name: "get_span",
  title: "Get a span",
  description:
    "One span of a run with all its payloads: input, output, metadata, its events and scores, as JSON text. A large span " +
    "comes in windows of max_chars characters: when next_offset is not null, call again with offset=next_offset for the rest.",
  input: {
    sdk_run_id: sdkRunIdArg,
    span_id: z.string().min(1).max(MAX_SPAN_ID_CHARS).describe("The span's span_id, as get_run lists it."),
    offset: z.number().int().min(0).optional().describe("Where the window starts, in characters of the span's JSON text (default 0)."),
    max_chars: z.number().int().min(1_000).max(MAX_CHARS).optional().describe(`The window's size (1,000 to ${MAX_CHARS}; default ${DEFAULT_CHARS}).`),
  },
  action: "read",
  uncut: true,
  async run(args, ctx) {
    const run = await runOfKey(ctx, args.sdk_run_id);
    const { run: _run, ...span } = await spanOf(ctx.deps, run, args.span_id);
    const text = JSON.stringify(span);
    const offset = Math.min(args.offset ?? 0, text.length);
    const end = Math.min(text.length, offset + (args.max_chars ?? DEFAULT_CHARS));
    return { sdk_run_id: run.external_id, span_id: args.span_id, total_chars: text.length, offset, next_offset: end < text.length ? end : null, text: text.slice(offset, end) };
  },
});
