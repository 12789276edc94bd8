/**
 * The pipeline thread (see host.ts): runs the plugin chain and the batch processor on batches the host hands
 * over, with ports that call back to the host (remote-ports.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Config } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { createPipelineCore, type PipelineCore, type PipelineOptions } from "../runner.js";
import type { EncodedBatch } from "../../core/events/wire.js";
import { remotePorts, type Subscribers } from "./remote-ports.js";
import { Rpc } from "../../core/threads/rpc.js";
import { lowerThisThreadPriority } from "../../core/threads/priority.js";
import { threadData } from "../../core/threads/spawn.js";

export interface WorkerData {
  readonly config: Config;
  readonly options: Pick<PipelineOptions, "cacheSize" | "singleRetryDelaysMs">;
}

const { config, options } = threadData<WorkerData>(workerData);
const logger = createLogger(config.logLevel).child({ component: "pipeline", thread: "pipeline" });
const subscribers: Subscribers = new Map();
let core: PipelineCore | undefined;

const started = (): PipelineCore => {
  if (!core) throw new Error("the pipeline thread has not started");
  return core;
};

// Background work: let the threads that answer ingest requests have the cores first (RUNWATCH_BACKGROUND_NICE).
const priority = lowerThisThreadPriority(config.backgroundNice);
if (!priority.ok && config.backgroundNice > 0) logger.debug("pipeline thread priority unchanged", { reason: priority.reason });

const rpc = new Rpc(parentPort!, {
  async start(): Promise<string[]> {
    core ??= await createPipelineCore(remotePorts(rpc, config, subscribers), options, logger);
    return core.plugins.map((p) => p.name);
  },
  batch: (batch: EncodedBatch) => started().handleRecords(batch),
  forget: () => started().processor.forgetRuns(),
  close: () => core?.close(),
  "pubsub.message": (id: number, channel: string, message: string) => subscribers.get(id)?.(channel, message),
});
