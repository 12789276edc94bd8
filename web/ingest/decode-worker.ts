/** An ingest decode thread (decode-thread.ts): decodes batch bodies and hands the results back, buffers moved. */
import { parentPort, workerData } from "node:worker_threads";
import { Rpc, Transfer } from "../../core/threads/rpc.js";
import { threadData } from "../../core/threads/spawn.js";
import { preloadProtobuf } from "../../otlp/otlp-protobuf.js";
import { decodeHere, type DecodeMethods, type DecodeThreadData } from "./decode-thread.js";

const here = decodeHere(threadData<DecodeThreadData>(workerData));
preloadProtobuf();

const methods: DecodeMethods = {
  decode(...args) {
    const result = here.decode(...args);
    return result.ok ? new Transfer(result, [result.events.data.buffer, result.events.ends.buffer]) : result;
  },
  decodeOtlp(...args) {
    const result = here.decodeOtlp(...args);
    return result.ok ? new Transfer(result, [result.events.data.buffer, result.events.ends.buffer, result.response.buffer]) : result;
  },
};
new Rpc<DecodeMethods, Record<never, never>>(parentPort!, methods);
