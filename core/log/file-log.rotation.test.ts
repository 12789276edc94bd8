/**
 * Rotation while a consumer lags: the reader must never learn a segment's extent from the file itself.
 *
 * A group commit is one pwrite of many records. While it runs, fstat on the file already reports a size part-way
 * through it (the kernel grows the size page by page as it copies; on this machine a thread polling fstat during
 * 8 MiB pwrites saw a partial size in a third of its checks), and pwriteAll may also legitimately complete in
 * several short writes. fs-io is wrapped here so that one write stops half-way, deterministically, at the moment
 * a lagging consumer opens the segment.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { LoggedEvent } from "../events/schema.js";
import type { Logger } from "../logger.js";
import { openFileLog, type FileLog } from "./file-log.js";
import { encodeRecords } from "./framing.js";
import { appendEvents, consumeEvents } from "./events.js";

/** When set, the next pwriteAll longer than `split` writes `split` bytes, waits for `resume`, then writes the rest. */
let armed: { split: number; paused: () => void; resume: Promise<void> } | null = null;

vi.mock("./fs-io.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("./fs-io.js")>();
  return {
    ...real,
    async pwriteAll(fd: number, pieces: readonly Uint8Array[], position: number): Promise<void> {
      const g = armed;
      const buf = Buffer.concat(pieces);
      if (g === null || buf.length <= g.split) return real.pwriteAll(fd, pieces, position);
      armed = null;
      await real.pwriteAll(fd, [buf.subarray(0, g.split)], position); // a short write: the rest follows later
      g.paused();
      await g.resume;
      await real.pwriteAll(fd, [buf.subarray(g.split)], position + g.split);
    },
  };
});

interface Captured {
  level: string;
  msg: string;
  err?: string;
}

function capturingLogger(into: Captured[]): Logger {
  const put = (level: string) => (msg: string, fields?: Record<string, unknown>) => {
    const err = fields?.err;
    into.push({ level, msg, ...(err !== undefined ? { err: err instanceof Error ? err.message : String(err) } : {}) });
  };
  const l: Logger = { debug: () => {}, info: () => {}, warn: put("warn"), error: put("error"), child: () => l };
  return l;
}

const dirs: string[] = [];
const logs: FileLog[] = [];
afterEach(async () => {
  armed = null;
  for (const l of logs.splice(0)) await l.close();
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

function ev(i: number, pad = 200): LoggedEvent {
  return {
    event_id: `e${i}`,
    project_id: 1, user_id: 1,
    run_id: "00000000-0000-5000-8000-000000000001",
    sdk_run_id: "run-1",
    event_type: "step",
    agent_name: null,
    payload: { i, pad: "p".repeat(pad) },
    occurred_at: "2026-11-23T10:00:00.000Z",
    received_at: "2026-11-23T10:00:00.000Z",
    config_version: null,
  };
}
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => ev(from + k));

async function waitFor(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Bytes of one framed record of the big write below (records 41..79 all encode to the same size). */
const FRAME = encodeRecords([ev(41)]).length;

describe("file log rotation under a lagging consumer", () => {
  it.each([
    ["mid-record", Math.floor(FRAME * 2.5)],
    ["at a record boundary", FRAME * 3],
  ])("reads a segment opened mid-write (%s) and sealed before the consumer caught up: no read error, nothing skipped", async (_, split) => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-log-rot-"));
    dirs.push(dir);
    const logged: Captured[] = [];
    const log = await openFileLog(dir, { segmentBytes: 8 * 1024, logger: capturingLogger(logged), retryBaseMs: 5, retryMaxMs: 20 });
    logs.push(log);

    // Segment 0 fills up and is sealed; segment 40 becomes the active one.
    await appendEvents(log, range(0, 40));
    await waitFor(() => log.segments().length === 2, "the rotation"); // it follows the append's ack
    expect(log.segments()).toEqual([0, 40]);

    const seen: number[] = [];
    let releaseHandler!: () => void;
    let handlerBlocked = new Promise<void>((r) => (releaseHandler = r));
    let blockNext = true;
    const consumer = await consumeEvents(log, {
      group: "pipeline",
      maxBatch: 40,
      maxWaitMs: 0,
      handler: async (batch) => {
        if (blockNext) {
          blockNext = false;
          await handlerBlocked; // the pipeline busy with a slow batch: the consumer lags
        }
        for (const e of batch) seen.push((e.payload as { i: number }).i);
      },
    });
    await waitFor(() => blockNext === false, "the consumer to take the first batch");

    // While it lags: one durable record lands in the new segment, then a big group commit starts and is caught
    // half-way (mid-record) at the moment the consumer moves on and opens the new segment.
    await appendEvents(log, range(40, 41));
    let paused!: () => void;
    const writePaused = new Promise<void>((r) => (paused = r));
    let resume!: () => void;
    armed = { split, paused, resume: new Promise<void>((r) => (resume = r)) };
    const big = appendEvents(log, range(41, 80));
    await writePaused;

    // Release the first batch; the consumer commits it, reads on, opens segment 40 (its file now ends mid-record)
    // and takes record 40, the only durable one there; hold it on that batch.
    const releaseFirst = releaseHandler;
    blockNext = true;
    handlerBlocked = new Promise<void>((r) => (releaseHandler = r));
    releaseFirst();
    await waitFor(() => seen.length === 40 && blockNext === false, "the consumer to read record 40");

    // The big write completes; the segment is sealed (past segmentBytes) and a new one starts.
    resume();
    await big;
    await appendEvents(log, range(80, 120)); // queued behind the rotation, so it lands in segment 80
    expect(log.segments().slice(0, 2)).toEqual([40, 80]);

    // The consumer resumes in the sealed segment from the record after 40.
    releaseHandler();
    await waitFor(() => seen.length >= 120, `all 120 records (got ${seen.length})`);
    await consumer.stop();

    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => i));
    const problems = logged.filter((l) => l.level === "error" || /read failed|missing|unreadable/.test(`${l.msg} ${l.err ?? ""}`));
    expect(problems).toEqual([]);
  });
});

