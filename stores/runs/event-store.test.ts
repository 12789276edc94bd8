/**
 * The EventStore and ClickHouse migrations, on chDB always and on a ClickHouse server when CLICKHOUSE_URL
 * is set (a fresh database per run). The same test bodies run on both transports.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { LoggedEvent, EventType } from "../../core/events/schema.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { ValidationError } from "../../core/errors.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { clickHouseServerVersion, MIN_SERVER_MAJOR, openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { readMigrationFiles } from "../../core/postgres/migration-files.js";

const allVersions = (await readMigrationFiles(new URL("../../core/clickhouse/migrations/", import.meta.url).pathname)).map((m) => m.version);
import { COST_COLUMNS, costFacts, createEventStore, SPAN_VALUE_CHARS, toChTime } from "./event-store.js";
import { deleteRuns } from "./expired-runs.js";
import type { EventStore } from "../../core/ports/event-store.js";

interface Target {
  name: string;
  /** Why the target cannot run here, or undefined when it can. */
  unavailable?: string;
  setup(): Promise<void>;
  open(): Promise<ClickHouse>;
  /** A connection whose queries default to another database of the same store (created if missing). */
  openDatabase(name: string): Promise<ClickHouse>;
  teardown(): Promise<void>;
}

const chdbTarget = (): Target => {
  let dir = "";
  return {
    name: "chDB",
    setup: async () => { dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-ch-test-")); },
    open: () => openChdb(dir, "runwatch"),
    openDatabase: (name) => openChdb(dir, name),
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
};

// A reachable server too old for the schema (Debian's 18.16) runs only the transport tests (server.test.ts).
const serverUrl = process.env.CLICKHOUSE_URL;
const serverVersion = serverUrl ? await clickHouseServerVersion(serverUrl) : undefined;
const serverTooOld = serverVersion !== undefined && Number(serverVersion.split(".")[0]) < MIN_SERVER_MAJOR;

const serverTarget = (): Target => {
  const url = serverUrl;
  const database = `runwatch_test_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  return {
    name: "ClickHouse server",
    unavailable: !url ? "CLICKHOUSE_URL is not set" : serverTooOld ? `server ${serverVersion} is older than ${MIN_SERVER_MAJOR}.x` : undefined,
    setup: async () => {},
    open: () => openClickHouseServer(url!, database),
    openDatabase: (name) => openClickHouseServer(url!, name),
    teardown: async () => {
      const ch = await openClickHouseServer(url!, database);
      await ch.exec(`DROP DATABASE IF EXISTS ${database}`);
      await ch.close();
    },
  };
};

let seq = 0;
function event(userId: number, sdkRunId: string, type: EventType, payload: Record<string, unknown> = {}, at = new Date()): LoggedEvent {
  return {
    event_id: uuidv7(),
    project_id: userId, user_id: userId,
    run_id: runIdFor(userId, sdkRunId),
    sdk_run_id: sdkRunId,
    event_type: type,
    agent_name: type === "run_start" ? "agent-a" : null,
    payload: { seq: seq++, ...payload },
    occurred_at: at.toISOString(),
    received_at: new Date().toISOString(),
    config_version: null,
  };
}

function run(userId: number, externalId: string, patch: Partial<RunRecord> = {}): RunRecord {
  const at = patch.started_at ?? new Date().toISOString();
  return { ...newRunRecord({ project_id: userId, user_id: userId }, externalId, runIdFor(userId, externalId), at), started_at: at, agent_name: "agent-a", version: 1, ...patch };
}

const iso = (msAgo: number) => new Date(Date.UTC(2026, 10, 1) - msAgo).toISOString();

for (const target of [chdbTarget(), serverTarget()]) {
  const suite = () => {
    let ch: ClickHouse;
    let store: EventStore;
    let user = 1000;
    const nextUser = () => ++user;

    beforeAll(async () => {
      await target.setup();
      ch = await target.open();
      await migrateClickHouse(ch);
      store = createEventStore(ch);
    });
    afterAll(async () => {
      await ch?.close();
      await target.teardown();
    });

    async function reopen(): Promise<void> {
      await ch.close();
      ch = await target.open();
      store = createEventStore(ch);
    }

    it("migrations are recorded once, are idempotent, and re-run cleanly on reopen", async () => {
      expect(await migrateClickHouse(ch)).toEqual([]);
      await reopen();
      expect(await migrateClickHouse(ch)).toEqual([]);
      const tables = await ch.query<{ name: string }>("SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name");
      expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["agent_events", "agent_runs", "schema_migrations"]));
      const versions = await ch.query<{ version: number }>("SELECT version FROM schema_migrations FINAL ORDER BY version");
      expect(versions.map((v) => Number(v.version))).toEqual(allVersions);
    });

    it("concurrent migrators (several processes starting at once) all succeed", async () => {
      await Promise.all([migrateClickHouse(ch), migrateClickHouse(ch), migrateClickHouse(ch)]);
      const [row] = await ch.query<{ n: string }>("SELECT count() AS n FROM schema_migrations FINAL");
      expect(Number(row!.n)).toBe(allVersions.length);
    });

    it("tunes the merges of the tables the pipeline writes every batch (migration 110), where the server knows how", async () => {
      for (const table of ["agent_events", "agent_runs", "llm_calls", "run_costs"]) {
        const [row] = await ch.query<{ sql: string }>(`SELECT create_table_query AS sql FROM system.tables WHERE database = currentDatabase() AND name = '${table}'`);
        expect(row!.sql, table).toMatch(/merge_selector_base = 20/);
        expect(row!.sql, table).toMatch(/min_bytes_for_wide_part = 134217728/);
      }
    });

    it("skips the granules a look-up of new runs cannot match, by bloom filters on their keys and project minmax (migrations 120, 140, 150)", async () => {
      const indexes = await ch.query<{ table: string; name: string; type_full: string; expr: string }>(
        `SELECT table, name, type_full, expr FROM system.data_skipping_indices
         WHERE database = currentDatabase() AND table IN ('agent_runs', 'agent_events') ORDER BY table, name`,
      );
      expect(indexes).toEqual([
        { table: "agent_events", name: "project_id_minmax", type_full: "minmax", expr: "project_id" },
        { table: "agent_events", name: "run_id_bloom", type_full: "bloom_filter(0.0001)", expr: "run_id" },
        { table: "agent_runs", name: "end_user_bloom", type_full: "bloom_filter(0.001)", expr: "end_user" },
        { table: "agent_runs", name: "experiment_id_bloom", type_full: "bloom_filter(0.001)", expr: "experiment_id" },
        { table: "agent_runs", name: "external_id_bloom", type_full: "bloom_filter(0.0001)", expr: "external_id" },
        { table: "agent_runs", name: "last_event_at_minmax", type_full: "minmax", expr: "last_event_at" },
        { table: "agent_runs", name: "metadata_keys_bloom", type_full: "bloom_filter(0.01)", expr: "mapKeys(metadata)" },
        { table: "agent_runs", name: "metadata_values_bloom", type_full: "bloom_filter(0.01)", expr: "mapValues(metadata)" },
        { table: "agent_runs", name: "models_bloom", type_full: "bloom_filter(0.01)", expr: "models" },
        { table: "agent_runs", name: "project_id_minmax", type_full: "minmax", expr: "project_id" },
        { table: "agent_runs", name: "session_id_bloom", type_full: "bloom_filter(0.001)", expr: "session_id" },
        { table: "agent_runs", name: "tags_bloom", type_full: "bloom_filter(0.01)", expr: "tags" },
      ]);
      // The look-ups still find what is stored beside keys that are not.
      const u = nextUser();
      await store.upsertRuns([run(u, "stored-run")]);
      const e = event(u, "stored-run", "run_start");
      await store.insertEvents([e]);
      const loaded = await store.loadRuns([{ project_id: u, external_id: "stored-run" }, ...Array.from({ length: 499 }, (_, i) => ({ project_id: u, external_id: `absent-${i}` }))]);
      expect(loaded.map((r) => r.external_id)).toEqual(["stored-run"]);
      // The look-up stores/runs/stored-events.ts findRunsWithEvents makes.
      const withEvents = await ch.query<{ rid: string }>(
        "SELECT DISTINCT toString(run_id) AS rid FROM agent_events WHERE user_id IN {users:Array(UInt64)} AND run_id IN {runs:Array(UUID)}",
        { users: [u], runs: [e.run_id, runIdFor(u, "absent")] },
      );
      expect(withEvents).toEqual([{ rid: e.run_id }]);
    });

    it("skips the granules of runs last active before a time bound, by the minmax index on last_event_at (migration 190)", async () => {
      const database = `runwatch_time_${randomUUID().replaceAll("-", "").slice(0, 8)}`;
      const probe = await target.openDatabase(database);
      try {
        await migrateClickHouse(probe);
        await probe.exec("SYSTEM STOP MERGES agent_runs"); // two parts, as a day of ingest leaves them
        const probeStore = createEventStore(probe);
        const day = 86_400_000;
        await probeStore.upsertRuns(["a", "b"].map((id) => run(7, `old-${id}`, { started_at: iso(10 * day), last_event_at: iso(10 * day) })));
        await probeStore.upsertRuns(["a", "b"].map((id) => run(7, `new-${id}`, { started_at: iso(0), last_event_at: iso(0) })));
        const plan = (await probe.query<{ explain: string }>(
          "EXPLAIN indexes = 1 SELECT external_id FROM agent_runs WHERE project_id = 7 AND last_event_at >= {t:DateTime64(3, 'UTC')}",
          { t: iso(day).replace("T", " ").slice(0, 23) },
        )).map((r) => r.explain).join("\n");
        expect(plan).toMatch(/Name: last_event_at_minmax\s+Description: minmax GRANULARITY 1\s+Condition: [^\n]+\s+Parts: 1\/2/);
        const listed = await probeStore.listRuns(7, { filter: { from: iso(day) } });
        expect(listed.runs.map((r) => r.external_id)).toEqual(["new-b", "new-a"]);
      } finally {
        await probe.exec("SYSTEM START MERGES agent_runs");
        await probe.exec(`DROP DATABASE IF EXISTS ${database}`);
        await probe.close();
      }
    });

    it("skips a migration whose MergeTree setting the server does not know, records it, and refuses an unknown directive", async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-ch-migrations-"));
      const database = `runwatch_probe_${randomUUID().replaceAll("-", "").slice(0, 8)}`;
      const probe = await target.openDatabase(database);
      try {
        await writeFile(path.join(dir, "001_table.sql"), "CREATE TABLE IF NOT EXISTS tuned (a UInt64) ENGINE = MergeTree ORDER BY a;\n");
        await writeFile(path.join(dir, "002_unknown.sql"), "-- @requires-merge-tree-setting no_such_setting\nALTER TABLE tuned MODIFY SETTING no_such_setting = 1;\n");
        await writeFile(path.join(dir, "003_known.sql"), "-- @requires-merge-tree-setting min_bytes_for_wide_part\nALTER TABLE tuned MODIFY SETTING min_bytes_for_wide_part = 1;\n");
        expect(await migrateClickHouse(probe, dir)).toEqual([1, 2, 3]);
        const [row] = await probe.query<{ sql: string }>("SELECT create_table_query AS sql FROM system.tables WHERE database = currentDatabase() AND name = 'tuned'");
        expect(row!.sql).toMatch(/min_bytes_for_wide_part = 1\b/);
        expect(row!.sql).not.toMatch(/no_such_setting/);
        expect(await migrateClickHouse(probe, dir)).toEqual([]);
        await writeFile(path.join(dir, "004_typo.sql"), "-- @require-merge-tree-setting min_bytes_for_wide_part\nSELECT 1;\n");
        await expect(migrateClickHouse(probe, dir)).rejects.toThrow('004_typo: unknown migration directive "-- @require-merge-tree-setting min_bytes_for_wide_part"');
      } finally {
        await probe.exec(`DROP DATABASE IF EXISTS ${database}`);
        await probe.close();
        await rm(dir, { recursive: true, force: true });
      }
    });

    it("keeps events and runs across close and reopen", async () => {
      const u = nextUser();
      const evs = [event(u, "persist", "run_start"), event(u, "persist", "step", { node_name: "plan", phase: "start" })];
      await store.insertEvents(evs);
      await store.upsertRuns([run(u, "persist", { event_count: 2 })]);
      await reopen();
      expect((await store.listEvents(u, evs[0]!.run_id)).map((e) => e.event_id)).toEqual(evs.map((e) => e.event_id));
      expect((await store.getRun(u, "persist"))?.event_count).toBe(2);
    });

    it("stores an event inserted twice (a replay) once, and round-trips every field", async () => {
      const u = nextUser();
      const e = { ...event(u, "dup", "tool_call", { tool_name: "search", phase: "end", output_preview: "é ✓ \"quoted\"\n" }), config_version: 3, span_id: "call-7", parent_span_id: "node-2" };
      const other = event(u, "dup", "run_end", { cost_usd: 0.25 });
      await store.insertEvents([e, other]);
      await store.insertEvents([e, other]); // identical block: may be dropped at insert
      await store.insertEvents([e]); // different block: folded on read
      const got = await store.listEvents(u, e.run_id);
      expect(got).toHaveLength(2);
      expect(got[0]).toEqual({
        event_id: e.event_id,
        run_id: e.run_id,
        sdk_run_id: "dup",
        event_type: "tool_call",
        agent_name: "",
        payload: e.payload,
        occurred_at: e.occurred_at,
        received_at: e.received_at,
        config_version: 3,
        span_id: "call-7",
        parent_span_id: "node-2",
      });
    });

    it("stores a payload as the JSON object it is, and reads back exactly what was written, whatever its strings", async () => {
      // The row carries the payload as an object (eventRowLine, input_format_json_read_objects_as_strings): nothing
      // in it may be taken for the row's own syntax, and what comes back must be the payload, not its escaping.
      const u = nextUser();
      const hostile = {
        quotes: 'a "quoted" \\ back\\slash \\u0041 and "}\n{"event_id":"x"}',
        escapes: "\\ud800 \\\\u0000 \u2028\u2029 \t\r\n",
        // What the ingest rules repair before storing; a custom plugin or a replayed record could still hand them over.
        nul: "before\u0000after",
        lone: "half \ud800 pair",
        unicode: "é ✓ 😀 \u{10FFFF}",
        nested: { a: [1, 2.5, -0, 1e21, null, true, { b: { c: [[["deep"]]] } }], "": "empty key" },
      };
      // JSON.parse makes "__proto__" a plain key, as it does for a client's payload.
      const e = event(u, "hostile", "tool_call", JSON.parse(JSON.stringify(hostile).replace(/}$/, ',"__proto__":"a key"}')));
      expect(Object.keys(e.payload)).toContain("__proto__");
      // A foreign record's payload that is not an object is stored as its JSON text, as before.
      const odd = { ...event(u, "hostile", "run_end"), payload: [1, "two"] as unknown as Record<string, unknown> };
      await store.insertEvents([e, odd]);
      const got = await store.listEvents(u, e.run_id);
      expect(got.map((g) => g.payload)).toEqual([e.payload, [1, "two"]]);
      const [raw] = await ch.query<{ payload: string }>(
        "SELECT payload FROM agent_events WHERE user_id = {u:UInt64} AND event_id = {id:UUID}", { u, id: e.event_id },
      );
      expect(raw!.payload).toBe(JSON.stringify(e.payload));
    });

    it("listSpanEvents reads only step and tool_call events, each value over SPAN_VALUE_CHARS cut and the payload still JSON", async () => {
      const u = nextUser();
      const long = { kind: "llm", node_name: "chat", phase: "end", error: `${"x".repeat(10_000)}"\\`, input: [{ role: "user", content: "é".repeat(5_000) }], model: "gpt-4o", prompt_tokens: 5, nested: { ok: true } };
      const big = event(u, "spans", "step", long);
      const small = event(u, "spans", "tool_call", { tool_name: "search", phase: "end", output_preview: 'a "quoted" \\ value' });
      const start = event(u, "spans", "run_start", { input: "x".repeat(10_000) });
      await store.insertEvents([start, big, small]);
      const got = await store.listSpanEvents(u, big.run_id);
      expect(got.map((g) => g.event_id).sort()).toEqual([big.event_id, small.event_id].sort());
      expect(got.find((g) => g.event_id === small.event_id)!.payload).toEqual(small.payload);
      const p = got.find((g) => g.event_id === big.event_id)!.payload;
      expect(p.error).toBe("x".repeat(SPAN_VALUE_CHARS));
      expect(typeof p.input).toBe("string");
      expect(p.input as string).toMatch(/^\[\{"role":"user","content":"éé/);
      expect((p.input as string).length).toBe(SPAN_VALUE_CHARS);
      expect(p).toMatchObject({ kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 5, nested: { ok: true } });
    });

    it("round-trips identifiers that look like the row's own syntax, and times in other ISO forms, canonical", async () => {
      // eventRowLine writes plain strings as they are and the rest through JSON.stringify (core/json-text.ts).
      const u = nextUser();
      const sdkRunId = 'run "one"\\],["00000000-0000-0000-0000-000000000000",1\n\t😀 é';
      const e = {
        ...event(u, sdkRunId, "tool_call", { tool_name: "t", phase: "end" }),
        agent_name: 'agent\\"x"]',
        span_id: 'span ",\n',
        parent_span_id: "parent-1:2.3 x",
        occurred_at: "2026-11-26T13:00:00.5+01:00",
        config_version: 7,
      };
      await store.insertEvents([e]);
      const [got] = await store.listEvents(u, e.run_id);
      expect(got).toMatchObject({
        sdk_run_id: sdkRunId, agent_name: e.agent_name, span_id: e.span_id, parent_span_id: e.parent_span_id,
        occurred_at: "2026-11-26T12:00:00.500Z", config_version: 7,
      });
      expect(await ch.query("SELECT count() AS n FROM agent_events WHERE user_id = {u:UInt64}", { u })).toEqual([{ n: "1" }]);
    });

    it("returns a run's events in UUIDv7 (ingest) order, whatever the insert order, with `after` paging", async () => {
      const u = nextUser();
      // Many ids minted in the same millisecond: ClickHouse's own UUID order would scramble these.
      const evs = Array.from({ length: 300 }, (_, i) => event(u, "ordered", "step", { node_name: `n${i}`, phase: "start" }));
      const shuffled = [...evs].sort(() => Math.random() - 0.5);
      await store.insertEvents(shuffled.slice(0, 150));
      await store.insertEvents(shuffled.slice(150));
      const runId = evs[0]!.run_id;
      const all = await store.listEvents(u, runId);
      expect(all.map((e) => e.event_id)).toEqual(evs.map((e) => e.event_id));
      const first = await store.listEvents(u, runId, { limit: 100 });
      const rest = await store.listEvents(u, runId, { after: first[first.length - 1]!.event_id.toUpperCase() });
      expect([...first, ...rest].map((e) => e.event_id)).toEqual(evs.map((e) => e.event_id));
      expect(await store.listEvents(u, runIdFor(u, "no-such-run"))).toEqual([]);
      await expect(store.listEvents(u, runId, { after: "nope" })).rejects.toBeInstanceOf(ValidationError);
    });

    it("keeps the highest run version, whatever order the versions arrive in", async () => {
      const u = nextUser();
      const base = run(u, "versions");
      await store.upsertRuns([{ ...base, version: 5, status: "waiting_for_input", pending_question: "ok?" }]);
      await store.upsertRuns([{ ...base, version: 9, status: "success", ended_at: iso(0), total_tokens: 1234, cost_usd: 0.0125 }]);
      await store.upsertRuns([{ ...base, version: 7, status: "running" }]);
      const got = await store.getRun(u, "versions");
      expect(got).toEqual({ ...base, version: 9, status: "success", ended_at: iso(0), total_tokens: 1234, cost_usd: 0.0125 });
      // A filter on a non-key column must see only the latest version (FINAL before WHERE).
      expect((await store.listRuns(u, { status: "running" })).runs).toEqual([]);
      expect((await store.listRuns(u, { status: "success" })).runs.map((r) => r.version)).toEqual([9]);
      expect(await store.getRun(u, "missing")).toBeUndefined();
    });

    it("writes a run's row and its cost row value by value: every field round-trips, whatever its strings", async () => {
      // runRowLine / costRowLine write the lines by hand (RUN_COLUMNS, COST_COLUMNS): nothing in a value may be taken
      // for the row's syntax, and each value must land in its own column.
      const u = nextUser();
      const hostile = 'x "q" \\ ],[1,\n\t😀 é \u2028';
      const full = run(u, `run ${hostile}`, {
        agent_name: `agent ${hostile}`, status: "waiting_for_input", status_at: iso(3000), started_at: iso(5000),
        ended_at: null, last_event_at: iso(1000), model: `model ${hostile}`, prompt_tokens: 2 ** 40, completion_tokens: 7,
        total_tokens: 2 ** 40 + 7, cost_usd: 0.000123, cost_source: "computed", framework: `fw ${hostile}`, config_version: 3,
        event_count: 11, error_count: 2, last_error: `error ${hostile}`, pending_question: `question ${hostile}`,
        llm_calls: 4, session_id: `session ${hostile}`, version: 1_764_000_000_000_123,
        tags: [`tag ${hostile}`, "vip"], metadata: Object.assign(Object.create(null), { [`key ${hostile}`]: JSON.stringify(hostile), n: "42", ok: "true", ["__proto__"]: '"p"' }),
        end_user: `user ${hostile}`, environment: `env ${hostile}`, release: `release ${hostile}`, input_preview: `in ${hostile}`,
        output_preview: `out ${hostile}`,
      });
      const bare = run(u, "bare", { started_at: null, config_version: null });
      // The cost row is the version and the cost facts the pipeline compares (pipeline/run-writer.ts costRowsDue), nothing else.
      expect(COST_COLUMNS).toEqual(["version", ...Object.keys(costFacts(full))]);
      await store.upsertRuns([full, bare]);
      expect(await store.getRun(u, full.external_id)).toEqual(full);
      expect(await store.getRun(u, "bare")).toEqual(bare);
      const costs = await ch.query<Record<string, unknown>>(
        `SELECT external_id, toString(day) AS day, agent_name, model, status, prompt_tokens, completion_tokens, total_tokens,
                cost_usd, cost_source, version
         FROM run_costs FINAL WHERE user_id = {u:UInt64} ORDER BY external_id`, { u },
      );
      expect(costs).toEqual([
        { external_id: "bare", day: bare.last_event_at.slice(0, 10), agent_name: bare.agent_name, model: bare.model, status: bare.status, prompt_tokens: String(bare.prompt_tokens), completion_tokens: String(bare.completion_tokens), total_tokens: String(bare.total_tokens), cost_usd: bare.cost_usd, cost_source: bare.cost_source, version: String(bare.version) },
        { external_id: full.external_id, day: full.started_at!.slice(0, 10), agent_name: full.agent_name, model: full.model, status: "waiting_for_input", prompt_tokens: String(2 ** 40), completion_tokens: "7", total_tokens: String(2 ** 40 + 7), cost_usd: 0.000123, cost_source: "computed", version: String(full.version) },
      ]);
    });

    it("reads a run row written without the attribute columns (before migration 180) as a run without them", async () => {
      const u = nextUser();
      await ch.exec(
        `INSERT INTO agent_runs (project_id, user_id, external_id, run_id, agent_name, status, status_at, last_event_at, version)
         VALUES ({u:UInt64}, {u:UInt64}, 'old-row', {rid:UUID}, 'agent-a', 'success', now64(3), now64(3), 1)`,
        { u, rid: runIdFor(u, "old-row") },
      );
      const got = await store.getRun(u, "old-row");
      expect(got).toMatchObject({ tags: [], metadata: {}, end_user: "", environment: "", release: "", input_preview: "", output_preview: "" });
      // Filters on the new columns read them (the skip indexes do not change the answer).
      await store.upsertRuns([run(u, "tagged", { tags: ["beta", "vip"], metadata: { customer: '"acme"', tier: "2" }, end_user: "cust-42" })]);
      const hits = await ch.query<{ external_id: string }>(
        `SELECT external_id FROM agent_runs FINAL WHERE project_id = {u:UInt64} AND has(tags, 'vip') AND metadata['customer'] = '"acme"'
           AND mapContains(metadata, 'tier') AND end_user = 'cust-42'`,
        { u },
      );
      expect(hits).toEqual([{ external_id: "tagged" }]);
    });

    it("search text: kept in the event's row, found by a LIKE per project, a replay folded, deleted with its run; old run_text rows too", async () => {
      const [u, other] = [nextUser(), nextUser()];
      const texts = new Map<LoggedEvent, string>();
      const ev = (project: number, id: string, text: string) => {
        const e = event(project, id, "step", { node_name: text });
        texts.set(e, text);
        return e;
      };
      const events = [ev(u, "r1", "where is my refund? \"quoted\" 😀"), ev(u, "r1", "lookup_order"), ev(u, "r2", "a timeout at the gateway"), ev(other, "r1", "refund elsewhere")];
      const plain = event(u, "r3", "step", { node_name: "refund" }); // no search text given: found by none
      await store.insertEvents([...events, plain], undefined, texts);
      await store.insertEvents([events[0]!], undefined, texts); // a replayed part writes the same row again
      const search = async (project: number, q: string) => (await ch.query<{ id: string }>(
        "SELECT DISTINCT sdk_run_id AS id FROM agent_events WHERE project_id = {p:UInt64} AND search_text LIKE {q:String} ORDER BY id", { p: project, q },
      )).map((r) => r.id);
      expect(await search(u, "%refund%")).toEqual(["r1"]);
      expect(await search(u, "%timeout at%")).toEqual(["r2"]);
      expect(await search(u, "%\"quoted\" 😀%")).toEqual(["r1"]);
      expect(await search(u, "%nothing like it%")).toEqual([]);
      expect(await search(other, "%refund%")).toEqual(["r1"]);
      const [{ n }] = await ch.query<{ n: string }>("SELECT count() AS n FROM agent_events FINAL WHERE project_id = {p:UInt64} AND search_text != ''", { p: u }) as [{ n: string }];
      expect(Number(n)).toBe(3);
      // Rows of run_text (written before migration 195) are still there to be searched, and deleted with their run.
      await ch.insert("run_text", [{ project_id: u, run_id: runIdFor(u, "r1"), sdk_run_id: "r1", event_id: uuidv7(), at: "2026-01-01 00:00:00.000", text: "old text" }]);
      // An OTLP trace's log records leave with its run too; another run's stay.
      const now = toChTime(new Date().toISOString()); // older than the table's TTL, a row would leave by itself
      const log = (trace: string) => ({ project_id: u, user_id: u, log_id: uuidv7(), trace_id: trace, span_id: "", time: now, body: "a line", attributes: "{}", received_at: now });
      await ch.insert("otel_logs", [log("r1"), log("r2")]);
      await deleteRuns(ch, u, [{ run_id: runIdFor(u, "r1"), external_id: "r1" }]);
      expect(await ch.query("SELECT trace_id FROM otel_logs WHERE project_id = {p:UInt64}", { p: u })).toEqual([{ trace_id: "r2" }]);
      expect(await search(u, "%e%")).toEqual(["r2"]);
      expect(await search(other, "%e%")).toEqual(["r1"]);
      expect(await ch.query("SELECT 1 FROM run_text WHERE project_id = {p:UInt64}", { p: u })).toEqual([]);
    });

    it("loadRuns returns the latest version of exactly the requested keys", async () => {
      const a = nextUser();
      const b = nextUser();
      await store.upsertRuns([run(a, "x", { version: 1 }), run(a, "x", { version: 2, event_count: 2 }), run(a, "y"), run(b, "x", { event_count: 7 }), run(b, "z")]);
      const got = await store.loadRuns([{ project_id: a, external_id: "x" }, { project_id: b, external_id: "x" }, { project_id: a, external_id: "absent" }]);
      const byKey = Object.fromEntries(got.map((r) => [`${r.user_id}/${r.external_id}`, r]));
      expect(Object.keys(byKey).sort()).toEqual([`${a}/x`, `${b}/x`].sort());
      expect(byKey[`${a}/x`]!.event_count).toBe(2);
      expect(byKey[`${b}/x`]!.event_count).toBe(7);
      expect(await store.loadRuns([])).toEqual([]);
    });

    it("loadRuns picks the newest version whatever order the versions were written in, and reads each key once", async () => {
      // Versions in separate inserts (separate parts, not merged yet), newest first: the read must pick it, not the last.
      const u = nextUser();
      await store.upsertRuns([run(u, "late", { version: 30, event_count: 3 })]);
      await store.upsertRuns([run(u, "late", { version: 10, event_count: 1 })]);
      await store.upsertRuns([run(u, "late", { version: 20, event_count: 2 })]);
      const got = await store.loadRuns([{ project_id: u, external_id: "late" }, { project_id: u, external_id: "late" }]);
      expect(got.map((r) => [r.version, r.event_count])).toEqual([[30, 3]]);
      expect(await store.loadRuns([{ project_id: u, external_id: "LATE" }, { project_id: u + 1, external_id: "late" }])).toEqual([]);
    });

    it("listRuns filters by status, agent_name, since, config_version and run ids", async () => {
      const u = nextUser();
      await store.upsertRuns([
        run(u, "r1", { status: "success", agent_name: "alpha", started_at: iso(5000), last_event_at: iso(4000), config_version: 2 }),
        run(u, "r2", { status: "error", agent_name: "alpha", started_at: iso(4000), last_event_at: iso(3000) }),
        run(u, "r3", { status: "success", agent_name: "beta", started_at: iso(3000), last_event_at: iso(1000), config_version: 2 }),
        run(nextUser(), "r4", { status: "success", agent_name: "alpha" }),
      ]);
      const ids = async (f: Parameters<EventStore["listRuns"]>[1]) => (await store.listRuns(u, f)).runs.map((r) => r.external_id);
      expect(await ids({})).toEqual(["r3", "r2", "r1"]);
      expect(await ids({ status: "success" })).toEqual(["r3", "r1"]);
      expect(await ids({ agent_name: "alpha" })).toEqual(["r2", "r1"]);
      expect(await ids({ since: iso(3000) })).toEqual(["r3", "r2"]);
      expect(await ids({ config_version: 2, agent_name: "beta" })).toEqual(["r3"]);
      expect(await ids({ status: "waiting_for_input" })).toEqual([]);
      // Narrowed to some runs by id: another project's run of such an id is not among them.
      expect(await ids({ external_ids: ["r1", "r3", "r4"] })).toEqual(["r3", "r1"]);
      expect(await ids({ external_ids: ["r1", "r2"], filter: { status: ["error"] } })).toEqual(["r2"]);
      await expect(store.listRuns(u, { since: "yesterday" })).rejects.toBeInstanceOf(ValidationError);
    });

    it("listRuns pages newest first with an opaque cursor, without gaps or repeats", async () => {
      const u = nextUser();
      // Equal start times on some runs, so the external_id tie-break matters; one run without run_start.
      const runs = Array.from({ length: 23 }, (_, i) => run(u, `run-${String(i).padStart(2, "0")}`, { started_at: iso(Math.floor(i / 3) * 1000) }));
      runs.push(run(u, "no-start", { started_at: null, last_event_at: iso(3500) }));
      await store.upsertRuns(runs);
      const expected = [...runs]
        .sort((a, b) => (b.started_at ?? b.last_event_at).localeCompare(a.started_at ?? a.last_event_at) || b.external_id.localeCompare(a.external_id))
        .map((r) => r.external_id);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listRuns(u, { limit: 5, cursor });
        expect(page.runs.length).toBeLessThanOrEqual(5);
        seen.push(...page.runs.map((r) => r.external_id));
        // A newer version of an already listed run must not make it appear again.
        if (pages === 0) await store.upsertRuns([{ ...page.runs[0]!, version: 2, status: "success" }]);
        cursor = page.next_cursor ?? undefined;
        pages++;
      } while (cursor);
      expect(pages).toBe(5);
      expect(seen).toEqual(expected);
      expect((await store.listRuns(u, { limit: 24 })).next_cursor).toBeNull();
      await expect(store.listRuns(u, { cursor: "garbage" })).rejects.toBeInstanceOf(ValidationError);
      await expect(store.listRuns(u, { limit: 0 })).rejects.toBeInstanceOf(ValidationError);
      await expect(store.listRuns(u, { limit: 501 })).rejects.toBeInstanceOf(ValidationError);
      expect((await store.listRuns(u, { limit: 500 })).runs).toHaveLength(24);
    });
  };

  if (target.unavailable && process.env.REQUIRE_SERVICES === "1" && !serverTooOld) {
    describe(`EventStore on ${target.name}`, () => {
      it("needs its server", () => { throw new Error(`REQUIRE_SERVICES=1 but ${target.unavailable}`); });
    });
  } else if (target.unavailable) {
    describe.skip(`EventStore on ${target.name} (skipped: ${target.unavailable})`, suite);
  } else {
    describe(`EventStore on ${target.name}`, suite);
  }
}
