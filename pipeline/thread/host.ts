/**
 * The pipeline on a worker thread of its own, for a process that also serves ingest (the embedded default runs
 * everything in one process). On one thread, every batch's decoding, plugin work and row serialisation
 * competed with HTTP requests for the event loop, and ingest's tail latency paid for it.
 *
 * Split: this (host) thread consumes the log: it reads records without decoding them and hands each batch to the
 * pipeline thread as one view of its shared arena (core/threads/shared-arena.ts says why; a transferred buffer when
 * the arena is full); it commits the batch only when the pipeline thread reports it stored, so delivery stays
 * at-least-once. The pipeline thread decodes, runs the
 * plugins, serialises the rows, and calls back here for SQL, ClickHouse and pub/sub (port-server.ts; the calls
 * both ways are typed in protocol.ts): PGlite is one connection, chDB's engine belongs to the process, and the
 * gateway listens on this thread. Custom plugins reach the thread as module paths (RUNWATCH_PLUGINS, or
 * `plugins` here): objects cannot cross threads, module paths work the same in every mode.
 *
 * Supervision: if the pipeline thread dies, the batch in flight fails (the log retries it with backoff), its
 * open transactions are rolled back, and the next batch starts a new thread once the ClickHouse writes the old one
 * had started have settled. Run state it cached is rebuilt from storage.
 */
import type { Worker } from "node:worker_threads";
import { createLogger } from "../../core/logger.js";
import type { Ports } from "../../core/runtime.js";
import { consumeOptionsFor, runningPipeline, type Pipeline, type PipelineOptions } from "../runner.js";
import { encodeBatch } from "../../core/events/wire.js";
import { servePorts } from "./port-server.js";
import { hostProcedures } from "./procedures.js";
import type { HostMethods, ThreadMethods, WorkerData } from "./protocol.js";
import { Rpc } from "../../core/threads/rpc.js";
import { spawnThread, threadModule } from "../../core/threads/spawn.js";
import { SharedArena } from "../../core/threads/shared-arena.js";
import { ProgressTracker, startHealthReporter } from "../health.js";


/** One batch in flight at a time: the log's batches stop at 8 MiB (ConsumeOptions.maxBytes) past their first record. */
const BATCH_ARENA_BYTES = 16 << 20;

interface Thread {
  readonly worker: Worker;
  readonly rpc: Rpc<HostMethods, ThreadMethods>;
}

export interface ThreadPipelineOptions extends Pick<PipelineOptions, "group" | "maxBatch" | "maxWaitMs" | "cacheSize" | "logger" | "singleRetryDelaysMs"> {
  /** Custom plugins, as module paths (loaded on the pipeline thread like RUNWATCH_PLUGINS). */
  readonly plugins?: readonly string[];
}

export async function startPipelineThread(ports: Ports, options: ThreadPipelineOptions = {}): Promise<Pipeline> {
  const logger = (options.logger ?? createLogger(ports.config.logLevel)).child({ component: "pipeline" });
  const pluginModules = [...(options.plugins ?? [])];
  for (const p of pluginModules) {
    if (typeof p !== "string") throw new Error("startPipelineThread: plugins must be module paths (a plugin object cannot cross to the pipeline thread)");
  }
  const data: WorkerData = { config: ports.config, options: { cacheSize: options.cacheSize, singleRetryDelaysMs: options.singleRetryDelaysMs }, pluginModules };
  const procedures = await hostProcedures([...ports.config.extraPlugins, ...pluginModules]);
  let current: Promise<Thread> | undefined;
  let stopping = false;
  // The ClickHouse writes of a thread that died may still be running here: its successor starts after them.
  let previousWrites: Promise<void> = Promise.resolve();

  const spawn = (): Promise<Thread> => {
    const worker = spawnThread(threadModule("worker", import.meta.url), data, "runwatch-pipeline");
    let rpc!: Rpc<HostMethods, ThreadMethods>;
    const server = servePorts(ports, procedures, (id, channel, message) => rpc.notify("pubsub.message", [id, channel, message]));
    rpc = new Rpc<HostMethods, ThreadMethods>(worker, server.handlers);
    const thread: Thread = { worker, rpc };
    worker.on("error", (err) => logger.error("the pipeline thread failed", { err }));
    worker.once("exit", (code) => {
      rpc.failPending(new Error(`the pipeline thread exited (code ${code})`));
      rpc.detach();
      previousWrites = server.abort().catch(() => {});
      if (current === started) current = undefined;
      if (!stopping) logger.error("the pipeline thread exited; a new one starts with the next batch", { code });
    });
    const started = previousWrites.then(() => rpc.call("start", [])).then(
      (plugins) => {
        logger.info("pipeline started on its own thread", { plugins });
        return thread;
      },
      async (err: unknown) => {
        await worker.terminate();
        throw err;
      },
    );
    return started;
  };
  const thread = (): Promise<Thread> => (current ??= spawn());

  const arena = new SharedArena(BATCH_ARENA_BYTES);
  await thread(); // fail at start (e.g. a plugin that does not load), as the in-thread pipeline does
  const tracker = new ProgressTracker();
  const consumer = await ports.log.consume({
    ...consumeOptionsFor(options),
    handler: tracker.track(async (records) => {
      const batch = encodeBatch(records, (length) => arena.lend(length));
      const { rpc } = await thread();
      await arena.send(batch.data, (lent) =>
        rpc.call("batch", [batch], lent ? [batch.ends.buffer] : [batch.data.buffer as ArrayBuffer, batch.ends.buffer]));
    }),
    onRebalance: () => {
      void current?.then((t) => t.rpc.call("forget", [])).catch(() => {}); // a new thread starts with no cache anyway
    },
  });

  // The thread's counters; a thread that died took its counts with it (a new one counts from zero).
  const counters = async () => (current ? (await current).rpc.call("counters", []) : undefined);
  const reporter = startHealthReporter(ports.pubsub, consumer, tracker, logger, counters);

  return runningPipeline(consumer, reporter, async () => {
    stopping = true;
    const t = await current?.catch(() => undefined);
    if (t) {
      await t.rpc.call("close", []).catch((err: unknown) => logger.warn("pipeline plugins did not close cleanly", { err }));
      await t.worker.terminate();
    }
  });
}
