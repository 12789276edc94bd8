/**
 * The Postgres transports and migrations, on PGlite always and on a PostgreSQL server when DATABASE_URL is
 * set (a fresh database per run, dropped afterwards). The same test bodies run on both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { Sql } from "../ports/sql.js";
import { hashApiKey, newApiKey } from "../ids.js";
import { openPglite } from "./pglite.js";
import { openPg } from "./pg.js";
import { migratePostgres } from "./migrate.js";
import { readMigrationFiles } from "./migration-files.js";

const allVersions = (await readMigrationFiles(new URL("./migrations/", import.meta.url).pathname)).map((m) => m.version);

interface Target {
  name: string;
  unavailable?: string;
  setup(): Promise<void>;
  open(): Promise<Sql>;
  /** A second, independent connection to the same database (another process), when the target has one. */
  openPeer?(): Promise<Sql>;
  teardown(): Promise<void>;
}

const pgliteTarget = (): Target => {
  let dir = "";
  return {
    name: "PGlite",
    setup: async () => { dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-pg-test-")); },
    open: () => openPglite(dir),
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
};

const serverTarget = (): Target => {
  const url = process.env.DATABASE_URL;
  const database = `runwatch_test_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  const urlFor = (db: string) => { const u = new URL(url!); u.pathname = `/${db}`; return u.toString(); };
  const admin = async <T>(fn: (sql: Sql) => Promise<T>) => {
    const sql = await openPg(url!, { max: 1 });
    try { return await fn(sql); } finally { await sql.close(); }
  };
  return {
    name: "PostgreSQL server",
    unavailable: url ? undefined : "DATABASE_URL is not set",
    setup: () => admin((sql) => sql.query(`CREATE DATABASE ${database}`)).then(() => {}),
    open: () => openPg(urlFor(database)),
    openPeer: () => openPg(urlFor(database)),
    teardown: () => admin((sql) => sql.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)).then(() => {}),
  };
};

for (const target of [pgliteTarget(), serverTarget()]) {
  const suite = () => {
    let sql: Sql;
    beforeAll(async () => {
      await target.setup();
      sql = await target.open();
    });
    afterAll(async () => {
      await sql?.close();
      await target.teardown();
    });

    // A user with their personal project (stores/accounts makes both in one transaction; migration 100).
    const newUser = async (email = `${randomUUID()}@example.com`) => {
      const id = (await sql.query<{ id: number }>("INSERT INTO users (name, email, password_hash) VALUES ($1, $2, 'x') RETURNING id", ["Ada", email]))[0]!.id;
      await sql.query("INSERT INTO projects (id, slug, name, personal_of) VALUES ($1, $2, 'P', $1)", [id, `p-${id}`]);
      return id;
    };

    it("applies migrations once, concurrently safe, and re-runs cleanly on reopen", async () => {
      const peer = target.openPeer ? await target.openPeer() : sql;
      const results = await Promise.all([migratePostgres(sql), migratePostgres(peer), migratePostgres(sql)]);
      if (peer !== sql) await peer.close();
      // Every migration applied exactly once, whichever migrator got the lock first.
      expect(results.flat().sort((a, b) => a - b)).toEqual(allVersions);
      expect(allVersions).toContain(1);
      expect(await migratePostgres(sql)).toEqual([]);
      await sql.close();
      sql = await target.open();
      expect(await migratePostgres(sql)).toEqual([]);
      const tables = (await sql.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")).map((r) => r.t);
      expect(tables).toEqual(expect.arrayContaining(["users", "sessions", "project_settings", "api_keys", "agents", "agent_configs", "alert_rules", "schema_migrations"]));
    });

    it("keeps data across close and reopen", async () => {
      const email = `persist-${randomUUID()}@example.com`;
      await newUser(email);
      await sql.close();
      sql = await target.open();
      const rows = await sql.query<{ email: string }>("SELECT email FROM users WHERE lower(email) = lower($1)", [email.toUpperCase()]);
      expect(rows).toEqual([{ email }]);
    });

    it("returns int8 as numbers (strings beyond 2^53), numeric as strings, arrays, jsonb and timestamps alike", async () => {
      const uid = await newUser();
      expect(typeof uid).toBe("number");
      const [agent] = await sql.query<Record<string, unknown>>(
        "INSERT INTO agents (project_id, name, tags, budget_usd) VALUES ($1, $2, $3, $4) RETURNING *",
        [uid, "planner", ["prod", "v2"], 12.5],
      );
      expect(agent).toMatchObject({ project_id: uid, name: "planner", total_runs: 0, budget_usd: "12.5000", tags: ["prod", "v2"], description: "" });
      expect(agent!.created_at).toBeInstanceOf(Date);
      const [row] = await sql.query<Record<string, unknown>>(
        "SELECT count(*) AS n, 9007199254740993::int8 AS big, ARRAY[1, 2]::int8[] AS arr, $1::jsonb AS doc",
        [JSON.stringify({ a: [1, { b: "ü" }] })],
      );
      expect(row).toEqual({ n: 1, big: "9007199254740993", arr: [1, 2], doc: { a: [1, { b: "ü" }] } });
    });

    it("rolls a transaction back on throw, commits on return, and nests as savepoints", async () => {
      const email = `tx-${randomUUID()}@example.com`;
      await expect(sql.transaction(async (tx) => {
        await tx.query("INSERT INTO users (name, email, password_hash) VALUES ('T', $1, 'x')", [email]);
        throw new Error("boom");
      })).rejects.toThrow("boom");
      expect(await sql.query("SELECT 1 FROM users WHERE email = $1", [email])).toEqual([]);

      const id = await sql.transaction(async (tx) => {
        const [u] = await tx.query<{ id: number }>("INSERT INTO users (name, email, password_hash) VALUES ('T', $1, 'x') RETURNING id", [email]);
        await tx.transaction(async (inner) => {
          await inner.query("INSERT INTO projects (id, slug, name, personal_of) VALUES ($1, $2, 'P', $1)", [u!.id, `p-${u!.id}`]);
          await inner.query("INSERT INTO api_keys (user_id, project_id, name, key_hash, last4) VALUES ($1, $1, 'k', $2, 'abcd')", [u!.id, hashApiKey(newApiKey())]);
          throw new Error("inner");
        }).catch(() => {});
        return u!.id;
      });
      expect(await sql.query("SELECT email FROM users WHERE id = $1", [id])).toEqual([{ email }]);
      expect(await sql.query("SELECT id FROM api_keys WHERE user_id = $1", [id])).toEqual([]);

      // A failed statement inside the transaction aborts it; the error propagates and nothing is kept.
      await expect(sql.transaction(async (tx) => {
        await tx.query("UPDATE users SET name = 'changed' WHERE id = $1", [id]);
        await tx.query("INSERT INTO users (name, email, password_hash) VALUES ('T', $1, 'x')", [email.toUpperCase()]);
      })).rejects.toThrow();
      expect(await sql.query("SELECT name FROM users WHERE id = $1", [id])).toEqual([{ name: "T" }]);
    });

    it("enforces the schema: case-insensitive emails, key hashes, one active config, cascades", async () => {
      const email = `Case-${randomUUID()}@Example.com`;
      const uid = await newUser(email);
      await expect(newUser(email.toLowerCase())).rejects.toThrow();
      await expect(sql.query("INSERT INTO api_keys (user_id, project_id, name, key_hash, last4) VALUES ($1, $1, 'k', 'plaintext-key', 'abcd')", [uid])).rejects.toThrow();
      const key = newApiKey();
      await sql.query("INSERT INTO api_keys (user_id, project_id, name, key_hash, last4, expires_at) VALUES ($1, $1, 'ci', $2, $3, now() + interval '1 day')", [uid, hashApiKey(key), key.slice(-4)]);
      await expect(sql.query("INSERT INTO api_keys (user_id, project_id, name, key_hash, last4) VALUES ($1, $1, 'again', $2, 'x')", [uid, hashApiKey(key)])).rejects.toThrow();

      const [agent] = await sql.query<{ id: number }>("INSERT INTO agents (project_id, name) VALUES ($1, 'a') RETURNING id", [uid]);
      await expect(sql.query("INSERT INTO agents (project_id, name) VALUES ($1, 'a')", [uid])).rejects.toThrow();
      await sql.query("INSERT INTO agent_configs (agent_id, version, config, is_active, created_by) VALUES ($1, 1, $2, true, $3)", [agent!.id, JSON.stringify({ model: "m" }), uid]);
      await expect(sql.query("INSERT INTO agent_configs (agent_id, version, config, is_active) VALUES ($1, 2, '{}', true)", [agent!.id])).rejects.toThrow();
      await sql.transaction(async (tx) => {
        await tx.query("UPDATE agent_configs SET is_active = false WHERE agent_id = $1 AND is_active", [agent!.id]);
        await tx.query("INSERT INTO agent_configs (agent_id, version, config, is_active) VALUES ($1, 2, '{}', true)", [agent!.id]);
      });
      expect(await sql.query("SELECT version FROM agent_configs WHERE agent_id = $1 AND is_active", [agent!.id])).toEqual([{ version: 2 }]);

      await sql.query("INSERT INTO project_settings (project_id, provider, model, temperature) VALUES ($1, 'openai', 'gpt-4o', 0.2)", [uid]);
      await sql.query("INSERT INTO alert_rules (project_id, name, trigger_type, channel, target, config) VALUES ($1, 'errors', 'run_error', 'email', 'ops@example.com', $2)", [uid, JSON.stringify({ threshold: 1 })]);
      await sql.query("INSERT INTO sessions (id, user_id, data, expires_at) VALUES ($1, $2, $3, now() + interval '1 hour')", [randomUUID(), uid, JSON.stringify({ csrf: "t" })]);

      // A counted run (plugins/cost-aggregation.ts): its row goes with its agent, and so with its project (migration 080).
      await sql.query("INSERT INTO agent_run_starts (project_id, external_id, agent_id, started_at) VALUES ($1, 'run-1', $2, now())", [uid, agent!.id]);
      const [other] = await sql.query<{ id: number }>("INSERT INTO agents (project_id, name) VALUES ($1, 'b') RETURNING id", [uid]);
      await sql.query("INSERT INTO agent_run_starts (project_id, external_id, agent_id, started_at) VALUES ($1, 'run-2', $2, now())", [uid, other!.id]);
      await sql.query("DELETE FROM agents WHERE id = $1", [other!.id]);
      expect(await sql.query("SELECT external_id FROM agent_run_starts WHERE project_id = $1", [uid])).toEqual([{ external_id: "run-1" }]);

      // Deleting the user deletes their personal project and with it what it holds (migrations 100, 104).
      await sql.query("DELETE FROM users WHERE id = $1", [uid]);
      for (const t of ["api_keys", "sessions"]) expect(await sql.query(`SELECT 1 FROM ${t} WHERE user_id = $1`, [uid])).toEqual([]);
      for (const t of ["projects"]) expect(await sql.query(`SELECT 1 FROM ${t} WHERE id = $1`, [uid])).toEqual([]);
      for (const t of ["agents", "project_settings", "alert_rules", "agent_run_starts"]) {
        expect(await sql.query(`SELECT 1 FROM ${t} WHERE project_id = $1`, [uid])).toEqual([]);
      }
      expect(await sql.query("SELECT 1 FROM agent_configs WHERE agent_id = $1", [agent!.id])).toEqual([]);
    });
  };

  if (target.unavailable && process.env.REQUIRE_SERVICES === "1") {
    describe(`Postgres on ${target.name}`, () => {
      it("needs its server", () => { throw new Error(`REQUIRE_SERVICES=1 but ${target.unavailable}`); });
    });
  } else if (target.unavailable) {
    describe.skip(`Postgres on ${target.name} (skipped: ${target.unavailable})`, suite);
  } else {
    describe(`Postgres on ${target.name}`, suite);
  }
}
