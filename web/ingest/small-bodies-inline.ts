/**
 * Small bodies decode on the request's own thread; the decode threads (decode-thread.ts) take the rest.
 *
 * A 100-event body costs about what the trip to a decode thread and back costs, and too little to hold other requests
 * up (docs/BENCHMARKS.md, "Ingest's work per body"). A server taking a steady stream of such batches (what SDK clients
 * send every 0.2 s) then runs no decode thread at all, and each one it does not run is a V8 isolate of its own
 * (docs/BENCHMARKS.md, "Memory and start"). Bodies over `maxBytes` (a 500-event batch costs several times as much),
 * gzipped OTLP bodies (their compressed size does not bound the work), and every body once this thread has spent
 * `budgetMsPerSecond` decoding in the current second go to the threads, so a flood of small batches still spreads
 * over the cores.
 */
import { decodeHere, type BatchDecoder, type DecodeLimits } from "./decode-thread.js";

export interface InlinePolicy {
  /** Bodies up to this many bytes may decode on the request's thread (RUNWATCH_INGEST_INLINE_BYTES; 0: none). */
  readonly maxBytes: number;
  /** The most milliseconds of each second the request's thread spends decoding. */
  readonly budgetMsPerSecond: number;
}

export const INLINE_BUDGET_MS_PER_SECOND = 300;

export function smallBodiesInline(
  threads: BatchDecoder,
  limits: DecodeLimits,
  policy: InlinePolicy,
  now: () => number = () => performance.now(),
): BatchDecoder & { decodedInline(): number } {
  const here = decodeHere(limits);
  let windowStart = -Infinity;
  let spentMs = 0;
  let count = 0;
  const takes = (bytes: number): boolean => {
    if (bytes > policy.maxBytes) return false;
    const t = now();
    if (t - windowStart >= 1000) {
      windowStart = t;
      spentMs = 0;
    }
    return spentMs < policy.budgetMsPerSecond;
  };
  const timed = <T>(work: () => T): T => {
    const start = now();
    try {
      return work();
    } finally {
      spentMs += now() - start;
      count++;
    }
  };
  return {
    decode: async (body, sender, receivedAtMs) =>
      takes(body.byteLength) ? timed(() => here.decode(body, sender, receivedAtMs)) : threads.decode(body, sender, receivedAtMs),
    decodeOtlp: async (body, format, gzipped, sender, receivedAtMs, signal) =>
      !gzipped && takes(body.byteLength)
        ? timed(() => here.decodeOtlp(body, format, gzipped, sender, receivedAtMs, signal))
        : threads.decodeOtlp(body, format, gzipped, sender, receivedAtMs, signal),
    close: () => threads.close(),
    decodedInline: () => count,
  };
}
