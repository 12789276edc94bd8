/**
 * The per-tenant size cap on dead letters' records (RUNWATCH_DEAD_LETTER_MAX_BYTES), on PGlite, and on PostgreSQL
 * when DATABASE_URL is set: past the cap a dead letter keeps everything but its record, shows as such, and is not
 * replayed; other tenants keep their own allowance.
 */
import { randomInt, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFileLog, type FileLog } from "../core/log/file-log.js";
import { createLogger } from "../core/logger.js";
import { migratePostgres } from "../core/postgres/migrate.js";
import { openPglite } from "../core/postgres/pglite.js";
import type { Sql } from "../core/ports/sql.js";
import { replayDeadLetters } from "../dead-letters/index.js";
import { addDeadLetters, listDeadLetters, type NewDeadLetter } from "./dead-letters.js";

let dir = "";
let sql: Sql;
let log: FileLog;
// On a server, a database of this file's own: other test files replay and purge "all" dead letters of theirs.
const database = `runwatch_test_dl_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
const onServer = async (fn: (admin: Sql) => Promise<unknown>) => {
  const { openPg } = await import("../core/postgres/pg.js");
  const admin = await openPg(process.env.DATABASE_URL!, { max: 1 });
  try {
    await fn(admin);
  } finally {
    await admin.close();
  }
};
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-dl-"));
  if (process.env.DATABASE_URL) {
    await onServer((admin) => admin.query(`CREATE DATABASE ${database}`));
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${database}`;
    const { openPg } = await import("../core/postgres/pg.js");
    sql = await openPg(url.toString());
  } else {
    sql = await openPglite(path.join(dir, "pg"));
  }
  await migratePostgres(sql);
  log = await openFileLog(path.join(dir, "log"), { logger: createLogger("error") });
});
afterAll(async () => {
  await log?.close();
  await sql?.close();
  if (process.env.DATABASE_URL) await onServer((admin) => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  await fs.rm(dir, { recursive: true, force: true });
});

const letter = (userId: number, n: number, bytes: number): NewDeadLetter => {
  const event = { event_id: `0190a2b4-0000-7000-8000-${String(n).padStart(12, "0")}`, project_id: userId, user_id: userId, run_id: "00000000-0000-5000-8000-000000000001", sdk_run_id: "dl-run", event_type: "step" as const };
  const body = JSON.stringify({ ...event, agent_name: "a", payload: { pad: "p".repeat(bytes) }, occurred_at: "2026-11-27T10:00:00.000Z", received_at: "2026-11-27T10:00:00.000Z", config_version: null, span_id: "", parent_span_id: "" });
  return { raw: new TextEncoder().encode(body), event, error: `failed ${n}` };
};

describe(`dead letters' size cap (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  it("keeps records up to the cap per tenant; past it a dead letter keeps its error and ids but not its record, and is not replayed", async () => {
    const [a, b] = [randomInt(1e9, 2e9), randomInt(2e9, 3e9)];
    await addDeadLetters(sql, [letter(a, 1, 600), letter(a, 2, 600), letter(b, 3, 600)], 1_500);
    await addDeadLetters(sql, [letter(a, 4, 600)], 1_500); // a holds ~750 bytes: this one would pass 1,500
    const mine = await listDeadLetters(sql, { projectId: a });
    expect(mine.map((d) => [d.error, d.raw_dropped])).toEqual([["failed 4", true], ["failed 2", true], ["failed 1", false]]);
    const dropped = mine[0]!;
    expect(dropped.raw).toBe("");
    expect(dropped.raw_bytes).toBeGreaterThan(600);
    expect(dropped.event_id).toMatch(/000000000004$/);
    expect((await listDeadLetters(sql, { projectId: b }))[0]).toMatchObject({ raw_dropped: false });
    const replay = await replayDeadLetters(sql, log, { projectId: a });
    expect(replay.replayed).toBe(1);
    expect(replay.skipped.map((s) => s.reason)).toEqual([expect.stringMatching(/not kept/), expect.stringMatching(/not kept/)]);
    expect(log.endOffset()).toBe(1);
  });
});
