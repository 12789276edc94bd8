import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { encodeBatch, type EncodedEvents } from "../events/wire.js";
import { createLogger } from "../logger.js";
import { openFileLog } from "./file-log.js";
import { LaneGate } from "./lane-gate.js";
import { LaneRouter, tenantOfKey } from "./lane-router.js";
import { lanedLog } from "./lanes.js";
import type { EventLog } from "../ports/event-log.js";

const dirs: string[] = [];
const logs: EventLog[] = [];
afterEach(async () => {
  for (const l of logs.splice(0)) await l.close();
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

const record = (tenant: number, bytes: number, tag: string): EncodedEvents => {
  const body = JSON.stringify({ tag, pad: "x".repeat(Math.max(0, bytes - 40)) });
  return { ...encodeBatch([new TextEncoder().encode(body)]), keys: [`${tenant}:run-${tag}`] };
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("lane router", () => {
  it("reads the tenant of an event key and of an OTLP export key", () => {
    expect(tenantOfKey("7:run-1")).toBe("7");
    expect(tenantOfKey("7:a:b")).toBe("7");
    expect(tenantOfKey("otlp:12")).toBe("12");
  });

  it("sends a tenant to the bulk lane once it appended more than the threshold within the window, and only that tenant", async () => {
    const router = new LaneRouter({ bulkAfterBytes: 100 * 1024, windowSec: 10, holdSec: 30 });
    expect(await router.laneFor(["1:a"], 60 * 1024)).toBe("main");
    expect(await router.laneFor(["1:b"], 30 * 1024)).toBe("main");
    expect(await router.laneFor(["1:c"], 30 * 1024)).toBe("bulk");
    expect(await router.laneFor(["1:d"], 1)).toBe("bulk"); // held in bulk
    expect(await router.laneFor(["2:a"], 60 * 1024)).toBe("main");
    // One append bigger than the whole threshold goes to bulk at once.
    expect(await router.laneFor(["otlp:3"], 200 * 1024)).toBe("bulk");
  });

  it("keeps an append of several tenants' records (a replay) in the main lane, and everything there when turned off", async () => {
    const router = new LaneRouter({ bulkAfterBytes: 1024, windowSec: 10, holdSec: 30 });
    expect(await router.laneFor(["1:a", "2:a"], 1_000_000)).toBe("main");
    const off = new LaneRouter({ bulkAfterBytes: 0, windowSec: 10, holdSec: 30 });
    expect(await off.laneFor(["1:a"], 1_000_000_000)).toBe("main");
  });
});

describe("lane gate", () => {
  it("runs one task at a time and alternates lanes when both wait", async () => {
    const gate = new LaneGate();
    const order: string[] = [];
    const task = (name: string) => async () => { order.push(`${name}+`); await sleep(5); order.push(`${name}-`); };
    await Promise.all([
      gate.run("bulk", task("b1")),
      gate.run("bulk", task("b2")),
      gate.run("bulk", task("b3")),
      gate.run("main", task("m1")),
      gate.run("main", task("m2")),
    ]);
    expect(order).toEqual(["b1+", "b1-", "m1+", "m1-", "b2+", "b2-", "m2+", "m2-", "b3+", "b3-"]);
  });

  it("passes on after a task fails", async () => {
    const gate = new LaneGate();
    await expect(gate.run("main", async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(await gate.run("bulk", async () => 42)).toBe(42);
  });
});

describe("laned log (two file logs)", () => {
  it("a light tenant's record waits for at most one bulk batch while a heavy tenant's backlog drains", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-lanes-"));
    dirs.push(dir);
    const quiet = createLogger("error");
    const main = await openFileLog(path.join(dir, "log"), { logger: quiet });
    const bulk = await openFileLog(path.join(dir, "log-bulk"), { logger: quiet });
    const log = lanedLog({ main, bulk }, new LaneRouter({ bulkAfterBytes: 300 * 1024, windowSec: 10, holdSec: 30 }));
    logs.push(log);
    // Tenant 1 appends 40 records of 256 KiB: the first fits its main-lane allowance, the rest go to bulk (4 a batch).
    for (let i = 0; i < 40; i++) await log.append(record(1, 256 * 1024, `heavy-${i}`));
    const handled: string[] = [];
    let victimAt = -1;
    const consumer = await log.consume({
      group: "pipeline",
      maxBatch: 5000,
      maxWaitMs: 5,
      handler: async (batch) => {
        for (const r of batch) {
          const tag = (JSON.parse(new TextDecoder().decode(r)) as { tag: string }).tag;
          handled.push(tag);
          if (tag === "victim") victimAt = handled.length;
        }
        await sleep(10 * batch.length); // every record costs time, as the pipeline's do
      },
    });
    await sleep(60);
    await log.append(record(2, 200, "victim"));
    const deadline = Date.now() + 20_000;
    while (handled.length < 41 && Date.now() < deadline) await sleep(10);
    await consumer.stop();
    expect(handled).toHaveLength(41);
    expect(new Set(handled).size).toBe(41);
    // The victim came after at most one more bulk batch (4 records), not after the 39 in the bulk lane.
    expect(victimAt).toBeGreaterThan(0);
    expect(victimAt).toBeLessThan(20);
    // The heavy tenant's records kept their order.
    const heavy = handled.filter((t) => t.startsWith("heavy-")).map((t) => Number(t.slice(6)));
    expect(heavy).toEqual([...heavy].sort((a, b) => a - b));
    expect(await consumer.lag()).toBe(0);
  });
});
