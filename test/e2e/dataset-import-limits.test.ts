/**
 * Dataset uploads past a bound (docs/EVALUATION.md, Import; docs/SECURITY.md), against `runwatch start` as a child
 * process: a 31 MiB CSV of 16 million one-cell rows, a CSV of 200,000 columns and 32 MiB of JSON Lines, each under
 * the 32 MiB body limit, are answered 422 naming the bound within 2 s — through the API and the dataset page's
 * upload — while /healthz, probed every 50 ms from another process, answers within 200 ms of its slowest answer at
 * rest and the server's RSS grows by less than 200 MiB. A refusal does not wait for the rest of the file, and the
 * connection then serves the next request. A file within the bounds is still imported whole.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ITEMS_PER_WRITE } from "../../stores/datasets/items.js";
import { MAX_IMPORT_COLUMNS } from "../../stores/datasets/import.js";
import { childServerWithAccount, csrfFrom, json, loginJar, until } from "./harness.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
let s: Awaited<ReturnType<typeof childServerWithAccount>>;

beforeAll(async () => {
  s = await childServerWithAccount("imports", { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" }, children, dirs);
  expect((await fetch(`${s.url}/api/datasets`, json(s.key, { name: "uploads" }))).status).toBe(201);
});
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

const MiB = 1024 * 1024;
const rssMiB = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await fs.readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
/** Resolves on the socket's next drain, data or close: a server that answered stops reading and never drains. */
const drainAnswerOrClose = (sock: net.Socket) =>
  new Promise<void>((resolve) => {
    const done = () => {
      sock.off("drain", done).off("data", done).off("close", done);
      resolve();
    };
    sock.on("drain", done).on("data", done).on("close", done);
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The hostile files: each within the 32 MiB body limit, each past another bound. */
const csvRows = () => Buffer.from("input\n" + "a\n".repeat(16_252_928));
const csvColumns = () => Buffer.from(`${Array.from({ length: 200_000 }, (_, i) => `c${i}`).join(",")}\n${"x,".repeat(199_999)}x\n`);
const jsonLines = () => Buffer.from('{"input":"a"}\n'.repeat(Math.floor((32 * MiB) / 14)));

interface Measured {
  readonly status: number;
  readonly body: { error?: { code?: string; field?: string; message?: string } };
  readonly ms: number;
  readonly worstHealthzMs: number;
  readonly probes: number;
  readonly idleHealthzMs: number;
  readonly rssGrowthMiB: number;
}

/**
 * Probes `url` every 50 ms from a process of its own (the test's own sending would delay probes made here) until
 * stop(): each probe's end (Date.now()) and wait in ms, a probe unanswered in 5 s counting as 5 s.
 */
async function healthzProbe(url: string) {
  const script = `
    let done = false;
    process.stdin.on("end", () => (done = true)).resume();
    (async () => {
      process.stdout.write("ready\\n");
      while (!done) {
        const t = performance.now();
        await fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) }).then((r) => r.text(), () => "");
        process.stdout.write(Date.now() + " " + (performance.now() - t) + "\\n");
        await new Promise((r) => setTimeout(r, 50));
      }
      process.stdout.write("end\\n");
    })();`;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] });
  children.add(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  await until("the probe to start", () => out, (o) => o.includes("ready"), 30_000);
  return {
    async stop(): Promise<{ at: number; ms: number }[]> {
      child.stdin!.end();
      await until("the probe's end", () => out, (o) => o.includes("end"), 30_000);
      return [...out.matchAll(/^(\d+) ([\d.]+)$/gm)].map(([, at, ms]) => ({ at: Number(at), ms: Number(ms) }));
    },
  };
}

/**
 * Sends `send()` while /healthz is probed (healthzProbe) and the server's RSS sampled every 20 ms: what it
 * answered, how long it took, the RSS peak's growth, and the slowest probe answered while it was sent and answered
 * — next to the slowest of the second before, when nothing was sent: that is what this machine's load gives.
 */
