/**
 * Migration 140 on a store made before projects (every migration up to 130, with data in every table): each row lands
 * in its user's personal project (which has the user's id), a project's reads find exactly its rows, the migration
 * can run again (and from several processes) without changing anything, and a user's run with the same sdk_run_id
 * in two projects stays two runs. On chDB, and on the ClickHouse server when CLICKHOUSE_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord } from "../../core/events/run.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { clickHouseServerVersion, MIN_SERVER_MAJOR, openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore, toChTime } from "./event-store.js";

const MIGRATIONS = fileURLToPath(new URL("../../core/clickhouse/migrations/", import.meta.url));
const serverUrl = process.env.CLICKHOUSE_URL;
const serverVersion = serverUrl ? await clickHouseServerVersion(serverUrl) : undefined;
const serverUsable = serverVersion !== undefined && Number(serverVersion.split(".")[0]) >= MIN_SERVER_MAJOR;

const targets: { name: string; skip: boolean; open: (dir: string) => Promise<ClickHouse>; drop?: (ch: ClickHouse) => Promise<void> }[] = [
  { name: "chDB", skip: false, open: (dir) => openChdb(path.join(dir, "ch"), "runwatch") },
  {
    name: "ClickHouse server",
    skip: !serverUsable,
    open: async () => openClickHouseServer(serverUrl!, `runwatch_mig_${randomUUID().replaceAll("-", "").slice(0, 12)}`),
    drop: async (ch) => {
      const [{ db }] = (await ch.query<{ db: string }>("SELECT currentDatabase() AS db")) as [{ db: string }];
      await ch.exec(`DROP DATABASE IF EXISTS ${db}`);
    },
  },
];

for (const target of targets) {
  describe.skipIf(target.skip)(`ClickHouse migration 140 (projects) on ${target.name}`, () => {
    let dir = "";
    let ch: ClickHouse;
    const [ada, bob] = [41, 42];
    beforeAll(async () => {
      dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-ch-mig-"));
      const before = path.join(dir, "before-projects");
      await cp(MIGRATIONS, before, { recursive: true, filter: (src) => !/(1[4-9]\d|[2-9]\d\d)_[^/]*\.sql$/.test(src) });
      ch = await target.open(dir);
      await migrateClickHouse(ch, before);
      // Data in every table, as the release before projects wrote it (no project_id column yet).
      const at = toChTime(new Date().toISOString());
      for (const user of [ada, bob]) {
        const runId = runIdFor(user, "same-run");
        await ch.insert("agent_events", [{ event_id: uuidv7(), user_id: user, run_id: runId, sdk_run_id: "same-run", event_type: "run_start", agent_name: "a", payload: "{}", occurred_at: at, received_at: at }]);
        await ch.insert("agent_runs", [{ user_id: user, external_id: "same-run", run_id: runId, agent_name: "a", status: "success", status_at: at, last_event_at: at, version: 1 }]);
        await ch.insert("run_costs", [{ user_id: user, external_id: "same-run", version: 1, day: at.slice(0, 10), agent_name: "a", cost_usd: user }]);
        await ch.insert("llm_calls", [{ user_id: user, run_id: runId, sdk_run_id: "same-run", call_id: "c", event_id: uuidv7(), started_at: at, ended_at: at, day: at.slice(0, 10) }]);
        await ch.insert("scores", [{ score_id: uuidv7(), user_id: user, run_id: runId, sdk_run_id: "same-run", name: "s", value_type: "number", value_number: user, created_at: at }]);
      }
      // 140, then the migrations after it.
      expect((await migrateClickHouse(ch))[0]).toBe(140);
    });
    afterAll(async () => {
      await target.drop?.(ch);
      await ch?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("puts every row in its user's personal project, and each project's reads find exactly its rows", async () => {
      for (const table of ["agent_events", "agent_runs", "run_costs", "llm_calls", "scores"]) {
        const rows = await ch.query<{ u: string | number; p: string | number }>(`SELECT user_id AS u, project_id AS p FROM ${table} ORDER BY u`);
        expect([table, rows.map((r) => [Number(r.u), Number(r.p)])]).toEqual([table, [[ada, ada], [bob, bob]]]);
      }
      const store = createEventStore(ch);
      expect((await store.getRun(ada, "same-run"))?.run_id).toBe(runIdFor(ada, "same-run"));
      expect((await store.listRuns(bob, {})).runs.map((r) => [r.user_id, r.project_id])).toEqual([[bob, bob]]);
      expect(await store.getRun(999, "same-run")).toBeUndefined();
    });

    it("runs again, and from several processes at once, without changing a row", async () => {
      const count = async () => Number((await ch.query<{ n: string }>("SELECT count() AS n FROM agent_runs FINAL"))[0]!.n);
      const before = await count();
      await ch.exec("DELETE FROM schema_migrations WHERE version = 140");
      const again = await Promise.all([migrateClickHouse(ch), migrateClickHouse(ch)]);
      expect(again.flat().filter((v) => v === 140).length).toBeGreaterThanOrEqual(1);
      expect(await count()).toBe(before);
      expect(Number((await ch.query<{ n: string }>("SELECT count() AS n FROM agent_runs WHERE project_id = 0"))[0]!.n)).toBe(0);
    });

    it("keeps a user's runs with the same sdk_run_id in two projects apart after merges", async () => {
      const store = createEventStore(ch);
      const team = 900;
      const run = { ...newRunRecord({ project_id: team, user_id: ada }, "same-run", runIdFor(team, "same-run"), new Date().toISOString()), version: 2 };
      await store.upsertRuns([run]);
      await ch.exec("OPTIMIZE TABLE agent_runs FINAL");
      expect((await store.getRun(ada, "same-run"))?.project_id).toBe(ada);
      expect((await store.getRun(team, "same-run"))?.user_id).toBe(ada);
      expect((await store.loadRuns([{ project_id: ada, external_id: "same-run" }, { project_id: team, external_id: "same-run" }])).map((r) => r.project_id).sort()).toEqual([ada, team]);
    });
  });
}
