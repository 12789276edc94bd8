import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { closeFd, openFd, pwriteAll } from "./fs-io.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

describe("pwriteAll", () => {
  it("writes pieces in order at the position: more pieces than one writev takes (IOV_MAX 1024), empty ones, views of one buffer", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "rw-fsio-"));
    dirs.push(dir);
    const file = path.join(dir, "f");
    const shared = Buffer.from("0123456789".repeat(100));
    const pieces: Uint8Array[] = [];
    for (let i = 0; i < 3000; i++) {
      if (i % 7 === 0) pieces.push(new Uint8Array(0));
      else if (i % 3 === 0) pieces.push(shared.subarray(i % 50, (i % 50) + (i % 13)));
      else pieces.push(Buffer.from(`piece ${i};`));
    }
    const fd = await openFd(file, "w+");
    try {
      await pwriteAll(fd, [Buffer.from("HEAD")], 0);
      await pwriteAll(fd, pieces, 4);
    } finally {
      await closeFd(fd);
    }
    expect((await fs.readFile(file)).equals(Buffer.concat([Buffer.from("HEAD"), ...pieces]))).toBe(true);
  });
});