async function measured(send: (signal: AbortSignal) => Promise<Response>): Promise<Measured> {
  const before = await rssMiB(s.child.pid!);
  const probe = await healthzProbe(`${s.url}/healthz`);
  await sleep(1_000);
  let done = false;
  let peak = before;
  const rss = (async () => {
    while (!done) {
      peak = Math.max(peak, await rssMiB(s.child.pid!));
      await sleep(20);
    }
  })();
  const sentAt = Date.now();
  const t = performance.now();
  let status = 0;
  let body: Measured["body"] = {};
  try {
    const res = await send(AbortSignal.timeout(10_000));
    status = res.status;
    body = (await res.json()) as Measured["body"];
  } catch {
    // No answer within 10 s: status 0, and the time says how long it was waited for.
  }
  const ms = performance.now() - t;
  await sleep(100);
  done = true;
  await rss;
  const probes = await probe.stop();
  const worst = (list: { ms: number }[]) => Math.max(0, ...list.map((p) => p.ms));
  return {
    status, body, ms, rssGrowthMiB: peak - before,
    worstHealthzMs: worst(probes.filter((p) => p.at >= sentAt)),
    probes: probes.filter((p) => p.at >= sentAt).length,
    idleHealthzMs: worst(probes.filter((p) => p.at < sentAt)),
  };
}

const apiImport = (type: string, file: Buffer) => {
  const body = new Uint8Array(file);
  return (signal: AbortSignal) => fetch(`${s.url}/api/datasets/uploads/import`, { method: "POST", headers: { authorization: `Bearer ${s.key}`, "content-type": type }, body, signal });
};

function expectRefusedInTime(m: Measured, message: RegExp): void {
  expect(m, JSON.stringify({ ...m, body: undefined, message: m.body.error?.message })).toMatchObject({ status: 422, body: { error: { code: "validation_error", field: "body" } } });
  expect(m.body.error!.message).toMatch(message);
  expect(m.ms).toBeLessThan(2_000);
  expect(m.probes).toBeGreaterThan(0);
  // 200 ms more than this machine's own slowest answer at rest (a few ms on a quiet machine; more when others run).
  expect(m.worstHealthzMs).toBeLessThan(200 + m.idleHealthzMs);
  expect(m.rssGrowthMiB).toBeLessThan(200);
}

