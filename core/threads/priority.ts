/**
 * Lowers the CPU priority of the calling thread only. On Linux, setpriority() on a thread id affects that thread
 * (not its process), and the calling thread's id is the last part of /proc/thread-self. Raising a priority needs
 * privileges; lowering it does not. Elsewhere this does nothing and says so.
 */
import { readlinkSync } from "node:fs";
import os from "node:os";

export function lowerThisThreadPriority(nice: number): { ok: true; tid: number } | { ok: false; reason: string } {
  if (nice <= 0) return { ok: false, reason: "not asked to (nice 0)" };
  if (process.platform !== "linux") return { ok: false, reason: `per-thread priority is not supported on ${process.platform}` };
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return { ok: false, reason: "no thread id in /proc/thread-self" };
    os.setPriority(tid, Math.max(os.getPriority(tid), nice));
    return { ok: true, tid };
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
}
