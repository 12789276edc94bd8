/** wait_for_run: blocks until the next run matching a filter finishes (or starts), or a bounded time passes (run-wait.ts). */
import { z } from "zod";
import { runJson } from "../../../core/events/run-json.js";
import { waitForRun } from "../run-wait.js";
import { defineTool } from "../tool.js";
import { filterArg, readFilter } from "./args.js";

/** Below the 60 s a client's request timeout is by default (the TypeScript and Python SDKs'), so the answer arrives. */
export const MAX_WAIT_SECONDS = 55;
const DEFAULT_WAIT_SECONDS = 30;

export const waitForRunTool = defineTool({
  name: "wait_for_run",
  title: "Wait for the next matching run",
  description:
    "Waits for the next run that matches a filter and finishes (success or error) — or, with on=started, starts — after " +
    `this call begins, and returns it (as search_runs lists runs). Waits at most timeout_seconds (1 to ${MAX_WAIT_SECONDS}, ` +
    `default ${DEFAULT_WAIT_SECONDS}); when no run matched in that time it answers matched=false, and you may call it again ` +
    "to keep watching. Use it to watch an agent fleet: e.g. filter `agent:support status:error` to be told of the next failure.",
  input: {
    filter: filterArg,
    on: z.enum(["finished", "started"]).optional().describe("finished (default): a run that ends; started: a run that begins."),
    timeout_seconds: z.number().int().min(1).max(MAX_WAIT_SECONDS).optional().describe(`How long to wait (1 to ${MAX_WAIT_SECONDS} s; default ${DEFAULT_WAIT_SECONDS}).`),
  },
  action: "read",
  async run(args, { deps, key, signal }) {
    const filter = readFilter(args.filter);
    const seconds = args.timeout_seconds ?? DEFAULT_WAIT_SECONDS;
    const began = Date.now();
    const run = await waitForRun({ pubsub: deps.ports.pubsub, events: deps.events }, key.projectId, { filter, on: args.on ?? "finished", timeoutMs: seconds * 1_000, signal });
    if (!run) return { matched: false, message: `no run matched within ${seconds} s`, filter };
    return { matched: true, waited_ms: Date.now() - began, run: runJson(run) };
  },
});
