/**
 * The pipeline thread (see host.ts): runs the plugin chain and the batch processor on batches the host hands
 * over, with ports that call back to the host (remote-ports.ts).
 */
import { parentPort, workerData } from "node:worker_threads";
import { createLogger } from "../../core/logger.js";
import { createPipelineCore, type PipelineCore } from "../runner.js";
import type { HostMethods, ThreadMethods, WorkerData } from "./protocol.js";
import { remotePorts, type Subscribers } from "./remote-ports.js";
import { Rpc } from "../../core/threads/rpc.js";
import { lowerThisThreadPriority } from "../../core/threads/priority.js";
import { threadData } from "../../core/threads/spawn.js";
import { DEDICATED_THREAD_SLICE_MS, setDefaultSliceMs } from "../../core/time-slice.js";

const { config, options, pluginModules } = threadData<WorkerData>(workerData);
// This thread serves no requests: a step of the part being stored need not give way every few ms (core/time-slice.ts).
setDefaultSliceMs(DEDICATED_THREAD_SLICE_MS);
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

const methods: ThreadMethods = {
  async start() {
    core ??= await createPipelineCore(remotePorts(rpc, config, subscribers), { ...options, plugins: pluginModules }, logger);
    return core.plugins.map((p) => p.name);
  },
  batch: (batch) => started().handleRecords(batch),
  forget: () => started().processor.storageChanged(),
  counters: () => started().processor.counters.snapshot(),
  close: async () => core?.close(),
  "pubsub.message": (id, channel, message) => subscribers.get(id)?.(channel, message),
};
const rpc: Rpc<ThreadMethods, HostMethods> = new Rpc<ThreadMethods, HostMethods>(parentPort!, methods);
