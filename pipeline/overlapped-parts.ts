/**
 * Stores a batch's parts in log order, each with failure isolation (isolation.ts), with one overlap: the next part's
 * first attempt starts as soon as the current part has released its runs' drafts (its runs' rows are made and being
 * written, its hooks have taken their data: part-processor.ts onDraftsReleased). The next part's look-ups, plugins
 * and events insert then run while the current part's runs, llm_calls rows, frames and counters are written, instead
 * of after them (docs/PIPELINE.md). At most two parts are in flight.
 *
 * Why it is safe: the next part only starts on drafts the current part no longer reads, and a run's newer rows carry
 * higher versions (the processor's clock), so the order in which the two parts' writes land does not matter. If the
 * current part's first attempt fails, the next part's attempt is abandoned before isolation retries anything: it is
 * awaited, the run cache is dropped (its drafts may hold the abandoned attempt's changes), and the next part starts
 * over once the current one is settled. Whatever the abandoned attempt stored is found again as duplicates, and
 * runs reloaded from storage have their counters reconciled, as after a crash.
 */
import type { LoggedEvent } from "../core/events/schema.js";
import type { PartProcessor } from "./part-processor.js";
import { processIsolated, type IsolationDeps } from "./isolation.js";

/** One part's first attempt, started by the processor. */
interface Attempt {
  readonly done: Promise<void>;
  /** Resolves once the attempt no longer uses its runs' drafts. */
  readonly released: Promise<void>;
  /** Set as soon as `done` rejects. */
  failed: boolean;
}

type Processor = Pick<PartProcessor, "processPart" | "forgetRuns">;

function startAttempt(processor: Processor, events: readonly LoggedEvent[]): Attempt {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const attempt: Attempt = { done: processor.processPart(events, { onDraftsReleased: release }), released, failed: false };
  attempt.done.catch(() => {
    attempt.failed = true;
  });
  return attempt;
}

/**
 * Stores every part `take` gives, until it gives an empty one. `take` is called for the next part while the current
 * one is stored; isolation's `process` is ignored (the processor's `processPart` is used). Rejects, after every attempt has settled,
 * when a part fails as a whole (an outage: the log then retries the batch).
 */
export async function storeParts(
  take: () => Promise<LoggedEvent[]>,
  processor: Processor,
  isolation: Omit<IsolationDeps, "process">,
): Promise<void> {
  let part = await take();
  let early: Attempt | undefined; // `part`'s first attempt, when it started while the part before it was stored
  while (part.length > 0) {
    const first = early ?? startAttempt(processor, part);
    early = undefined;
    let next: Attempt | undefined;
    let firstUsed = false;
    const deps: IsolationDeps = {
      ...isolation,
      process: async (events) => {
        if (firstUsed) return processor.processPart(events);
        firstUsed = true; // isolation's first call is for the whole part: the attempt already under way
        try {
          await first.done;
        } catch (err) {
          if (next) {
            const abandoned = next;
            next = undefined;
            await abandoned.done.catch(() => {});
            processor.forgetRuns();
          }
          throw err;
        }
      },
    };
    const storing = processIsolated(part, deps);
    storing.catch(() => {}); // awaited below
    let following: LoggedEvent[];
    try {
      following = await take();
    } catch (err) {
      await storing.catch(() => {}); // nothing of this batch may still run when the log hands it again
      throw err;
    }
    if (following.length > 0) {
      // Whichever comes first: the drafts released (start the next part now), or the attempt settled.
      await Promise.race([first.released, first.done.catch(() => {})]);
      if (!first.failed) next = startAttempt(processor, following);
    }
    try {
      await storing;
    } catch (err) {
      await next?.done.catch(() => {});
      throw err;
    }
    early = next;
    part = following;
  }
}
