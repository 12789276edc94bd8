/**
 * The runs filter and sorts against chDB (and a ClickHouse server when CLICKHOUSE_URL is set): runs, LLM calls, scores and run text inserted here, and every filter field
 * and every sort checked against a reference computed here from the same rows (the JS below says what each field
 * means). Each run has an older version whose facts all differ, which must never match or place a run. Another
 * project holds copies of the same runs, which must never match; cursor pages over each sort list
 * every run exactly once, in order, while newer runs are inserted between pages.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { EventStore } from "../../core/ports/event-store.js";
import type { RunRecord } from "../../core/events/run.js";
import { RUN_STATUSES } from "../../core/events/schema.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { runIdFor, uuidv7 } from "../../core/ids.js";
import { ValidationError } from "../../core/errors.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { clickHouseServerVersion, MIN_SERVER_MAJOR, openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { parseRunsFilter, parseRunsSort, type RunsFilter, type RunsSort } from "../../core/runs-filter/index.js";
import { createEventStore } from "./event-store.js";
import { FIXTURE_NOW, fixture, matches, sortKey, staleVersions, type Fixture } from "./testing/runs-filter-fixture.js";

const A = 7001;
const B = 7002;

interface Target {
  name: string;
  /** Why it cannot run here, or undefined. */
  unavailable?: string;
  open(): Promise<ClickHouse>;
  teardown(ch: ClickHouse): Promise<void>;
}
const serverUrl = process.env.CLICKHOUSE_URL;
const serverVersion = serverUrl ? await clickHouseServerVersion(serverUrl) : undefined;
let dir = "";
const database = `runwatch_filter_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
const TARGETS: Target[] = [
  {
    name: "chDB",
    open: async () => openChdb((dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-filter-test-"))), "runwatch"),
    teardown: async (ch) => { await ch.close(); await rm(dir, { recursive: true, force: true }); },
  },
  {
    name: "ClickHouse server",
    unavailable: !serverUrl ? "CLICKHOUSE_URL is not set" : Number(serverVersion!.split(".")[0]) < MIN_SERVER_MAJOR ? `server ${serverVersion} is too old` : undefined,
    open: () => openClickHouseServer(serverUrl!, database),
    teardown: async (ch) => { await ch.exec(`DROP DATABASE IF EXISTS ${database}`); await ch.close(); },
  },
];

for (const target of TARGETS) describe.skipIf(target.unavailable !== undefined)(`RunsFilter on ${target.name}`, () => {
  let ch: ClickHouse;
  let store: EventStore;
  let fx: Fixture;

  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    store = createEventStore(ch);
    fx = fixture(A);
    // Project B: runs of the same names with other facts, calls, scores and texts — a query that forgot the project
    // anywhere would list them or read their facts.
    const copy = fixture(B, 5);
    // Every run also has an older version that differs in every fact: only the latest may count. It goes in a part of
    // its own (an insert folds the versions within it), which no merge folds away during the tests.
    await ch.exec("SYSTEM STOP MERGES agent_runs");
    // A re-written score goes in a part after the one it re-writes, which no merge folds during the tests either.
    await ch.exec("SYSTEM STOP MERGES scores");
    for (const f of [fx, copy]) {
      await store.upsertRuns(staleVersions(f));
      await store.upsertRuns(f.runs);
      await ch.insert("llm_calls", f.calls);
      await ch.insert("scores", f.scores);
      await ch.insert("scores", f.rewrites);
      // Half the texts in their events' rows, half in run_text as rows stored before migration 195 are: search finds both.
      await ch.insert("agent_events", f.texts.filter((_, i) => i % 2 === 0).map(textEvent));
      await ch.insert("run_text", f.texts.filter((_, i) => i % 2 === 1));
    }
  });
  afterAll(async () => {
    if (ch) await target.teardown(ch);
  });

  /** A fixture's text as the agent_events row of the step that gave it. */
  const textEvent = (t: Record<string, unknown>) => ({
    event_id: t.event_id, project_id: t.project_id, user_id: t.project_id, run_id: t.run_id, sdk_run_id: t.sdk_run_id, event_type: "step",
    agent_name: "", payload: "{}", occurred_at: t.at, received_at: t.at, search_text: t.text,
  });

  /** Every page of `filter` in `sort`, `limit` at a time; `between` runs after each page. */
  async function allPages(filter: RunsFilter, sort: RunsSort, limit: number, between?: (page: number) => Promise<void>): Promise<RunRecord[]> {
    const out: RunRecord[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await store.listRuns(A, { filter, sort, limit, cursor });
      expect(res.runs.length).toBeLessThanOrEqual(limit);
      out.push(...res.runs);
      if (!res.next_cursor) return out;
      cursor = res.next_cursor;
      await between?.(page);
    }
    throw new Error("more than 100 pages");
  }

  const expected = (filter: RunsFilter, sort: RunsSort = { field: "start_time", order: "desc" }) =>
    fx.runs.filter((r) => matches(fx, r, filter, Date.now())).sort((a, b) => compare(sortKey(fx, a, sort), sortKey(fx, b, sort), sort.order)).map((r) => r.external_id);

  function compare(a: readonly [number, number | string, string], b: readonly [number, number | string, string], order: "asc" | "desc"): number {
    if (a[0] !== b[0]) return b[0] - a[0]; // runs with a value first, in either order
    const d = order === "asc" ? 1 : -1;
    if (a[1] !== b[1]) return (a[1] < b[1] ? -1 : 1) * d;
    return (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0) * d;
  }

  describe("filters and sorts", () => {
    const hour = 3_600_000;
    const at = (msAgo: number) => new Date(FIXTURE_NOW - msAgo).toISOString().slice(0, 19) + "Z";
    const filters = [
      "", "status:error", "status:error,running", "-status:success", "status!=running,waiting_for_input",
      "agent:refund", 'agent:"refund bot"', "-agent:refund", `agent:${JUDGE_AGENT}`, "is:judge", "is:judge -agent:support",
      "version:2", "model:gpt-4o", "model:gpt-4o-mini", "-model:gpt-4o", "model:claude,gpt-4o-mini",
      "tag:vip", "tag:vip tag:beta", "tag:vip,beta", "-tag:vip", 'tag:"a,b"', "-tag:vip,beta",
      "meta.customer:acme", "meta.customer:X", "meta.customer!=acme", "-meta.customer:acme", "meta.customer:*", "-meta.customer:*",
      "meta.tier>2", "meta.tier:3", "meta.tier<=2", "meta.tier>=5", "meta.flag:true", 'meta."odd key":x', "meta.customer<1",
      "user:cust-1", "session:sess-2", "env:production", "-env:production", "env:production,staging", "release:v2", "-release:v1",
      "cost>0.05", "cost<=0.05", "cost:0.5", "cost>=0.01 cost<2", "duration>10s", "duration<=1m", "duration:30s", "tokens>=1000", "tokens<500",
      "score.correctness<0.5", "score.correctness>=0.5", "score.correctness<0.1", "score.correctness>=0.9", "score.helpful:*", "score.helpful:1", "score.label:*", "score.correctness:* score.helpful:0",
      "has:error", "-has:error",
      "since:12h", "since:2d", `from:${at(30 * hour)}`, `to:${at(40 * hour)}`, `from:${at(60 * hour)} to:${at(20 * hour)}`,
      "id:run-1", "id:sess-3", "id:RUN-0", "id:zzz",
      "timeout", '"hello world"', "HELLO", "100%", "done_ok", "a_c", "back\\slash", "-timeout", "timeout refund", '-"hello world" -timeout',
      "is:experiment", "is:experiment status:error", "is:experiment is:judge",
      "status:error agent:refund env:production meta.customer:X since:12h",
      "agent:x' OR 1=1 --", "'; DROP TABLE agent_runs; --",
    ];

    it.each(filters)("%s", async (q) => {
      const filter = parseRunsFilter(q);
      const want = expected(filter);
      const got = await store.listRuns(A, { filter, limit: 500 });
      expect(got.runs.map((r) => r.external_id)).toEqual(want);
      expect(got.runs.every((r) => r.project_id === A)).toBe(true);
    });

    it("each filter above picks some runs and leaves some out, except the ones meant to match nothing or everything", () => {
      const trivial = filters.filter((q) => {
        const n = expected(parseRunsFilter(q)).length;
        return n === 0 || n === expected({}).length;
      });
      // Customers are text, never below 1; ids are case-sensitive.
      expect(trivial).toEqual(["", "meta.customer<1", "id:RUN-0", "id:zzz", "agent:x' OR 1=1 --", "'; DROP TABLE agent_runs; --"]);
    });

    it("an id prefix finds a run by its run_id too", async () => {
      const r = fx.runs.find((x) => x.external_id === "run-05")!;
      const got = await store.listRuns(A, { filter: { id_prefix: r.run_id.slice(0, 8).toUpperCase() }, limit: 500 });
      expect(got.runs.map((x) => x.external_id)).toContain("run-05");
    });

    it("the older fields narrow the filter as before (status, agent_name, session_id, since, config_version, score)", async () => {
      const legacy = await store.listRuns(A, { status: "error", agent_name: "refund", limit: 500 });
      expect(legacy.runs.map((r) => r.external_id)).toEqual(expected({ status: ["error"], agent: ["refund"] }));
      const both = await store.listRuns(A, { filter: { environment: ["production"] }, since: at(30 * hour), score_name: "correctness", score_min: 0.5, limit: 500 });
      expect(both.runs.map((r) => r.external_id)).toEqual(expected({ environment: ["production"], from: new Date(Date.parse(at(30 * hour))).toISOString(), score: [{ name: "correctness", min: 0.5 }] }));
      await expect(store.listRuns(A, { since: "yesterday" })).rejects.toBeInstanceOf(ValidationError);
    });

    const sorts = ["start_time", "duration", "cost", "tokens", "score.correctness", "score.helpful"].flatMap((f) => [parseRunsSort(f, "desc"), parseRunsSort(f, "asc")]);

    it.each(sorts)("sorts by $field $order, every run once in order across cursor pages", async (sort) => {
      for (const q of ["", "is:experiment is:judge", "status:error,success"]) {
        const filter = parseRunsFilter(q);
        const want = expected(filter, sort);
        const got = await store.listRuns(A, { filter, sort, limit: 500 });
        expect(got.runs.map((r) => r.external_id), q).toEqual(want);
        const paged = await allPages(filter, sort, 7);
        expect(paged.map((r) => r.external_id), q).toEqual(want);
      }
    });

    it.each(sorts)("keeps $field $order pages stable while newer runs are inserted between them", async (sort) => {
      const before = expected({}, sort);
      let n = 0;
      const seen = await allPages({}, sort, 5, async (page) => {
        // Newer runs whose sort values fall anywhere: before the cursor, after it, equal to it.
        const run = fx.runs[(page * 7) % fx.runs.length]!;
        await store.upsertRuns([{ ...run, external_id: `new-${sort.field}-${sort.order}-${n++}`, run_id: uuidv7(), started_at: new Date().toISOString(), version: 1 }]);
      });
      const ids = seen.map((r) => r.external_id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.filter((id) => !id.startsWith("new-"))).toEqual(before);
      // A delete is a mutation, which waits for merges to run (stopped to keep the older versions: beforeAll).
      await ch.exec("SYSTEM START MERGES agent_runs");
      await ch.exec("DELETE FROM agent_runs WHERE project_id = {p:UInt64} AND startsWith(external_id, 'new-')", { p: A });
      await ch.exec("SYSTEM STOP MERGES agent_runs");
    // A re-written score goes in a part after the one it re-writes, which no merge folds during the tests either.
    await ch.exec("SYSTEM STOP MERGES scores");
    });

    it("refuses a cursor of another sort or a made-up one, naming cursor", async () => {
      const page = await store.listRuns(A, { sort: { field: "cost", order: "desc" }, limit: 3 });
      for (const [sort, cursor] of [
        [{ field: "cost", order: "asc" }, page.next_cursor!],
        [{ field: "tokens", order: "desc" }, page.next_cursor!],
        [{ field: "cost", order: "desc" }, Buffer.from(JSON.stringify(["x", "run-1", "cost desc"])).toString("base64url")],
        [{ field: "start_time", order: "desc" }, Buffer.from(JSON.stringify(["not a time", "run-1"])).toString("base64url")],
        [{ field: "cost", order: "desc" }, "%%%"],
      ] as const) {
        const err = await store.listRuns(A, { sort, cursor }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).field).toBe("cursor");
      }
      // A cursor of the older form (start time, newest first) still reads.
      const old = Buffer.from(JSON.stringify([new Date(FIXTURE_NOW).toISOString(), "zzz"])).toString("base64url");
      expect((await store.listRuns(A, { cursor: old, limit: 500 })).runs.map((r) => r.external_id)).toEqual(expected({}));
    });

    it("refuses a filter or sort given as data that the Schema does not accept, naming it", async () => {
      for (const [query, field] of [
        [{ filter: { since: "1 OR 1=1" } as unknown as RunsFilter }, "filter.since"],
        [{ filter: { agent: ["x"], drop: true } as unknown as RunsFilter }, "filter.drop"],
        [{ sort: { field: "cost; DROP", order: "desc" } as unknown as RunsSort }, "sort"],
        [{ sort: { field: "cost", order: "sideways" } as unknown as RunsSort }, "order"],
      ] as const) {
        const err = await store.listRuns(A, query).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as ValidationError).field).toBe(field);
      }
    });

    it("covers every status and both sides of every fact in its fixture", () => {
      expect(new Set(fx.runs.map((r) => r.status))).toEqual(new Set(RUN_STATUSES));
      expect(fx.runs.some((r) => r.ended_at === null) && fx.runs.some((r) => r.experiment_id !== "")).toBe(true);
      expect(runIdFor(A, "run-05")).toBe(fx.runs.find((r) => r.external_id === "run-05")!.run_id);
    });
  });
});
