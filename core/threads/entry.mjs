// Entry of Runwatch's worker threads (see spawn.ts). The compiled server (dist/) loads its JavaScript directly.
// When the thread runs a TypeScript source (tests, development), tsx's loader is registered here first: the one
// registered on the main thread does not reach worker threads.
import { writeFileSync } from "node:fs";
import { workerData } from "node:worker_threads";

// Linux: name this OS thread (spawn.ts osThreadName) so top -H and ps -L tell the pipeline from the ingest threads.
if (process.platform === "linux" && workerData.osName) {
  try {
    writeFileSync("/proc/thread-self/comm", workerData.osName);
  } catch {
    // Only a label: a system without /proc/thread-self runs the same.
  }
}

if (workerData.module.endsWith(".ts")) {
  const { register } = await import("tsx/esm/api");
  register();
}
await import(workerData.module);
