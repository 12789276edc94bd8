/**
 * The loop of a queue worker (notification delivery, evaluation jobs): drain what is due, then sleep until the next
 * poll or until a PubSub message on `channel` says new work was queued (best effort: polling catches what a lost
 * message would miss). `drain` runs one pass at a time; calling it while a pass runs joins that pass.
 */
import type { JobCounters } from "./jobs.js";
import type { PubSub } from "./ports/pubsub.js";

export interface PollingWorker {
  /** Runs a pass now (or joins the one under way); resolves with what it handled. */
  drain(): Promise<number>;
  /** True once close() was called: a pass in progress should stop taking new work. */
  stopped(): boolean;
  close(): Promise<void>;
}

export async function startPollingWorker(opts: {
  pubsub: PubSub;
  channel: string;
  pollMs: number;
  /** One pass over the due work; `stopped()` says when to stop early. */
  pass: (stopped: () => boolean) => Promise<number>;
  onError: (err: unknown) => void;
  /** Where the passes are counted and timed (the worker's job, core/jobs.ts). */
  counters?: JobCounters;
}): Promise<PollingWorker> {
  let stopped = false;
  let wake: (() => void) | undefined;
  let woken = false;
  const unsubscribe = await opts.pubsub.subscribePrefix(opts.channel, () => {
    woken = true;
    wake?.();
  });
  const isStopped = () => stopped;
  let draining: Promise<number> | undefined;
  const pass = opts.counters ? () => opts.counters!.pass(() => opts.pass(isStopped)) : () => opts.pass(isStopped);
  const drain = () => (draining ??= pass().finally(() => { draining = undefined; }));

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      try {
        await drain();
      } catch (err) {
        opts.onError(err);
      }
      if (stopped || woken) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, opts.pollMs);
        wake = () => { clearTimeout(t); resolve(); };
      });
      wake = undefined;
    }
  })();

  return {
    drain,
    stopped: isStopped,
    async close() {
      stopped = true;
      wake?.();
      await loop;
      await unsubscribe();
    },
  };
}
