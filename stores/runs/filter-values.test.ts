/**
 * The filter bar's `model:` values on chDB (and a ClickHouse server when CLICKHOUSE_URL is set): read from the runs'
 * `models` and own `model` in the window, by prefix in any case; not from another project, a run outside the window
 * or the judge's runs; and from llm_calls only for the calls stored before runs kept their models
 * (run_models_backfill), so a fresh install never reads a call there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import { newRunRecord, type RunRecord } from "../../core/events/run.js";
import { JUDGE_AGENT } from "../../core/events/judge-runs.js";
import { runIdFor } from "../../core/ids.js";
import { openChdb } from "../../core/clickhouse/chdb.js";
import { clickHouseServerVersion, MIN_SERVER_MAJOR, openClickHouseServer } from "../../core/clickhouse/server.js";
import { migrateClickHouse } from "../../core/clickhouse/migrate.js";
import { createEventStore } from "./event-store.js";
import { filterValues } from "./filter-values.js";

const A = 8201;
const B = 8202;
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const chTime = (ms: number) => iso(ms).replace("T", " ").replace("Z", "");

const serverUrl = process.env.CLICKHOUSE_URL;
const serverVersion = serverUrl ? await clickHouseServerVersion(serverUrl) : undefined;
let dir = "";
const database = `runwatch_values_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
const TARGETS = [
  {
    name: "chDB",
    unavailable: undefined as string | undefined,
    open: async () => openChdb((dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-values-test-"))), "runwatch"),
    teardown: async (ch: ClickHouse) => { await ch.close(); await rm(dir, { recursive: true, force: true }); },
  },
  {
    name: "ClickHouse server",
    unavailable: !serverUrl ? "CLICKHOUSE_URL is not set" : Number(serverVersion!.split(".")[0]) < MIN_SERVER_MAJOR ? `server ${serverVersion} is too old` : undefined,
    open: () => openClickHouseServer(serverUrl!, database),
    teardown: async (ch: ClickHouse) => { await ch.exec(`DROP DATABASE IF EXISTS ${database}`); await ch.close(); },
  },
];

function run(project: number, id: string, fields: Partial<RunRecord>, atMs = Date.now()): RunRecord {
  return { ...newRunRecord({ project_id: project, user_id: project }, id, runIdFor(project, id), iso(atMs)), agent_name: "bot", version: 1, ...fields };
}
function call(project: number, id: string, model: string, endedMs: number) {
  return {
    user_id: project, project_id: project, run_id: runIdFor(project, id), sdk_run_id: id, call_id: `${id}-${model}`, model,
    day: iso(endedMs).slice(0, 10), started_at: chTime(endedMs), ended_at: chTime(endedMs),
  };
}

for (const target of TARGETS) describe.skipIf(target.unavailable !== undefined)(`model: values on ${target.name}`, () => {
  let ch: ClickHouse;
  const now = Date.now();
  const models = (prefix = "", project = A, limit?: number) => filterValues(ch, project, "model", prefix, limit);

  beforeAll(async () => {
    ch = await target.open();
    await migrateClickHouse(ch);
    await createEventStore(ch).upsertRuns([
      // Models named only by the runs' LLM calls: no llm_calls row of them is stored here.
      run(A, "calls", { models: ["Claude-3", "gpt-4o-mini"], llm_calls: 3 }),
      // The run's own model (its run_end's), without calls.
      run(A, "own", { model: "gpt-4o" }),
      run(A, "both", { model: "gpt-4o", models: ["gpt-4o", "o3"], llm_calls: 1 }),
      run(A, "none", {}),
      // Outside the window, the judge's own run, another project: never offered.
      run(A, "long-ago", { models: ["ancient"], llm_calls: 1 }, now - 100 * DAY),
      run(A, "judged", { agent_name: JUDGE_AGENT, models: ["judge-model"], llm_calls: 1 }),
      run(B, "calls", { models: ["b-model"], llm_calls: 1 }),
    ]);
    // Calls whose runs' rows do not name them (as rows written before migration 251): read only below the bound.
    await ch.insert("llm_calls", [call(A, "pre-251", "pre-251-model", now - 3 * DAY), call(A, "late", "late-model", now), call(A, "too-old", "too-old-model", now - 95 * DAY)]);
  }, 120_000);
  afterAll(async () => {
    if (ch) await target.teardown(ch);
  });

  it("offers the models of the project's runs in the window: their calls' and their own", async () => {
    expect(await models()).toEqual(["Claude-3", "gpt-4o", "gpt-4o-mini", "o3"]);
    expect(await models("", B)).toEqual(["b-model"]);
  });

  it("by prefix, in any case, at most the limit", async () => {
    expect(await models("GPT")).toEqual(["gpt-4o", "gpt-4o-mini"]);
    expect(await models("claude")).toEqual(["Claude-3"]);
    expect(await models("", A, 2)).toEqual(["Claude-3", "gpt-4o"]);
    expect(await models("anc")).toEqual([]);
    expect(await models("judge")).toEqual([]);
  });

  it("reads llm_calls only for the window's calls stored before runs kept their models", async () => {
    // A fresh install has no bound: no stored call is read.
    expect(await models("", A, 20)).not.toContain("pre-251-model");
    await ch.insert("run_models_backfill", [{ calls_until: chTime(now - 2 * DAY) }]);
    expect(await models()).toEqual(["Claude-3", "gpt-4o", "gpt-4o-mini", "o3", "pre-251-model"]);
    expect(await models("", B)).toEqual(["b-model"]);
  });
});
