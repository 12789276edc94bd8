/**
 * The Kafka EventLog against a real broker (KAFKA_BROKERS): per-key order, commit only after the handler
 * resolved, retry of a failing handler, redelivery to a peer after a consumer process is killed (kill -9),
 * and Unavailable (not a hang) when the broker cannot be reached.
 */
import { afterAll, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { randomUUID } from "node:crypto";
import { openKafkaLog } from "../../core/log/kafka-log.js";
import { encodeEvents } from "../../core/events/wire.js";
import { Unavailable } from "../../core/errors.js";
import type { LoggedEvent } from "../../core/events/schema.js";
import type { EventLog } from "../../core/ports/event-log.js";
import { describeWith, eventually, testConfig } from "./services.js";
import { loggedEvent } from "./fixtures/make-events.js";
import { appendEvents, consumeEvents } from "../../core/log/events.js";

const opened: EventLog[] = [];
const open = async (overrides: Record<string, string> = {}) => {
  const config = testConfig(overrides);
  const log = await openKafkaLog(config);
  opened.push(log);
  return { log, config };
};
afterAll(async () => { await Promise.allSettled(opened.map((l) => l.close())); });

describeWith(["KAFKA_BROKERS"], "kafka event log", () => {
  it("keeps each run's events in append order across concurrent appends and partitions", async () => {
    const { log } = await open();
    const runs = Array.from({ length: 20 }, (_, i) => `run-${i}`);
    const perRun = 100;
    // Many concurrent appends per run, each awaited in order per run (as ingest does per request).
    await Promise.all(runs.map(async (run, r) => {
      for (let seq = 0; seq < perRun; seq += 10) {
        await appendEvents(log, Array.from({ length: 10 }, (_, k) => loggedEvent(1000 + r, run, seq + k)));
      }
    }));
    const seen = new Map<string, number[]>();
    const c = await consumeEvents(log, {
      group: `g-${randomUUID()}`, maxBatch: 500, maxWaitMs: 20,
      handler: async (batch) => {
        for (const e of batch) {
          const list = seen.get(e.sdk_run_id) ?? [];
          list.push(e.payload.seq as number);
          seen.set(e.sdk_run_id, list);
        }
      },
    });
    await eventually("all events consumed", () => [...seen.values()].reduce((n, l) => n + l.length, 0) === runs.length * perRun);
    for (const run of runs) expect(seen.get(run)).toEqual(Array.from({ length: perRun }, (_, i) => i));
    await eventually("lag 0", async () => (await c.lag()) === 0);
    await c.stop();
  });

  it("commits only after the handler resolved, and retries a failing handler", async () => {
    const { log } = await open();
    const events = Array.from({ length: 50 }, (_, i) => loggedEvent(7, "commit-run", i));
    await appendEvents(log, events);
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    let calls = 0;
    const handled: string[] = [];
    const c = await consumeEvents(log, {
      group: `g-${randomUUID()}`, maxBatch: 1000, maxWaitMs: 20,
      handler: async (batch) => {
        calls++;
        if (calls <= 2) throw new Error("store down (test)");
        await gate;
        handled.push(...batch.map((e) => e.event_id));
      },
    });
    await eventually("handler retried", () => calls >= 3, 15_000);
    // Handler is running but has not resolved: nothing may be committed.
    expect(await c.lag()).toBe(50);
    release();
    await eventually("committed", async () => (await c.lag()) === 0, 15_000);
    expect(handled).toEqual(events.map((e) => e.event_id));
    await c.stop();
  });

  it("redelivers a killed consumer's uncommitted events to its peer", async () => {
    const { log, config } = await open();
    const group = `g-${randomUUID()}`;
    const events = Array.from({ length: 300 }, (_, i) => loggedEvent(9, `kill-run-${i % 3}`, i));
    await appendEvents(log, events);
    const child = spawn(process.execPath, ["--import", "tsx", new URL("./fixtures/kafka-consumer-child.ts", import.meta.url).pathname], {
      env: { ...process.env, KAFKA_TOPIC: config.kafkaTopic, GROUP: group, LOG_LEVEL: "error" },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const childSaw = new Set<string>();
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (l) => { if (l.startsWith("[")) for (const id of JSON.parse(l) as string[]) childSaw.add(id); });
    await eventually("child received events", () => childSaw.size > 0, 60_000);
    child.kill("SIGKILL");
    await once(child, "exit");
    const got: LoggedEvent[] = [];
    const c = await consumeEvents(log, { group, maxBatch: 1000, maxWaitMs: 20, handler: async (b) => { got.push(...b); } });
    await eventually("peer consumed everything", () => got.length >= events.length, 60_000);
    const ids = new Set(got.map((e) => e.event_id));
    for (const id of childSaw) expect(ids.has(id)).toBe(true);
    expect(ids.size).toBe(events.length);
    await eventually("lag 0", async () => (await c.lag()) === 0);
    await c.stop();
  }, 120_000);

  it("encoded appends and raw consumption carry the same records as appendEvents/consumeEvents, keyed and ordered per run", async () => {
    const { log } = await open();
    const events = Array.from({ length: 200 }, (_, i) => loggedEvent(3, `enc-${i % 5}`, i));
    await log.append(encodeEvents(events.slice(0, 120)));
    await appendEvents(log, events.slice(120));
    const records: Uint8Array[] = [];
    const c = await log.consume({ group: `g-${randomUUID()}`, maxBatch: 500, maxWaitMs: 20, handler: async (b) => { records.push(...b); } });
    await eventually("all records consumed", () => records.length >= events.length, 60_000);
    await c.stop();
    const got = records.map((r) => JSON.parse(Buffer.from(r).toString("utf8")) as LoggedEvent);
    expect(new Set(got.map((e) => e.event_id)).size).toBe(events.length);
    for (let run = 0; run < 5; run++) {
      const seqs = got.filter((e) => e.sdk_run_id === `enc-${run}`).map((e) => e.payload.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => Number(a) - Number(b)));
    }
  }, 120_000);

  it("keeps consumer groups of the same name apart on different topics (two deployments on one cluster)", async () => {
    const a = await open();
    const b = await open();
    await appendEvents(a.log, Array.from({ length: 60 }, (_, i) => loggedEvent(1, `a-${i % 6}`, i)));
    await appendEvents(b.log, Array.from({ length: 60 }, (_, i) => loggedEvent(2, `b-${i % 6}`, i)));
    const got = { a: 0, b: 0 };
    const ca = await consumeEvents(a.log, { group: "pipeline", maxBatch: 100, maxWaitMs: 20, handler: async (x) => { got.a += x.length; } });
    const cb = await consumeEvents(b.log, { group: "pipeline", maxBatch: 100, maxWaitMs: 20, handler: async (x) => { got.b += x.length; } });
    await eventually("both consumed everything", () => got.a === 60 && got.b === 60, 30_000);
    await Promise.all([ca.stop(), cb.stop()]);
  });

  it("answers Unavailable quickly when no broker is reachable", async () => {
    const started = Date.now();
    const err = await openKafkaLog(testConfig({ KAFKA_BROKERS: "127.0.0.1:1" })).then(
      async (log) => { opened.push(log); return appendEvents(log, [loggedEvent(1, "x", 0)]).then(() => undefined, (e) => e); },
      (e) => e,
    );
    expect(err).toBeInstanceOf(Unavailable);
    expect((err as Unavailable).service).toBe("kafka");
    expect(Date.now() - started).toBeLessThan(30_000);
  }, 40_000);
});
