/** The run the current async call is inside: `client.run(options, fn)` enters it, LangChain's handler reports into it. */
import { asyncContext } from "./platform.js";
import type { Run } from "./run.js";

const enclosingRun = asyncContext<Run>();

/** The run the current async call is inside (`client.run(options, fn)`), if any and not ended. */
export function currentRun(): Run | undefined {
  const run = enclosingRun.get();
  return run && !run.ended ? run : undefined;
}

/** Calls fn inside `run`: currentRun() answers it there. */
export const insideRun = <T>(run: Run, fn: () => T): T => enclosingRun.run(run, fn);
