/**
 * A run's `models` (migration 251) on chDB: rows written before the migration, without the column, still match
 * `model:` by their stored LLM calls; rows written after it match by the column, and llm_calls stored after the
 * migration are not read for them; a fresh install reads no llm_calls at all; another project never matches; a run
 * loaded back keeps its models. The schema before 251 is built from the migrations before it, as an upgraded install
 * had it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { newRunRecord, withModel, MAX_RUN_MODELS } from "../../core/events/run.js";
import { runIdFor } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { parseRunsFilter } from "../../core/runs-filter/index.js";
import { createEventStore } from "./event-store.js";

const A = 8101;
const B = 8102;
const MIGRATIONS = fileURLToPath(new URL("../../core/clickhouse/migrations/", import.meta.url));
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const chTime = (ms: number) => iso(ms).replace("T", " ").replace("Z", "");

/** An agent_runs row as a writer before migration 251 wrote it: no models. */
function oldRun(project: number, id: string, model = "") {
  const run = { ...newRunRecord({ project_id: project, user_id: project }, id, runIdFor(project, id), iso(Date.now() - 3 * DAY)), agent_name: "old", model, version: 1 };
  const { models: _, tags: __, metadata: ___, ...row } = run;
  return { ...row, status_at: chTime(Date.now() - 3 * DAY), last_event_at: chTime(Date.now() - 3 * DAY) };
}
function call(project: number, id: string, model: string, endedMs: number) {
  return {
    user_id: project, project_id: project, run_id: runIdFor(project, id), sdk_run_id: id, call_id: `${id}-${model}`, model,
    day: iso(endedMs).slice(0, 10), started_at: chTime(endedMs), ended_at: chTime(endedMs),
  };
}

async function migrationsBefore(version: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-migrations-"));
  for (const f of await readdir(MIGRATIONS)) if (/^\d{3}_/.test(f) && Number(f.slice(0, 3)) < version) await cp(path.join(MIGRATIONS, f), path.join(dir, f));
  return dir;
}

describe("run models", () => {
  const dirs: string[] = [];
  const opened: ClickHouse[] = [];
  // One data directory per process (chDB): a database of its own for each install.
  let dir = "";
  const open = async (database: string) => {
    if (!dir) dirs.push((dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-models-test-"))));
    const ch = await openChdb(dir, database);
    opened.push(ch);
    return ch;
  };
  let upgraded: EventStore;
  const ids = async (store: EventStore, q: string, project = A) =>
    (await store.listRuns(project, { filter: parseRunsFilter(q), limit: 100 })).runs.map((r) => r.external_id).sort();

  beforeAll(async () => {
    // An install upgraded with runs and calls on it: the old rows, then the migration, then runs the new pipeline wrote.
    const ch = await open("upgraded");
    const before = await migrationsBefore(251);
    dirs.push(before);
    await migrateClickHouse(ch, before);
    const old = Date.now() - 3 * DAY;
    await ch.insert("agent_runs", [oldRun(A, "old-call"), oldRun(A, "old-own", "gpt-4o"), oldRun(A, "old-none"), oldRun(B, "old-call")]);
    await ch.insert("llm_calls", [call(A, "old-call", "gpt-4o-mini", old), call(A, "old-call", "claude", old + 1000), call(B, "old-call", "b-model", old)]);
    await migrateClickHouse(ch);
    upgraded = createEventStore(ch);
    const now = Date.now();
    const run = (id: string, models: string[]) => ({ ...newRunRecord({ project_id: A, user_id: A }, id, runIdFor(A, id), iso(now)), agent_name: "new", models, version: 2 });
    await upgraded.upsertRuns([run("new-call", ["gpt-4o-mini"]), run("new-none", [])]);
    // A call stored after the migration belongs to a run whose models name it; this one's run was written without
    // it, so only a read of llm_calls past the bound would list "new-none".
    await ch.insert("llm_calls", [call(A, "new-none", "gpt-4o-mini", now)]);
  }, 120_000);
  afterAll(async () => {
    for (const ch of opened) await ch.close();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it("lists rows written before the migration by their calls, and newer rows by their models", async () => {
    expect(await ids(upgraded, "model:gpt-4o-mini")).toEqual(["new-call", "old-call"]);
    expect(await ids(upgraded, "model:claude")).toEqual(["old-call"]);
    expect(await ids(upgraded, "model:gpt-4o")).toEqual(["old-own"]);
  });

  it("negated, leaves out old and new rows that used the model", async () => {
    expect(await ids(upgraded, "-model:gpt-4o-mini")).toEqual(["new-none", "old-none", "old-own"]);
    expect(await ids(upgraded, "-model:claude,gpt-4o")).toEqual(["new-call", "new-none", "old-none"]);
  });

  it("never lists another project's runs", async () => {
    expect(await ids(upgraded, "model:b-model")).toEqual([]);
    expect(await ids(upgraded, "model:b-model", B)).toEqual(["old-call"]);
    expect(await ids(upgraded, "model:gpt-4o-mini", B)).toEqual([]);
  });

  it("a fresh install keeps no bound, and reads no part of llm_calls for model:", async () => {
    const ch = await open("fresh");
    await migrateClickHouse(ch);
    expect(await ch.query("SELECT * FROM run_models_backfill")).toEqual([]);
    const store = createEventStore(ch);
    await store.upsertRuns([{ ...newRunRecord({ project_id: A, user_id: A }, "fresh", runIdFor(A, "fresh"), iso(Date.now())), models: ["m-1", "m-2"], version: 1 }]);
    await ch.insert("llm_calls", [call(A, "fresh", "m-3", Date.now() - 10 * DAY)]);
    expect(await ids(store, "model:m-2")).toEqual(["fresh"]);
    expect(await ids(store, "model:m-3")).toEqual([]);
    // The subquery's bound prunes every partition and granule of llm_calls (primary key and partition key on day).
    const plan = await ch.query<{ explain: string }>(
      "EXPLAIN indexes = 1 SELECT run_id FROM llm_calls WHERE project_id = 8101 AND model IN ('m-3')" +
      " AND day <= toDate((SELECT max(calls_until) FROM run_models_backfill)) AND ended_at <= (SELECT max(calls_until) FROM run_models_backfill)");
    const text = plan.map((r) => r.explain).join("\n");
    expect(text, text).toMatch(/Parts: 0\/1/);
  });

  it("a run loaded back keeps its models", async () => {
    const [run] = await upgraded.loadRuns([{ project_id: A, external_id: "new-call" }]);
    expect(run?.models).toEqual(["gpt-4o-mini"]);
    const [old] = await upgraded.loadRuns([{ project_id: A, external_id: "old-call" }]);
    expect(old?.models).toEqual([]);
  });

  it("withModel keeps a sorted set, allocating only for a new model, up to MAX_RUN_MODELS", () => {
    const one = withModel([], "b");
    expect(withModel(one, "b")).toBe(one);
    expect(withModel(withModel(one, "a"), "c")).toEqual(["a", "b", "c"]);
    expect(withModel(one, "")).toBe(one);
    let many: readonly string[] = [];
    for (let i = 0; i < MAX_RUN_MODELS + 5; i++) many = withModel(many, `m-${String(i).padStart(2, "0")}`);
    expect(many.length).toBe(MAX_RUN_MODELS);
  });
});
