import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it, vi } from "vitest";
import { resolveSessionSecret, SESSION_SECRET_FILE } from "./secrets.js";

const tmp = () => fs.mkdtemp(path.join(os.tmpdir(), "runwatch-secret-"));

describe("resolveSessionSecret", () => {
  it("prefers SESSION_SECRET", async () => {
    const s = "s".repeat(40);
    expect(await resolveSessionSecret({ env: "production", dataDir: "/nonexistent", sessionSecret: s })).toBe(s);
  });

  it("refuses production without SESSION_SECRET, and a short one anywhere", async () => {
    await expect(resolveSessionSecret({ env: "production", dataDir: await tmp(), sessionSecret: undefined })).rejects.toThrow(/SESSION_SECRET is required/);
    await expect(resolveSessionSecret({ env: "development", dataDir: await tmp(), sessionSecret: "short" })).rejects.toThrow(/at least 32/);
  });

  it("generates one secret per data dir, keeps it in a 0600 file, and reads it back after a restart", async () => {
    const dir = await tmp();
    const [a, b] = await Promise.all([
      resolveSessionSecret({ env: "development", dataDir: dir, sessionSecret: undefined }),
      resolveSessionSecret({ env: "development", dataDir: dir, sessionSecret: undefined }),
    ]);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).toBe(a);
    const file = path.join(dir, SESSION_SECRET_FILE);
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect((await fs.readFile(file, "utf8")).trim()).toBe(a);
    // Another process (fresh module state) reads the same file.
    vi.resetModules();
    const { resolveSessionSecret: fresh } = await import("./secrets.js");
    expect(await fresh({ env: "test", dataDir: dir, sessionSecret: undefined })).toBe(a);
    const other = await resolveSessionSecret({ env: "development", dataDir: await tmp(), sessionSecret: undefined });
    expect(other).not.toBe(a);
  });
});
