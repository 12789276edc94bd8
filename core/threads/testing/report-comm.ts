/** Test thread (spawn.test.ts): reports the OS name of the thread it runs on. */
import { readFileSync } from "node:fs";
import { parentPort } from "node:worker_threads";

parentPort!.postMessage(readFileSync("/proc/thread-self/comm", "utf8").trim());
