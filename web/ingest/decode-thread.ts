/**
 * Where POST /api/ingest/batch decodes its bodies (batch-decode.ts). A 500-event body costs milliseconds of CPU to
 * parse, validate, enrich and serialise (docs/BENCHMARKS.md, "Ingest's work per body"); on the thread that serves every
 * request, each such body held all the others up (and in the embedded default that thread also serves the pipeline's
 * storage calls and the gateway). threadDecoder runs it on ingest threads of their own; this thread keeps only HTTP,
 * auth, rate limit, the durable append and the response. inThreadDecoder is the fallback (RUNWATCH_INGEST_THREADS=0).
 *
 * A thread that dies fails the requests it was decoding with 503 (nothing was acknowledged) and is replaced on
 * the next request.
 */
import type { Worker } from "node:worker_threads";
import { Unavailable } from "../../core/errors.js";
import type { OtlpMapping } from "../../core/config.js";
import type { Logger } from "../../core/logger.js";
import { ownBytes, Rpc, type Transfer } from "../../core/threads/rpc.js";
import { spawnThread, threadModule } from "../../core/threads/spawn.js";
import { decodeOtlpExport, type DecodedExport, type OtlpFormat } from "../../otlp/export-decode.js";
import { decodeSignalExport, type OtlpSignal } from "../../otlp/signal-decode.js";
import { decodeIngestBatch, type DecodedBatch } from "./batch-decode.js";
import type { Sender } from "../../core/events/sender.js";

/** Decodes batch bodies (POST /api/ingest/batch) and OTLP exports of every signal (web/otlp; traces by default). */
export interface BatchDecoder {
  decode(body: Uint8Array, sender: Sender, receivedAtMs: number): Promise<DecodedBatch>;
  decodeOtlp(body: Uint8Array, format: OtlpFormat, gzipped: boolean, sender: Sender, receivedAtMs: number, signal?: OtlpSignal): Promise<DecodedExport>;
  close(): Promise<void>;
}

export interface DecodeLimits {
  readonly maxBatchEvents: number;
  /** RUNWATCH_OTLP_MAX_BODY_BYTES: an OTLP body's limit, also once decompressed. */
  readonly otlpMaxBodyBytes: number;
  /** RUNWATCH_OTLP_MAX_SPANS: the most spans of one export. */
  readonly otlpMaxSpans: number;
  /** RUNWATCH_OTLP_MAPPING: where exports are mapped (core/config.ts OtlpMapping). */
  readonly otlpMapping: OtlpMapping;
}
export type DecodeThreadData = DecodeLimits;

/** What an ingest decode thread serves (decode-worker.ts); this side serves nothing. */
export interface DecodeMethods {
  decode(body: Uint8Array, sender: Sender, receivedAtMs: number): DecodedBatch | Transfer<DecodedBatch>;
  decodeOtlp(body: Uint8Array, format: OtlpFormat, gzipped: boolean, sender: Sender, receivedAtMs: number, signal?: OtlpSignal): DecodedExport | Transfer<DecodedExport>;
}

type DecodeRpc = Rpc<Record<never, never>, DecodeMethods>;

/** The decoder's work on the calling thread (also what a decode thread runs). */
export const decodeHere = (limits: DecodeLimits) => ({
  decode: (body: Uint8Array, sender: Sender, receivedAtMs: number): DecodedBatch =>
    decodeIngestBatch(body, sender, receivedAtMs, limits.maxBatchEvents),
  // RUNWATCH_OTLP_MAPPING=pipeline: the export is logged whole for the pipeline to map, else mapped here.
  decodeOtlp: (body: Uint8Array, format: OtlpFormat, gzipped: boolean, sender: Sender, receivedAtMs: number, signal: OtlpSignal = "traces"): DecodedExport => {
    const bounds = { maxBytes: limits.otlpMaxBodyBytes, maxSpans: limits.otlpMaxSpans };
    return signal === "traces"
      ? decodeOtlpExport(body, format, gzipped, sender, receivedAtMs, bounds, limits.otlpMapping === "pipeline")
      : decodeSignalExport(signal, body, format, gzipped, sender, receivedAtMs, bounds);
  },
});

export function inThreadDecoder(limits: DecodeLimits): BatchDecoder {
  const here = decodeHere(limits);
  return {
    decode: async (...args) => here.decode(...args),
    decodeOtlp: async (...args) => here.decodeOtlp(...args),
    close: async () => {},
  };
}

