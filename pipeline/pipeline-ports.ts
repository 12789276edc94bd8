import type { Ports } from "../core/runtime.js";

/** The ports the pipeline's plugins and store use (the log is driven from outside: startPipeline or a thread host). */
export type PipelinePorts = Pick<Ports, "config" | "sql" | "clickhouse" | "pubsub">;
