// Entry of Runwatch's worker threads (see spawn.ts). The compiled server (dist/) loads its JavaScript directly.
// When the thread runs a TypeScript source (tests, development), tsx's loader is registered here first: the one
// registered on the main thread does not reach worker threads.
import { workerData } from "node:worker_threads";

if (workerData.module.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(workerData.module);