interface DecodeThread {
  readonly worker: Worker;
  readonly rpc: DecodeRpc;
  inflight: number;
  alive: boolean;
  idleTimer?: NodeJS.Timeout;
}

/**
 * A decode thread with nothing to do for this long exits; the next body starts one again, which takes a moment
 * (docs/BENCHMARKS.md, "Parts loaded on demand").
 */
export const DECODE_THREAD_IDLE_MS = 30_000;

/**
 * Decode threads start with the first body that needs one and exit after DECODE_THREAD_IDLE_MS without work: an
 * idle server holds none (each is a V8 isolate with the schema and OTLP modules: docs/BENCHMARKS.md, "Parts loaded on
 * demand"), and a second thread starts only while the first is busy.
 */
export function threadDecoder(opts: DecodeLimits & { threads: number; logger: Logger; idleMs?: number }): BatchDecoder & { running(): number } {
  const data: DecodeThreadData = { maxBatchEvents: opts.maxBatchEvents, otlpMaxBodyBytes: opts.otlpMaxBodyBytes, otlpMaxSpans: opts.otlpMaxSpans, otlpMapping: opts.otlpMapping };
  const slots: (DecodeThread | undefined)[] = new Array(Math.max(1, opts.threads)).fill(undefined);
  const idleMs = opts.idleMs ?? DECODE_THREAD_IDLE_MS;
  let closed = false;

  const spawn = (slot: number): DecodeThread => {
    const worker = spawnThread(threadModule("decode-worker", import.meta.url), data, "runwatch-ingest");
    const thread: DecodeThread = { worker, rpc: new Rpc<Record<never, never>, DecodeMethods>(worker, {}), inflight: 0, alive: true };
    worker.on("error", (err) => opts.logger.error("an ingest decode thread failed", { err }));
    worker.once("exit", (code) => {
      const retired = !thread.alive; // ended by its idle timer
      thread.alive = false;
      clearTimeout(thread.idleTimer);
      thread.rpc.failPending(new Unavailable({ service: "ingest", message: `the ingest decode thread exited (code ${code})` }));
      thread.rpc.detach();
      if (slots[slot] === thread) slots[slot] = undefined;
      if (!closed && !retired) opts.logger.error("an ingest decode thread exited; a new one starts with the next batch", { code });
    });
    worker.unref(); // an idle decoder never keeps the process alive
    return (slots[slot] = thread);
  };

  const retireWhenIdle = (thread: DecodeThread) => {
    clearTimeout(thread.idleTimer);
    thread.idleTimer = setTimeout(() => {
      if (thread.inflight > 0 || !thread.alive) return;
      thread.alive = false; // no new work goes to it; its exit handler frees the slot
      void thread.worker.terminate();
    }, idleMs);
    thread.idleTimer.unref();
  };

  /** An idle running thread, else a new one in a free slot, else the least busy. */
  const pick = (): DecodeThread => {
    let best: DecodeThread | undefined;
    let free = -1;
    for (let i = 0; i < slots.length; i++) {
      const t = slots[i];
      if (!t?.alive) {
        if (free < 0) free = i;
        continue;
      }
      if (!best || t.inflight < best.inflight) best = t;
    }
    if (best && best.inflight === 0) return best;
    return free >= 0 ? spawn(free) : best!;
  };

  /** Runs a call on the least busy thread. */
  const onThread = async <T>(call: (rpc: DecodeRpc) => Promise<T>): Promise<T> => {
    if (closed) throw new Unavailable({ service: "ingest", message: "the server is shutting down" });
    const thread = pick();
    thread.inflight++;
    clearTimeout(thread.idleTimer);
    try {
      return await call(thread.rpc);
    } finally {
      if (--thread.inflight === 0) retireWhenIdle(thread);
    }
  };

  return {
    async decode(body, sender, receivedAtMs) {
      const own = ownBytes(body);
      return onThread((rpc) => rpc.call("decode", [own, sender, receivedAtMs], [own.buffer]));
    },
    async decodeOtlp(body, format, gzipped, sender, receivedAtMs, signal = "traces") {
      const own = ownBytes(body);
      return onThread((rpc) => rpc.call("decodeOtlp", [own, format, gzipped, sender, receivedAtMs, signal], [own.buffer]));
    },
    running: () => slots.filter((t) => t?.alive).length,
    async close() {
      closed = true;
      for (const t of slots) clearTimeout(t?.idleTimer);
      await Promise.all(slots.map((t) => t?.worker.terminate()));
    },
  };
}
