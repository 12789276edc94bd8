/**
 * Arguments several tools share, each with its bounds and a description for the model, and the runs filter read as
 * the explorer reads it (core/runs-filter: a bad token is refused naming it).
 */
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import type { RunRecord } from "../../../core/events/run.js";
import { MAX_FILTER_CHARS, parseRunsFilter, type RunsFilter } from "../../../core/runs-filter/index.js";
import { runNamed } from "../../runs/trace-api.js";
import type { ToolContext } from "../tool.js";

export const FILTER_HELP =
  "The runs explorer's filter string: space-separated tokens that must all hold, e.g. `agent:support status:error since:24h`, " +
  "`cost>0.05`, `duration>10s`, `tokens>=1000`, `tag:vip`, `meta.customer:acme`, `model:gpt-4o`, `version:3`, `env:production`, " +
  "`score.correctness<0.5`, `has:error`, `session:abc`, `user:cust-42`, `id:0a1b`, a bare word or \"quoted phrase\" to search " +
  "inputs and outputs; `-` before a token negates it. Empty: every run.";

export const sdkRunIdArg = z.string().min(1).max(256).describe("The run's sdk_run_id, as search_runs lists it.");
export const filterArg = z.string().max(MAX_FILTER_CHARS).optional().describe(FILTER_HELP);
export const cursorArg = z.string().min(1).max(1_000).optional().describe("next_cursor of the previous page, to read the next one.");
export const limitArg = (dflt: number, max: number, what: string) =>
  z.number().int().min(1).max(max).optional().describe(`How many ${what} to return (1 to ${max}; default ${dflt}).`);

/** The filter string as a RunsFilter; a bad token is refused naming `filter` and the token. */
export function readFilter(text: string | undefined): RunsFilter {
  if (text === undefined || text.trim() === "") return {};
  try {
    return parseRunsFilter(text);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError({ field: "filter", message: `filter: ${err.message}` });
    throw err;
  }
}

/** The key's project's run of that sdk_run_id; NotFound for any other (another project's included). */
export const runOfKey = (ctx: ToolContext, sdkRunId: string): Promise<RunRecord> => runNamed(ctx.deps, ctx.key.projectId, sdkRunId);

/** A page of an in-memory list: `cursor` is the offset the previous page gave as next_cursor. */
export function offsetPage<T>(list: readonly T[], cursor: string | undefined, limit: number): { items: T[]; next_cursor: string | null } {
  const from = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isInteger(from) || from < 0 || from > list.length) throw new ValidationError({ field: "cursor", message: "cursor must be the next_cursor of the previous page" });
  const items = list.slice(from, from + limit);
  return { items, next_cursor: from + limit < list.length ? String(from + limit) : null };
}
