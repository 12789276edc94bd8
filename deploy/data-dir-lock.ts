/**
 * One process at a time opens an embedded data dir (PGlite, chDB and the file log each assume a single owner): a
 * server holds `runwatch.lock` (its pid and role) from before it opens its stores until it exits; a CLI command
 * that finds no server answering on the admin socket takes the lock for the time it works on the stores itself.
 * A CLI command never writes beside a server: when a server holds the lock it waits for the server's admin socket
 * (a server opens it before it accepts HTTP) and otherwise refuses, saying why. A lock whose process is gone is
 * taken over.
 */
import { rmSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";

export type LockHolder = { readonly pid: number; readonly role: "server" | "cli" };

export class DataDirBusy extends Error {
  readonly _tag = "DataDirBusy";
  constructor(readonly holder: LockHolder, dataDir: string) {
    super(
      holder.role === "server"
        ? `a Runwatch server (pid ${holder.pid}) holds the data dir ${dataDir} but does not answer on its admin socket yet; try again in a moment`
        : `another runwatch command (pid ${holder.pid}) is working on the data dir ${dataDir}; try again when it has finished`,
    );
  }
}

const lockFile = (dataDir: string) => path.join(dataDir, "runwatch.lock");

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Who holds the data dir now (a lock of a process that is gone does not count). */
export async function lockHolder(dataDir: string): Promise<LockHolder | undefined> {
  try {
    const h = JSON.parse(await fs.readFile(lockFile(dataDir), "utf8")) as LockHolder;
    return Number.isSafeInteger(h.pid) && h.pid !== process.pid && alive(h.pid) ? h : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the data dir's lock, waiting up to `waitMs` for another holder; throws DataDirBusy past that. */
export async function lockDataDir(dataDir: string, role: LockHolder["role"], waitMs: number): Promise<{ release(): void }> {
  await fs.mkdir(dataDir, { recursive: true });
  const file = lockFile(dataDir);
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      await fs.writeFile(file, JSON.stringify({ pid: process.pid, role } satisfies LockHolder), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = await lockHolder(dataDir);
      if (!holder) {
        await fs.rm(file, { force: true }); // left by a process that is gone
        continue;
      }
      if (Date.now() > deadline) throw new DataDirBusy(holder, dataDir);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const release = () => {
    process.off("exit", release);
    try { rmSync(file, { force: true }); } catch { /* the data dir is gone */ }
  };
  process.once("exit", release);
  return { release };
}
