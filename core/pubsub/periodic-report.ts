/**
 * A process's self-report on PubSub (a pipeline's health, a process's job counters): published now and every
 * interval under a random member id per start, so readers can tell processes apart and forget silent ones. A report
 * that fails is logged at debug: the next one follows. stop() ends it; a report being made when it stops is dropped.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { PubSub } from "../ports/pubsub.js";

/** How often a process reports itself. */
export const REPORT_INTERVAL_MS = 2_000;
/** A process whose last report is older than this (5 intervals) counts as gone. */
export const SILENT_AFTER_MS = 5 * REPORT_INTERVAL_MS;

export function startPeriodicReport(
  pubsub: Pick<PubSub, "publish">,
  opts: { readonly channel: string; readonly intervalMs?: number; readonly logger: Logger; readonly what: string },
  /** The message of `member`, or undefined for no report this time. */
  make: (member: string) => unknown | Promise<unknown>,
): { stop(): void } {
  const member = randomUUID();
  let stopped = false;
  const report = async () => {
    try {
      const msg = stopped ? undefined : await make(member);
      if (!stopped && msg !== undefined) await pubsub.publish(opts.channel, JSON.stringify(msg));
    } catch (err) {
      opts.logger.debug(`${opts.what} report failed`, { err });
    }
  };
  void report();
  const timer = setInterval(() => void report(), opts.intervalMs ?? REPORT_INTERVAL_MS);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
