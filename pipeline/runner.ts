/**
 * The pipeline: consumes the event log (group "pipeline") in log batches. The record handler (record-handler.ts)
 * decodes a log batch, expands OTLP export records into their events, and has the part processor
 * (part-processor.ts) store them in parts of at most maxBatch events, in log order, with failure isolation
 * (isolation.ts); the log commits the batch once every event of it is stored or dead-lettered. Storage is
 * idempotent on event_id and run counters are reconciled with storage (docs/PIPELINE.md), so with at-least-once
 * delivery every event is stored and counted exactly once, or dead-lettered.
 */
import { createEventStore } from "../stores/runs/event-store.js";
import { createLogger, type Logger } from "../core/logger.js";
import type { Ports } from "../core/runtime.js";
import type { LogConsumer } from "../core/ports/event-log.js";
import type { TriggerDefinition } from "../alerts/index.js";
import { buildChain } from "../plugins/index.js";
import type { Plugin, PluginContext } from "../plugins/plugin.js";
import { encodeBatch } from "../core/events/wire.js";
import { ProgressTracker, startHealthReporter } from "./health.js";
import { createPartProcessor, type PartProcessor } from "./part-processor.js";
import type { PipelinePorts } from "./pipeline-ports.js";
import { createRecordHandler, type RecordHandler } from "./record-handler.js";

export type { PartProcessor, PipelinePorts };
export { createPartProcessor };

export interface PipelineOptions {
  /**
   * Custom plugins added to the chain (before alert-evaluation and broadcast), besides RUNWATCH_PLUGINS: module
   * paths (the one way that works in every mode, on the pipeline thread too) or, in this process only, objects.
   */
  plugins?: readonly (string | Plugin)[];
  /** Consumer group; default "pipeline". */
  group?: string;
  /** Largest batch taken from the log; default 5000. */
  maxBatch?: number;
  /** How long a small batch may wait to fill; default DEFAULT_MAX_WAIT_MS. */
  maxWaitMs?: number;
  /** Runs kept in memory; default 50,000. */
  cacheSize?: number;
  /** Custom alert triggers besides the built-ins and RUNWATCH_ALERT_TRIGGERS (defineTrigger from alerts/). */
  triggers?: readonly TriggerDefinition[];
  logger?: Logger;
  /** Pauses (ms) before each new try of the failing events ahead of dead-lettering them (isolation.ts); default [0]. */
  singleRetryDelaysMs?: readonly number[];
}

export interface Pipeline {
  stop(): Promise<void>;
  /** Events appended to the log but not yet processed and committed. */
  lag(): Promise<number>;
}

/**
 * A trickle of events waits up to 20 ms to fill a batch: each batch costs four ClickHouse calls and two new parts
 * (merged later on the same cores). While the pipeline shared the event loop with ingest, a longer wait was best for
 * ingest p99; on its own thread, 20 ms keeps ingest p99 as low and cuts the dashboard's delay (docs/BENCHMARKS.md,
 * "Pipeline thread, per span"). A backlog is not delayed (batches then fill to maxBatch at once).
 */
export const DEFAULT_MAX_WAIT_MS = 20;

/**
 * The most bytes of log records in one batch: 5,000 events of a few hundred bytes to a few KB each fit; OTLP export
 * records (hundreds of spans each, otlp/export-record.ts) stop a batch at about 25 exports of 512 spans, which the
 * record handler then processes maxBatch events at a time.
 */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;

/** The batch processor with its plugin chain built and initialised; close() closes the plugins. */
export interface PipelineCore {
  readonly processor: PartProcessor;
  /** The processor behind decoding, dead letters and failure isolation: what the log's handler calls. */
  readonly handleRecords: RecordHandler;
  readonly plugins: readonly Plugin[];
  close(): Promise<void>;
}

export async function createPipelineCore(ports: PipelinePorts, options: PipelineOptions, logger: Logger): Promise<PipelineCore> {
  const store = createEventStore(ports.clickhouse);
  const ctx: PluginContext = {
    config: ports.config,
    logger,
    sql: ports.sql,
    clickhouse: ports.clickhouse,
    pubsub: ports.pubsub,
    store,
  };
  const plugins = await buildChain(ctx, { extra: options.plugins, triggers: options.triggers });
  for (const p of plugins) await p.init?.(ctx);
  const processor = createPartProcessor(ctx, store, plugins, options.cacheSize ?? 50_000);
  return {
    processor,
    handleRecords: createRecordHandler(processor, ports, logger, {
      singleRetryDelaysMs: options.singleRetryDelaysMs, maxEvents: options.maxBatch, deadLetterMaxBytes: ports.config.deadLetterMaxBytes,
    }),
    plugins,
    async close() {
      processor.close();
      for (const p of plugins) {
        try {
          await p.close?.();
        } catch (err) {
          logger.warn("plugin close failed", { plugin: p.name, err });
        }
      }
    },
  };
}

/** How the pipeline consumes the log, whether it runs on this thread or another. */
export const consumeOptionsFor = (options: PipelineOptions) => ({
  group: options.group ?? "pipeline",
  maxBatch: options.maxBatch ?? 5000,
  maxBytes: MAX_BATCH_BYTES,
  maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
});

/** Runs the pipeline on this thread (a pipeline-only process, tests); pipeline/thread runs it beside ingest. */
export async function startPipeline(ports: Ports, options: PipelineOptions = {}): Promise<Pipeline> {
  const logger = (options.logger ?? createLogger(ports.config.logLevel)).child({ component: "pipeline" });
  const core = await createPipelineCore(ports, options, logger);
  const tracker = new ProgressTracker();
  const consumer = await ports.log.consume({
    ...consumeOptionsFor(options),
    handler: tracker.track((records) => core.handleRecords(encodeBatch(records))),
    // Another worker may have stored runs of the partitions we get: reload them, and which runs are stored, from storage.
    onRebalance: () => core.processor.storageChanged(),
  });
  const reporter = startHealthReporter(ports.pubsub, consumer, tracker, logger, () => core.processor.counters.snapshot());
  logger.info("pipeline started", { plugins: core.plugins.map((p) => p.name) });

  return runningPipeline(consumer, reporter, () => core.close());
}

/**
 * A started pipeline (on this thread or its own): stop() — once, however often called — stops reporting, then
 * consuming, then `close`s what processes the records.
 */
export function runningPipeline(consumer: Pick<LogConsumer, "stop" | "lag">, reporter: { stop(): void }, close: () => Promise<void>): Pipeline {
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        reporter.stop();
        await consumer.stop();
        await close();
      })()),
    lag: () => consumer.lag(),
  };
}
