/** An ingest decode thread (decode-thread.ts): decodes batch bodies and hands the results back, buffers moved. */
import { parentPort, workerData } from "node:worker_threads";
import { Rpc, Transfer } from "../../core/threads/rpc.js";
import { threadData } from "../../core/threads/spawn.js";
import { decodeIngestBatch } from "./batch-decode.js";
import type { DecodeMethods, DecodeThreadData } from "./decode-thread.js";

const { maxBatchEvents } = threadData<DecodeThreadData>(workerData);

const methods: DecodeMethods = {
  decode(body, userId, receivedAtMs) {
    const result = decodeIngestBatch(body, userId, receivedAtMs, maxBatchEvents);
    return result.ok ? new Transfer(result, [result.events.data.buffer, result.events.ends.buffer]) : result;
  },
};
new Rpc<DecodeMethods, Record<never, never>>(parentPort!, methods);
