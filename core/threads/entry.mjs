// Entry of Runwatch's worker threads (see spawn.ts). tsx's loader, registered on the main thread, does not reach
// worker threads: register it here, then load the TypeScript module the thread runs.
import { workerData } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
await import(workerData.module);
