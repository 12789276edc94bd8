/**
 * An agent's wait for the answer to its question. The listener is registered before the first read, then the wait
 * sleeps until notified (in-process, or through PubSub from another web process), re-reading at most every
 * FALLBACK_CHECK_MS in case a notification was lost: no tight polling of the stores.
 */
import type { RunRecord } from "../core/events/run.js";
import { pendingAnswer, type HumanAnswer } from "../stores/human-input.js";
import type { HumanInputDeps } from "./deps.js";
import { inputNotifier } from "./notifier.js";

/** A waiting agent's answer is re-read at least this often, even without a notification. */
export const FALLBACK_CHECK_MS = 5_000;

/** The answer pending for the run now, or the first one given within `ms`; undefined when none (or on abort). */
export async function waitForAnswer(
  deps: Pick<HumanInputDeps, "sql" | "clickhouse" | "pubsub" | "logger">, run: RunRecord, ms: number, signal: AbortSignal,
): Promise<HumanAnswer | undefined> {
  if (ms <= 0) return pendingAnswer(deps, run);
  const deadline = Date.now() + ms;
  const listener = await inputNotifier(deps.pubsub, deps.logger).listen(run.project_id, run.external_id);
  try {
    for (;;) {
      const answer = await pendingAnswer(deps, run);
      const left = deadline - Date.now();
      if (answer || left <= 0 || signal.aborted) return answer;
      await listener.wait(Math.min(left, FALLBACK_CHECK_MS), signal);
    }
  } finally {
    listener.dispose();
  }
}
