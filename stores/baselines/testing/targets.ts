/**
 * What the baselines' store tests share: the two ClickHouse targets they run on (chDB always; a ClickHouse server, in
 * a fresh database, when CLICKHOUSE_URL names one new enough) and a recent Tuesday 14:00 UTC to seed hours from.
 */
import { describe, it } from "vitest";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { randomUUID } from "node:crypto";
import type { ClickHouse } from "../../../core/ports/clickhouse.js";
import { openChdb } from "../../../core/clickhouse/chdb.js";
import { clickHouseServerVersion, MIN_SERVER_MAJOR, openClickHouseServer } from "../../../core/clickhouse/server.js";

const serverUrl = process.env.CLICKHOUSE_URL;
const serverVersion = serverUrl ? await clickHouseServerVersion(serverUrl) : undefined;
const serverUnavailable = !serverUrl
  ? "CLICKHOUSE_URL is not set"
  : Number(serverVersion!.split(".")[0]) < MIN_SERVER_MAJOR ? `server ${serverVersion} is older than ${MIN_SERVER_MAJOR}.x` : undefined;

/** A server is named but too old for the SQL: its tests skip even where REQUIRE_SERVICES=1 demands a server. */
export const serverTooOld = serverVersion !== undefined && Number(serverVersion.split(".")[0]) < MIN_SERVER_MAJOR;

export interface Target { name: string; unavailable?: string; open(): Promise<ClickHouse>; teardown(): Promise<void> }

const chdbTarget = (): Target => {
  let dir = "";
  return {
    name: "chDB",
    open: async () => { dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-baselines-")); return openChdb(dir, "runwatch"); },
    teardown: () => rm(dir, { recursive: true, force: true }),
  };
};
const serverTarget = (): Target => {
  const database = `runwatch_test_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
  return {
    name: "ClickHouse server",
    unavailable: serverUnavailable,
    open: () => openClickHouseServer(serverUrl!, database),
    teardown: async () => {
      const ch = await openClickHouseServer(serverUrl!, database);
      await ch.exec(`DROP DATABASE IF EXISTS ${database}`);
      await ch.close();
    },
  };
};

/** A chDB target and a ClickHouse server target, each made fresh. */
export const clickHouseTargets = (): Target[] => [chdbTarget(), serverTarget()];

/**
 * `suite` under describe("<title> on <target>") for each target: skipped when the target's server is absent, or a
 * failing test when REQUIRE_SERVICES=1 demands one (a server too old for the SQL still skips).
 */
export function describeOnTargets(title: string, suite: (target: Target) => void): void {
  for (const target of clickHouseTargets()) {
    const name = `${title} on ${target.name}`;
    if (target.unavailable && process.env.REQUIRE_SERVICES === "1" && !serverTooOld) {
      describe(name, () => {
        it("needs its server", () => { throw new Error(`REQUIRE_SERVICES=1 but ${target.unavailable}`); });
      });
    } else if (target.unavailable) describe.skip(`${name} (skipped: ${target.unavailable})`, () => suite(target));
    else describe(name, () => suite(target));
  }
}

export const HOUR = 3_600_000;
/**
 * The latest Tuesday 14:00 UTC before now: recent, because agent_metric_hours drops rows 35 days after their
 * hour (a fixed date would age out of the table and the rows vanish at the next merge).
 */
export const H1 = (() => {
  let t = Math.floor(Date.now() / HOUR) * HOUR;
  while (new Date(t).getUTCDay() !== 2 || new Date(t).getUTCHours() !== 14) t -= HOUR;
  return t;
})();
