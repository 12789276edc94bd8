/**
 * An exclusive lock on a data directory, so two processes never append to (or truncate) the same log.
 *
 * Node has no flock(), so the lock is a LOCK file created with O_EXCL that records the owner's pid and its
 * start time (from /proc). A lock left by a process that died (kill -9, power loss) is stale: its pid is gone,
 * or belongs to a different process (pid reuse, e.g. pid 1 in a restarted container). A stale lock is taken over.
 */
import fs from "node:fs/promises";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fsyncDir } from "./fs-io.js";

interface LockOwner {
  pid: number;
  startTime: string | null;
  host: string;
}

/** Locks held by this process, so opening the same dir twice in one process fails as well. */
const heldHere = new Set<string>();

function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime) counted after the ")" that closes the command name, which may contain spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(owner: LockOwner): boolean {
  if (owner.host !== os.hostname()) return true; // cannot check another host's processes: assume alive
  if (owner.pid === process.pid) return false; // not held in this process (checked above): a previous life
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const start = processStartTime(owner.pid);
  return owner.startTime === null || start === null || start === owner.startTime;
}

export class DirLockedError extends Error {
  constructor(dir: string, owner: LockOwner) {
    super(
      `${dir} is in use by process ${owner.pid} on ${owner.host}; only one process may open an embedded log. ` +
        `If that process is gone, delete ${path.join(dir, "LOCK")}.`,
    );
    this.name = "DirLockedError";
  }
}

export interface DirLock {
  release(): Promise<void>;
}

export async function lockDir(dir: string): Promise<DirLock> {
  const resolved = path.resolve(dir);
  const file = path.join(resolved, "LOCK");
  if (heldHere.has(resolved)) throw new DirLockedError(resolved, { pid: process.pid, startTime: null, host: os.hostname() });
  const me: LockOwner = { pid: process.pid, startTime: processStartTime(process.pid), host: os.hostname() };
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.writeFile(file, JSON.stringify(me), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 2) throw err;
    }
    let owner: LockOwner;
    try {
      owner = JSON.parse(await fs.readFile(file, "utf8")) as LockOwner;
    } catch {
      // Empty or half-written LOCK: its creator died between create and write (the write is tiny).
      owner = { pid: -1, startTime: null, host: os.hostname() };
    }
    if (owner.pid > 0 && isAlive(owner)) throw new DirLockedError(resolved, owner);
    await fs.rm(file, { force: true });
  }
  await fsyncDir(resolved);
  heldHere.add(resolved);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(resolved);
      await fs.rm(file, { force: true });
    },
  };
}
