/**
 * Starts a worker thread that runs a module of this repository (through entry.mjs, which loads tsx in the thread
 * when the module is TypeScript). `data` reaches the module as workerData.data.
 */
import { Worker } from "node:worker_threads";

const ENTRY = new URL("./entry.mjs", import.meta.url);

/**
 * The name the thread shows to the OS (top -H, ps -L, /proc/<pid>/task/<tid>/comm; at most 15 bytes there):
 * "runwatch-pipeline" → "rw-pipeline", so an operator can tell which of the process's threads burns the CPU.
 */
export const osThreadName = (name: string): string => name.replace(/^runwatch-/, "rw-").slice(0, 15);

export function spawnThread(module: URL, data: unknown, name: string): Worker {
  return new Worker(ENTRY, { workerData: { module: module.href, data, osName: osThreadName(name) }, name });
}

/**
 * The URL of a thread's module next to `base` (the caller's import.meta.url), in the caller's own form: `name.ts`
 * when it runs from the sources, `name.js` when it runs compiled from dist/.
 */
export function threadModule(name: string, base: string): URL {
  return new URL(`./${name}${base.endsWith(".ts") ? ".ts" : ".js"}`, base);
}

/** The data a thread started by spawnThread was given. */
export const threadData = <T>(workerData: unknown): T => (workerData as { data: T }).data;