describe("dataset uploads stop at the first bound, and the instance keeps answering", () => {
  it("a file within the bounds is imported (and warms the server up for the measures below)", async () => {
    const csv = `id,question,expected\n${Array.from({ length: 2_000 }, (_, i) => `q${i},"What is ${i}+${i}?",${2 * i}`).join("\n")}\n`;
    const res = await apiImport("text/csv", Buffer.from(csv))(AbortSignal.timeout(30_000));
    expect([res.status, await res.json()]).toEqual([201, { version: 1, imported: 2_000, changed: 2_000 }]);
  });

  it(`a 31 MiB CSV of 16,252,928 rows: 422, more than ${MAX_ITEMS_PER_WRITE} items`, async () => {
    const file = csvRows();
    expect(file.length).toBeGreaterThan(31 * MiB);
    expectRefusedInTime(await measured(apiImport("text/csv", file)), new RegExp(`more than ${MAX_ITEMS_PER_WRITE} items`));
  });

  it(`a CSV of 200,000 columns: 422, at most ${MAX_IMPORT_COLUMNS} columns`, async () => {
    expectRefusedInTime(await measured(apiImport("text/csv", csvColumns())), new RegExp(`more than ${MAX_IMPORT_COLUMNS} columns; an import may have at most ${MAX_IMPORT_COLUMNS}`));
  });

  it(`32 MiB of JSON Lines: 422, more than ${MAX_ITEMS_PER_WRITE} items`, async () => {
    const file = jsonLines();
    expect(file.length).toBeGreaterThan(32 * MiB - 16);
    expectRefusedInTime(await measured(apiImport("application/x-ndjson", file)), new RegExp(`more than ${MAX_ITEMS_PER_WRITE} items`));
  });

  it("the dataset page's upload: the 31 MiB CSV is refused the same way", async () => {
    const jar = await loginJar(s.url, s.email);
    const csrf = csrfFrom(await (await jar.fetch(`${s.url}/datasets/uploads`)).text());
    const body = new Uint8Array(csvRows());
    const m = await measured((signal) => jar.fetch(`${s.url}/datasets/uploads/upload`, {
      method: "POST", headers: { "content-type": "text/csv", accept: "application/json", "x-csrf-token": csrf }, body, signal,
    }));
    expectRefusedInTime(m, new RegExp(`more than ${MAX_ITEMS_PER_WRITE} items`));
    // Nothing was written by any refusal.
    const dataset = await (await fetch(`${s.url}/api/datasets/uploads`, { headers: { authorization: `Bearer ${s.key}` } })).json();
    expect(dataset.dataset).toMatchObject({ version: 1, item_count: 2_000 });
  });

  it("a refusal is answered before the client has sent the rest of the file, the connection then serves the next request; past 32 MiB without a Content-Length: 413", async () => {
    const head = `input\n${"a\n".repeat(MAX_ITEMS_PER_WRITE + 1)}`;
    const rest = Buffer.from("a\n".repeat(8_000_000));
    const sock = net.connect(Number(new URL(s.url).port), "127.0.0.1");
    let received = "";
    sock.on("data", (d) => (received += d));
    sock.write(`POST /api/datasets/uploads/import HTTP/1.1\r\nhost: runwatch\r\nauthorization: Bearer ${s.key}\r\ncontent-type: text/csv\r\ncontent-length: ${head.length + rest.length}\r\n\r\n${head}`);
    await until("the answer before the rest is sent", () => received, (r) => r.includes("}"), 10_000);
    expect(received).toMatch(/^HTTP\/1\.1 422 /);
    expect(received).toContain(`the file has more than ${MAX_ITEMS_PER_WRITE} items`);
    // The rest is read and dropped by the server; the same connection then takes another request.
    received = "";
    sock.write(rest);
    sock.write("GET /healthz HTTP/1.1\r\nhost: runwatch\r\n\r\n");
    await until("the next answer on the connection", () => received, (r) => r.includes("\r\n\r\n"), 10_000);
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
    sock.destroy();

    // A file within the item bounds but past the byte limit, sent in chunks without a Content-Length: 413 once the
    // limit is read, while the client is still sending; the server drops what follows (a socket closed on unread
    // bytes resets and can lose the answer), so the connection serves the next request once the body ends.
    const chunked = net.connect(Number(new URL(s.url).port), "127.0.0.1");
    let answer = "";
    let closed = false;
    chunked.on("data", (d) => (answer += d));
    chunked.on("error", () => {});
    chunked.on("close", () => (closed = true));
    chunked.write(`POST /api/datasets/uploads/import HTTP/1.1\r\nhost: runwatch\r\nauthorization: Bearer ${s.key}\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n`);
    const lines = `${JSON.stringify({ input: "x".repeat(7_000) })}\n`.repeat(100); // 100 of the 5,000 lines in 34 MiB
    for (let sent = 0; sent < 40 * MiB && !answer && !closed; sent += lines.length) {
      // The answer can come while a write waits for the drain: whichever comes first ends the wait.
      if (!chunked.write(`${lines.length.toString(16)}\r\n${lines}\r\n`)) await drainAnswerOrClose(chunked);
    }
    await until("the answer past the limit", () => answer, (r) => r.includes("}"), 10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toContain(`the file exceeds the limit of ${32 * MiB} bytes`);
    answer = "";
    chunked.write("0\r\n\r\nGET /healthz HTTP/1.1\r\nhost: runwatch\r\n\r\n");
    await until("the next answer on the connection", () => answer, (r) => r.includes("\r\n\r\n"), 10_000);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(closed).toBe(false);
    chunked.destroy();
  });
});
