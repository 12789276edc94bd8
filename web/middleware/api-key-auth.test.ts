/** The key cache keeps Postgres off the hot path while honouring expiry and revocation. */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import type { Sql } from "../../core/ports/sql.js";
import { createLogger } from "../../core/logger.js";
import { createUser } from "../../stores/accounts/users.js";
import { createApiKey, revokeApiKey } from "../../stores/accounts/api-keys.js";
import { createApiKeyAuth } from "./api-key-auth.js";

let ports: Ports;
let dir: string;
let userId: number;
const queries: string[] = [];
/** The real PGlite, counting the statements that reach it. */
let sql: Sql;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-keyauth-"));
  ports = await openPorts(loadConfig({ RUNWATCH_DATA_DIR: dir }), ["sql"]);
  sql = { ...ports.sql, query: (q, p) => (queries.push(q), ports.sql.query(q, p)) };
  userId = (await createUser(ports.sql, { email: "k@example.com", name: "K", password: "password-1" })).id;
});
afterAll(async () => {
  await ports?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const logger = createLogger("error");
const lookups = () => queries.filter((q) => q.startsWith("SELECT")).length;
const touches = () => queries.filter((q) => q.startsWith("UPDATE api_keys SET last_used_at")).length;

describe("createApiKeyAuth", () => {
  it("one lookup and one last_used_at write for many requests, shared by concurrent misses", async () => {
    queries.length = 0;
    const { key, info } = await createApiKey(ports.sql, userId, "hot", null);
    const auth = createApiKeyAuth(sql, logger);
    const many = await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(`Bearer ${key}`)));
    for (let i = 0; i < 500; i++) await auth.authenticate(`Bearer ${key}`);
    expect(many.every((p) => p.keyId === info.id && p.userId === userId)).toBe(true);
    expect(lookups()).toBe(1);
    expect(touches()).toBe(1);
  });

  it("re-reads after the TTL, so a revocation elsewhere takes effect", async () => {
    queries.length = 0;
    const { key, info } = await createApiKey(ports.sql, userId, "ttl", null);
    const auth = createApiKeyAuth(sql, logger, { ttlMs: 100 });
    await auth.authenticate(`Bearer ${key}`);
    await revokeApiKey(ports.sql, userId, info.id, userId);
    await auth.authenticate(`Bearer ${key}`); // still cached: another process revoked it
    await new Promise((r) => setTimeout(r, 150));
    await expect(auth.authenticate(`Bearer ${key}`)).rejects.toMatchObject({ _tag: "AuthError", code: "invalid_api_key" });
    expect(lookups()).toBe(2);
  });

  it("forget makes a revocation in this process immediate", async () => {
    const { key, info } = await createApiKey(ports.sql, userId, "evict", null);
    const auth = createApiKeyAuth(sql, logger);
    await auth.authenticate(`Bearer ${key}`);
    await revokeApiKey(ports.sql, userId, info.id, userId);
    auth.forget({ keyId: info.id });
    await expect(auth.authenticate(`Bearer ${key}`)).rejects.toMatchObject({ code: "invalid_api_key" });
  });

  it("forgets a member's keys in a project, a project's, a user's; a lookup under way when it forgets is not kept", async () => {
    const { key, info } = await createApiKey(ports.sql, userId, "member", null);
    const auth = createApiKeyAuth(sql, logger);
    expect((await auth.authenticate(`Bearer ${key}`)).role).toBe("owner");
    queries.length = 0;
    auth.forget({ member: { userId, projectId: userId + 1 } }); // another project: kept
    auth.forget({ userId: userId + 1 }); // another user: kept
    await auth.authenticate(`Bearer ${key}`);
    expect(lookups()).toBe(0);
    for (const change of [{ member: { userId, projectId: userId } }, { projectId: userId }, { userId }]) {
      auth.forget(change);
      await auth.authenticate(`Bearer ${key}`);
    }
    expect(lookups()).toBe(3);

    // A lookup that read the row before a change must not be cached after it: its answer may be the old role.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow: Sql = { ...ports.sql, query: async (q, p) => { const rows = await ports.sql.query(q, p); await gate; return rows as never; } };
    const racing = createApiKeyAuth(slow, logger);
    const before = racing.authenticate(`Bearer ${key}`);
    racing.forget({ keyId: info.id });
    await revokeApiKey(ports.sql, userId, info.id, userId);
    release();
    expect((await before).keyId).toBe(info.id); // the request that asked before the change is served
    await expect(racing.authenticate(`Bearer ${key}`)).rejects.toMatchObject({ code: "invalid_api_key" });
  });

  it("checks expiry on every request, cached or not", async () => {
    const { key } = await createApiKey(ports.sql, userId, "short", new Date(Date.now() + 200));
    const auth = createApiKeyAuth(sql, logger);
    await auth.authenticate(`Bearer ${key}`);
    await new Promise((r) => setTimeout(r, 250));
    await expect(auth.authenticate(`Bearer ${key}`)).rejects.toMatchObject({ code: "expired_api_key" });
  });

  it("remembers unknown keys briefly and never queries for malformed ones", async () => {
    queries.length = 0;
    const auth = createApiKeyAuth(sql, logger);
    for (let i = 0; i < 20; i++) await expect(auth.authenticate(`Bearer ${"a".repeat(64)}`)).rejects.toMatchObject({ code: "invalid_api_key" });
    await expect(auth.authenticate("Bearer nope")).rejects.toMatchObject({ code: "invalid_api_key" });
    await expect(auth.authenticate(undefined)).rejects.toMatchObject({ code: "missing_api_key" });
    expect(lookups()).toBe(1);
  });
});

describe("createApiKeyAuth when Postgres fails", () => {
  it("answers Unavailable (503, retryable), not an internal error", async () => {
    const broken: Sql = { ...ports.sql, query: async () => { throw new Error("connection refused"); } };
    const auth = createApiKeyAuth(broken, logger);
    await expect(auth.authenticate(`Bearer ${"b".repeat(64)}`)).rejects.toMatchObject({ _tag: "Unavailable", service: "metadata store" });
  });
});
