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

/**
 * The reading side: the latest report of each member on `channel` that `isReport` accepts, forgetting a member silent
 * for SILENT_AFTER_MS. `onReport` sees each accepted report as it arrives (for samples over time).
 */
export async function watchPeriodicReports<R extends { readonly member: string }>(
  pubsub: Pick<PubSub, "subscribePrefix">,
  opts: { readonly channel: string; readonly logger: Logger; readonly what: string; readonly clock?: () => number },
  isReport: (v: unknown) => v is R,
  onReport?: (report: R, receivedAt: number) => void,
): Promise<{ live(): R[]; close(): Promise<void> }> {
  const clock = opts.clock ?? Date.now;
  const latest = new Map<string, { report: R; receivedAt: number }>();
  const unsubscribe = await pubsub.subscribePrefix(opts.channel, (_channel, message) => {
    try {
      const report = JSON.parse(message) as unknown;
      if (!isReport(report)) return;
      const now = clock();
      latest.set(report.member, { report, receivedAt: now });
      onReport?.(report, now);
    } catch (err) {
      opts.logger.debug(`ignoring a malformed ${opts.what} report`, { err });
    }
  });
  return {
    live() {
      const now = clock();
      for (const [member, r] of latest) if (now - r.receivedAt > SILENT_AFTER_MS) latest.delete(member);
      return [...latest.values()].map((r) => r.report);
    },
    close: () => unsubscribe(),
  };
}
