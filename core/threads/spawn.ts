/**
 * Starts a worker thread that runs a TypeScript module of this repository (through entry.mjs, which loads tsx
 * in the thread). `data` reaches the module as workerData.data.
 */
import { Worker } from "node:worker_threads";

const ENTRY = new URL("./entry.mjs", import.meta.url);

export function spawnThread(module: URL, data: unknown, name: string): Worker {
  return new Worker(ENTRY, { workerData: { module: module.href, data }, name });
}

/** The data a thread started by spawnThread was given. */
export const threadData = <T>(workerData: unknown): T => (workerData as { data: T }).data;