describe("file log consumer resilience", () => {
  it("keeps consuming when its loop hits an unexpected error (here: the logger throws while reporting a handler failure)", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-log-rot-"));
    dirs.push(dir);
    let throwsLeft = 3;
    const logged: Captured[] = [];
    const inner = capturingLogger(logged);
    const flaky: Logger = {
      ...inner,
      warn: (msg, fields) => {
        if (throwsLeft-- > 0) throw new TypeError("Do not know how to serialize a BigInt");
        inner.warn(msg, fields);
      },
      child: () => flaky,
    };
    const log = await openFileLog(dir, { logger: flaky, retryBaseMs: 2, retryMaxMs: 10 });
    logs.push(log);
    await appendEvents(log, range(0, 10));
    const seen: number[] = [];
    let failures = 2;
    const consumer = await consumeEvents(log, {
      group: "pipeline",
      maxBatch: 4,
      maxWaitMs: 0,
      handler: async (batch) => {
        if (failures-- > 0) throw new Error("storage down (test)");
        for (const e of batch) seen.push((e.payload as { i: number }).i);
      },
    });
    await appendEvents(log, range(10, 20));
    await waitFor(() => seen.length >= 20, "every record despite the failures");
    await consumer.stop();
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await consumer.lag()).toBe(0);
  });

  it("16 concurrent writers of 500-record batches, small segments, a slow consumer: every record once, each batch in order, no read error", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-log-rot-"));
    dirs.push(dir);
    const logged: Captured[] = [];
    // Segments of a few group commits each, so the consumer often opens the active one while a pwrite runs.
    const log = await openFileLog(dir, { segmentBytes: 512 * 1024, logger: capturingLogger(logged), retryBaseMs: 5, retryMaxMs: 20 });
    logs.push(log);
    const seen: number[] = [];
    const consumer = await consumeEvents(log, {
      group: "pipeline",
      maxBatch: 700,
      maxWaitMs: 5,
      handler: async (batch) => {
        for (const e of batch) seen.push((e.payload as { i: number }).i);
        await new Promise((r) => setTimeout(r, 2)); // slower than the writers: it lags behind and crosses rotations
      },
    });
    let next = 0;
    const perWriter = 6;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let k = 0; k < perWriter; k++) {
          const from = next;
          next += 500;
          await appendEvents(log, Array.from({ length: 500 }, (_, j) => ev(from + j, (from + j) % 400)));
        }
      }),
    );
    await waitFor(() => seen.length >= next, `all ${next} records (got ${seen.length})`, 30_000);
    await consumer.stop();
    // Writers append concurrently, so batches interleave in the log, but each batch is contiguous and in order.
    expect(seen).toHaveLength(next);
    expect(new Set(seen).size).toBe(next);
    const outOfOrder = seen.findIndex((v, k) => v % 500 !== 0 && seen[k - 1] !== v - 1);
    expect(outOfOrder).toBe(-1);
    expect(logged.filter((l) => l.level === "error")).toEqual([]);
    expect(log.segments().length).toBeLessThanOrEqual(2);
  });
});
