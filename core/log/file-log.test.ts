import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LoggedEvent } from "../events/schema.js";
import { createLogger } from "../logger.js";
import { encodeEvents } from "../events/wire.js";
import { openFileLog, type FileLog } from "./file-log.js";
import { segmentFile } from "./segments.js";
import { appendEvents, consumeEvents } from "./events.js";

const quiet = createLogger("error");
const dirs: string[] = [];
const open: FileLog[] = [];

async function tempDir(): Promise<string> {
  const d = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-log-"));
  dirs.push(d);
  return d;
}

async function openLog(dir: string, opts: Parameters<typeof openFileLog>[1] = {}): Promise<FileLog> {
  const log = await openFileLog(dir, { logger: quiet, retryBaseMs: 5, retryMaxMs: 20, ...opts });
  open.push(log);
  return log;
}

afterEach(async () => {
  for (const l of open.splice(0)) await l.close();
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

/** Polls until cond holds (the machine may be loaded: no fixed sleeps). */
async function waitFor(cond: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

let n = 0;
function ev(tag: string, extra: Record<string, unknown> = {}): LoggedEvent {
  return {
    event_id: `${tag}`,
    project_id: 7, user_id: 7,
    run_id: "00000000-0000-5000-8000-000000000001",
    sdk_run_id: "run-1",
    event_type: "step",
    agent_name: null,
    payload: { node_name: "plan", phase: "start", n: n++, ...extra },
    occurred_at: "2026-11-23T10:00:00.000Z",
    received_at: "2026-11-23T10:00:00.000Z",
    config_version: null,
  };
}

/** Consumes until `count` events arrived (or timeout), returns them and stops the consumer. */
async function drain(log: FileLog, group: string, count: number, opts: { maxBatch?: number; fail?: number } = {}) {
  const got: LoggedEvent[] = [];
  const batches: number[] = [];
  let failures = opts.fail ?? 0;
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  if (count === 0) done();
  const consumer = await consumeEvents(log, {
    group,
    maxBatch: opts.maxBatch ?? 1000,
    maxWaitMs: 2,
    handler: async (batch) => {
      if (failures > 0) {
        failures--;
        throw new Error("handler failure (test)");
      }
      batches.push(batch.length);
      got.push(...batch);
      if (got.length >= count) done();
    },
  });
  await Promise.race([all, new Promise((_, rej) => setTimeout(() => rej(new Error(`timeout: got ${got.length}/${count}`)), 10_000))]);
  await consumer.stop();
  return { got, batches, consumer };
}

describe("file log", () => {
  it("delivers appended events in order, in batches no larger than maxBatch", async () => {
    const log = await openLog(await tempDir());
    const events = Array.from({ length: 250 }, (_, i) => ev(`e${i}`));
    await appendEvents(log, events.slice(0, 100));
    await Promise.all(events.slice(100).map((e) => appendEvents(log, [e])));
    expect(log.endOffset()).toBe(250);
    const { got, batches } = await drain(log, "g", 250, { maxBatch: 64 });
    expect(got.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    expect(Math.max(...batches)).toBeLessThanOrEqual(64);
    expect(got[0]).toEqual(events[0]);
  });

  it("a batch stops growing at maxBytes, past a record however large it is", async () => {
    const log = await openLog(await tempDir());
    const events = Array.from({ length: 40 }, (_, i) => ev(`b${i}`, { s: "x".repeat(i === 10 ? 50_000 : 900) }));
    await appendEvents(log, events);
    const sizes: number[][] = [];
    const c = await log.consume({ group: "bytes", maxBatch: 1000, maxBytes: 8_000, maxWaitMs: 1, handler: async (b) => void sizes.push(b.map((r) => r.byteLength)) });
    await waitFor(async () => sizes.flat().length === 40);
    await c.stop();
    for (const batch of sizes) {
      // Every record but the last of a batch was taken while the batch held fewer than maxBytes.
      expect(batch.slice(0, -1).reduce((a, b) => a + b, 0)).toBeLessThan(8_000);
    }
    const withBig = sizes.find((b) => b.some((n) => n > 50_000))!;
    expect(withBig[withBig.length - 1]).toBeGreaterThan(50_000); // the batch ends with it
    expect(sizes.length).toBeGreaterThan(4);
  });

  it("group-commits concurrent appends: all resolve, order of calls kept", async () => {
    const log = await openLog(await tempDir());
    const events = Array.from({ length: 2000 }, (_, i) => ev(`c${i}`, { s: "é✓😀".repeat(i % 7) }));
    await Promise.all(events.map((e) => appendEvents(log, [e])));
    const { got } = await drain(log, "g", 2000);
    expect(got.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    expect(got[13]!.payload.s).toBe(events[13]!.payload.s);
  });

  it("append of encoded events and raw consume: the same records as appendEvents/consumeEvents, interleaved in call order", async () => {
    const log = await openLog(await tempDir());
    const events = Array.from({ length: 300 }, (_, i) => ev(`x${i}`, { s: "é✓😀".repeat(i % 5) }));
    await Promise.all([
      appendEvents(log, events.slice(0, 100)),
      log.append(encodeEvents(events.slice(100, 200))),
      appendEvents(log, events.slice(200)),
    ]);
    const decoded = await drain(log, "plain", 300);
    expect(decoded.got).toEqual(events);

    const records: Uint8Array[] = [];
    const c = await log.consume({ group: "encoded", maxBatch: 64, maxWaitMs: 1, handler: async (b) => void records.push(...b) });
    await waitFor(async () => records.length === 300);
    await c.stop();
    // Each record is a copy that outlives the reader's buffer.
    expect(records.map((r) => JSON.parse(Buffer.from(r).toString("utf8")))).toEqual(events);
  });

  it("resumes from the committed offset after reopening; nothing committed is redelivered", async () => {
    const dir = await tempDir();
    let log = await openLog(dir);
    await appendEvents(log, Array.from({ length: 30 }, (_, i) => ev(`r${i}`)));
    const first = await drain(log, "g", 30);
    expect(first.got).toHaveLength(30);
    await appendEvents(log, Array.from({ length: 5 }, (_, i) => ev(`s${i}`)));
    await log.close();

    log = await openLog(dir);
    expect(log.endOffset()).toBe(35);
    const consumer = await consumeEvents(log, { group: "g", maxBatch: 100, maxWaitMs: 1, handler: async () => {} });
    const second = await drain(log, "other", 35);
    await consumer.stop();
    expect(second.got).toHaveLength(35); // a new group starts at the oldest record on disk
    await log.close();

    log = await openLog(dir);
    const third = await drain(log, "g", 0);
    expect(third.got).toHaveLength(0);
    expect(await third.consumer.lag()).toBe(0);
  });

  it("retries a failing handler with the same batch and never skips it", async () => {
    const log = await openLog(await tempDir());
    await appendEvents(log, [ev("a"), ev("b"), ev("c")]);
    const { got } = await drain(log, "g", 3, { fail: 3 });
    expect(got.map((e) => e.event_id)).toEqual(["a", "b", "c"]);
  });

  it("reports lag: appended but not yet committed", async () => {
    const log = await openLog(await tempDir());
    await appendEvents(log, [ev("a"), ev("b")]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const seen: string[] = [];
    const consumer = await consumeEvents(log, {
      group: "g",
      maxBatch: 10,
      maxWaitMs: 1,
      handler: async (b) => {
        seen.push(...b.map((e) => e.event_id));
        await gate;
      },
    });
    await waitFor(async () => seen.length === 2);
    expect(await consumer.lag()).toBe(2);
    release();
    await waitFor(async () => (await consumer.lag()) === 0);
    await appendEvents(log, [ev("c")]);
    await waitFor(async () => seen.length === 3);
    expect(seen).toEqual(["a", "b", "c"]);
    await consumer.stop();
  });

  it("truncates a torn tail record on open and keeps every complete one", async () => {
    const dir = await tempDir();
    let log = await openLog(dir);
    await appendEvents(log, [ev("x1"), ev("x2")]);
    await log.close();
    const seg = segmentFile(dir, 0);
    const goodSize = (await fs.stat(seg)).size;
    // A record whose header promises more bytes than were written before the crash, then zero fill.
    const torn = Buffer.alloc(40);
    torn.writeUInt32LE(500, 0);
    await fs.appendFile(seg, torn);

    log = await openLog(dir);
    expect(log.endOffset()).toBe(2);
    expect((await fs.stat(seg)).size).toBe(goodSize);
    await appendEvents(log, [ev("x3")]);
    const { got } = await drain(log, "g", 3);
    expect(got.map((e) => e.event_id)).toEqual(["x1", "x2", "x3"]);
  });

  it("rotates segments and deletes the ones every group has committed past", async () => {
    const dir = await tempDir();
    let log = await openLog(dir, { segmentBytes: 4096 });
    const events = Array.from({ length: 200 }, (_, i) => ev(`z${i}`, { pad: "p".repeat(100) }));
    for (let i = 0; i < 200; i += 10) await appendEvents(log, events.slice(i, i + 10));
    expect(log.segments().length).toBeGreaterThan(5);
    const a = await drain(log, "a", 200, { maxBatch: 7 });
    expect(a.got.map((e) => e.event_id)).toEqual(events.map((e) => e.event_id));
    // Group "a" alone has consumed everything: only the active segment remains.
    expect(log.segments()).toHaveLength(1);
    const files = (await fs.readdir(dir)).filter((f) => f.endsWith(".log"));
    expect(files).toHaveLength(1);
    await log.close();

    log = await openLog(dir, { segmentBytes: 4096 });
    expect(log.endOffset()).toBe(200);
    await appendEvents(log, [ev("after")]);
    const b = await drain(log, "a", 1);
    expect(b.got.map((e) => e.event_id)).toEqual(["after"]);
  });

  it("follows the active segment as it is sealed and a new one starts (live consumer)", async () => {
    const log = await openLog(await tempDir(), { segmentBytes: 2048 });
    const seen: string[] = [];
    const consumer = await consumeEvents(log, { group: "live", maxBatch: 3, maxWaitMs: 0, handler: async (b) => void seen.push(...b.map((e) => e.event_id)) });
    const ids: string[] = [];
    for (let i = 0; i < 150; i++) {
      ids.push(`l${i}`);
      await appendEvents(log, [ev(`l${i}`, { pad: "p".repeat(60) })]);
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 2));
    }
    await waitFor(async () => seen.length >= 150);
    await consumer.stop();
    expect(log.segments().length).toBeLessThan(3);
    expect(seen).toEqual(ids);
  });

  it("keeps segments a slower group still needs", async () => {
    const log = await openLog(await tempDir(), { segmentBytes: 4096 });
    await drain(log, "slow", 0); // registers the group at offset 0
    for (let i = 0; i < 100; i++) await appendEvents(log, [ev(`k${i}`, { pad: "p".repeat(100) })]);
    await drain(log, "fast", 100);
    const before = log.segments().length;
    expect(before).toBeGreaterThan(2);
    const slow = await drain(log, "slow", 100);
    expect(slow.got).toHaveLength(100);
    expect(log.segments()).toHaveLength(1);
  });

  it("lets only one process open a directory, and takes over a stale lock", async () => {
    const dir = await tempDir();
    const log = await openLog(dir);
    await expect(openFileLog(dir, { logger: quiet })).rejects.toThrow(/in use/);
    await log.close();
    // A LOCK left behind by a process that died (pid that cannot exist).
    await fs.writeFile(path.join(dir, "LOCK"), JSON.stringify({ pid: 2 ** 22 + 7, startTime: "1", host: os.hostname() }));
    const again = await openLog(dir);
    expect(again.endOffset()).toBe(0);
  });

  it("refuses appends after close with Unavailable", async () => {
    const log = await openLog(await tempDir());
    await log.close();
    await expect(appendEvents(log, [ev("late")])).rejects.toMatchObject({ _tag: "Unavailable" });
  });

  it("keeps every acknowledged event after kill -9, in order, none twice", async () => {
    const dir = await tempDir();
    const acked = new Map<string, number>(); // "round:writer" → highest acknowledged seq
    const fixture = path.join(import.meta.dirname, "testing", "crash-appender.ts");
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, ["--import", "tsx", fixture, dir, "8", String(round)], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      let buffered = "";
      let ready!: () => void;
      const isReady = new Promise<void>((r) => (ready = r));
      child.stdout.on("data", (chunk: Buffer) => {
        buffered += chunk.toString("utf8");
        const lines = buffered.split("\n");
        buffered = lines.pop()!;
        for (const line of lines) {
          if (line === "ready") { ready(); continue; }
          const i = line.lastIndexOf(":");
          const key = line.slice(0, i);
          acked.set(key, Math.max(acked.get(key) ?? -1, Number(line.slice(i + 1))));
        }
      });
      const exited = new Promise((r) => child.on("exit", r));
      await isReady;
      await new Promise((r) => setTimeout(r, 300 + round * 200));
      child.kill("SIGKILL");
      await exited;
    }
    expect(acked.size).toBe(24);

    const log = await openLog(dir);
    const total = log.endOffset();
    const { got } = await drain(log, "verify", total, { maxBatch: 5000 });
    const ids = got.map((e) => e.event_id);
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(ids.length); // none twice
    // Per writer, the log holds seqs 0, 1, 2, ... in order (nothing missing, nothing reordered) ...
    const next = new Map<string, number>();
    for (const id of ids) {
      const i = id.lastIndexOf(":");
      const key = id.slice(0, i);
      expect(Number(id.slice(i + 1))).toBe(next.get(key) ?? 0);
      next.set(key, (next.get(key) ?? 0) + 1);
    }
    // ... and reaches at least every acknowledged seq.
    for (const [key, seq] of acked) expect(next.get(key) ?? 0).toBeGreaterThan(seq);
  }, 60_000);
});
