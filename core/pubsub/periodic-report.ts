/**
 * A process's self-report on PubSub (a pipeline's health, a process's job counters): published now and every
 * interval under a random member id per start, so readers can tell processes apart and forget silent ones. A report
 * that fails is logged at debug: the next one follows. stop() ends it; a report being made when it stops is dropped.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { PubSub } from "../ports/pubsub.js";

export function startPeriodicReport(
  pubsub: Pick<PubSub, "publish">,
  opts: { readonly channel: string; readonly intervalMs: number; readonly logger: Logger; readonly what: string },
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
  const timer = setInterval(() => void report(), opts.intervalMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
