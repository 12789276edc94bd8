/**
 * The protocol between the pipeline thread and its host (host.ts), checked by the compiler on both sides
 * (core/threads/rpc.ts): the host serves HostMethods (the ports the pipeline's code uses, one call each; work
 * that needs a transaction goes as one SqlProcedure call, never as BEGIN … COMMIT round trips), the thread
 * serves ThreadMethods (batches in, lifecycle, pub/sub deliveries).
 */
import type { EncodedBatch } from "../../core/events/wire.js";
import type { Config } from "../../core/config.js";
import type { EncodedRows } from "../../core/ports/clickhouse.js";
import type { CountersSnapshot } from "../../core/pipeline-counters.js";
import type { PipelineOptions } from "../runner.js";

export interface HostMethods {
  "sql.query"(sql: string, params: readonly unknown[] | undefined): Promise<unknown[]>;
  /** Runs a procedure the host knows by name (pipeline/thread/procedures.ts), in one call. */
  "sql.run"(procedure: string, args: unknown): Promise<unknown>;
  "clickhouse.query"(sql: string, params: Record<string, unknown> | undefined): Promise<unknown[]>;
  "clickhouse.exec"(sql: string, params: Record<string, unknown> | undefined): Promise<void>;
  "clickhouse.insertEncoded"(table: string, rows: EncodedRows): Promise<void>;
  /** The publishes of one turn of the thread's event loop. */
  "pubsub.publish"(messages: readonly (readonly [string, string])[]): Promise<void>;
  "pubsub.subscribe"(prefix: string): Promise<number>;
  "pubsub.unsubscribe"(id: number): Promise<void>;
}

export interface ThreadMethods {
  /** Builds and starts the plugin chain; answers the plugins' names. */
  start(): Promise<string[]>;
  /**
   * Processes one batch of log records (decoded there); resolves when it is stored or dead-lettered. Its bytes may be
   * a view the host lent (shared memory): nothing may keep them past the answer.
   */
  batch(batch: EncodedBatch<ArrayBufferLike>): Promise<void>;
  /** Drops cached runs (a consumer-group rebalance). */
  forget(): void;
  /** The pipeline's own counters (pipeline/counters.ts). */
  counters(): CountersSnapshot;
  close(): Promise<void>;
  /** A message on a channel the thread subscribed to. */
  "pubsub.message"(subscription: number, channel: string, message: string): void;
}

/** What the thread starts with (structured-cloned): the config, its options and the custom plugins' modules. */
export interface WorkerData {
  readonly config: Config;
  readonly options: Pick<PipelineOptions, "cacheSize" | "singleRetryDelaysMs">;
  /** Module paths of custom plugins passed in code (besides config.extraPlugins). */
  readonly pluginModules: readonly string[];
}
