/**
 * Claiming evaluation jobs fairly across projects, on PGlite, and on PostgreSQL when DATABASE_URL is set: a project
 * with hundreds of jobs due earlier does not hold back another project's few; each claim takes every project's
 * next job before any project's following one; a worker dedicated to some projects claims only theirs.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migratePostgres } from "../../core/postgres/migrate.js";
import { openPglite } from "../../core/postgres/pglite.js";
import type { Sql } from "../../core/ports/sql.js";
import { createUser } from "../accounts/users.js";
import { claimJobs, enqueueJobs, finishJob, type NewJob } from "./jobs.js";

let dir = "";
let sql: Sql;
// On a server, a database of this file's own: other test files' workers claim every project's jobs.
const database = `runwatch_test_jobs_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
const onServer = async (fn: (admin: Sql) => Promise<unknown>) => {
  const { openPg } = await import("../../core/postgres/pg.js");
  const admin = await openPg(process.env.DATABASE_URL!, { max: 1 });
  try {
    await fn(admin);
  } finally {
    await admin.close();
  }
};
beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-jobs-"));
  if (process.env.DATABASE_URL) {
    await onServer((admin) => admin.query(`CREATE DATABASE ${database}`));
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${database}`;
    const { openPg } = await import("../../core/postgres/pg.js");
    sql = await openPg(url.toString());
  } else {
    sql = await openPglite(path.join(dir, "pg"));
  }
  await migratePostgres(sql);
});
afterAll(async () => {
  await sql?.close();
  if (process.env.DATABASE_URL) await onServer((admin) => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
  await fs.rm(dir, { recursive: true, force: true });
});

/** A project (a user's personal one) with an evaluator and a rule: what a job names. */
async function tenant() {
  const user = await createUser(sql, { email: `jobs-${randomUUID()}@example.com`, name: "Jobs", password: "correct horse battery" });
  const evaluatorId = randomUUID();
  const ruleId = randomUUID();
  await sql.query("INSERT INTO evaluators (id, project_id, name, type) VALUES ($1, $2, 'check', 'builtin')", [evaluatorId, user.id]);
  await sql.query("INSERT INTO evaluation_rules (id, project_id, evaluator_id, name, target, sampling, filter, delay_s) VALUES ($1, $2, $3, 'rule', 'run', 1, '{}', 0)", [ruleId, user.id, evaluatorId]);
  const jobs = (n: number, dueAt: Date): NewJob[] => Array.from({ length: n }, () => ({
    project_id: user.id, rule_id: ruleId, evaluator_id: evaluatorId, sdk_run_id: randomUUID(), run_id: randomUUID(), span_id: "", due_at: dueAt,
  }));
  return { id: user.id, jobs };
}

describe(`claiming evaluation jobs (${process.env.DATABASE_URL ? "PostgreSQL" : "PGlite"})`, () => {
  it("takes each project's next due job in turn: a project's 300 older jobs hold another's 3 back by one round, not 300 jobs", async () => {
    const [busy, quiet, later] = [await tenant(), await tenant(), await tenant()];
    const past = new Date(Date.now() - 60_000);
    expect(await enqueueJobs(sql, busy.jobs(300, past))).toBe(300);
    expect(await enqueueJobs(sql, quiet.jobs(3, new Date(Date.now() - 1_000)))).toBe(3);
    // Not due yet: never claimed, whatever its project's turn.
    await enqueueJobs(sql, later.jobs(5, new Date(Date.now() + 3_600_000)));
    const mine = [busy.id, quiet.id, later.id];

    const first = await claimJobs(sql, 4, 30, mine);
    expect(first.map((j) => j.project_id).sort()).toEqual([busy.id, busy.id, quiet.id, quiet.id].sort());
    // One at a time, as a worker claims when a slot frees: the quiet project's last job comes within two claims.
    const next = [(await claimJobs(sql, 1, 30, mine))[0]!, (await claimJobs(sql, 1, 30, mine))[0]!];
    expect(next.map((j) => j.project_id)).toContain(quiet.id);
    const quietDone = [...first, ...next].filter((j) => j.project_id === quiet.id);
    for (const j of quietDone) await finishJob(sql, j.id, "done");
    // The busy project fills a worker's slots; a new job of the quiet one, due after all of the busy one's, goes first.
    const busyRunning = await claimJobs(sql, 8, 30, mine);
    expect(busyRunning.every((j) => j.project_id === busy.id)).toBe(true);
    await enqueueJobs(sql, quiet.jobs(1, new Date()));
    const slot = await claimJobs(sql, 1, 30, mine);
    expect(slot.map((j) => j.project_id)).toEqual([quiet.id]);
    await finishJob(sql, slot[0]!.id, "done");
    const rest = await claimJobs(sql, 1_000, 30, mine);
    expect(rest).toHaveLength(300 - 3 - 8);
    expect(rest.every((j) => j.project_id === busy.id)).toBe(true);
    // Leased jobs are not claimed again; finished ones neither.
    expect(await claimJobs(sql, 10, 30, mine)).toEqual([]);
  });

  it("a worker for some projects claims only theirs, still in turns", async () => {
    const [a, b, c] = [await tenant(), await tenant(), await tenant()];
    const past = new Date(Date.now() - 1_000);
    for (const t of [a, b, c]) await enqueueJobs(sql, t.jobs(4, past));
    const claimed = await claimJobs(sql, 4, 30, [a.id, b.id]);
    expect(claimed.map((j) => j.project_id).sort()).toEqual([a.id, a.id, b.id, b.id].sort());
    expect((await claimJobs(sql, 100, 30, [c.id])).map((j) => j.project_id)).toEqual([c.id, c.id, c.id, c.id]);
  });
});
