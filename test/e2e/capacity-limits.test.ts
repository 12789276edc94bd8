/**
 * Capacity before authentication, against `runwatch start` as a child process (docs/SECURITY.md, capacity):
 * keyless OTLP/gRPC calls are ended when their metadata arrives, before their 16 MiB messages are read, and reset
 * so their senders stop; idle connections to the gRPC port are closed; a valid key is taken while unknown keys pour
 * in from its address, over HTTP and gRPC; X-Forwarded-For picks the throttled address only through
 * RUNWATCH_TRUSTED_PROXIES.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import http2 from "node:http2";
import net from "node:net";
import * as grpc from "@grpc/grpc-js";
import { Agent, type Dispatcher, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childServerWithAccount, json, runwatchCli } from "./harness.js";
import { exportProtobuf, hexId, traceExportClient } from "./otlp-fixtures.js";
import { TRACE_EXPORT_PATH } from "../../web/otlp/grpc-server.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

async function server(extra: Record<string, string> = {}) {
  const s = await childServerWithAccount("cap", extra, children, dirs);
  return { ...s, grpcPort: Number(s.env.RUNWATCH_OTLP_GRPC_PORT) };
}

const rssMiB = async (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(await fs.readFile(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A gRPC Export over raw HTTP/2 that announces a message of `length` bytes and sends all but its last byte. */
function withholdingCall(session: http2.ClientHttp2Session, length: number, headers: Record<string, string> = {}) {
  const stream = session.request({ ":method": "POST", ":path": TRACE_EXPORT_PATH, "content-type": "application/grpc", te: "trailers", ...headers });
  const status = new Promise<string>((resolve) => {
    stream.on("trailers", (t) => resolve(String(t["grpc-status"])));
    stream.on("response", (h) => { if (h["grpc-status"] !== undefined) resolve(String(h["grpc-status"])); });
    stream.on("close", () => resolve("closed"));
    stream.on("error", () => resolve("error"));
  });
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(length, 1);
  stream.write(prefix);
  const chunk = Buffer.alloc(256 * 1024, 0x41);
  let sent = 0;
  const pump = () => {
    while (sent < length - 1) {
      const n = Math.min(chunk.length, length - 1 - sent);
      sent += n;
      if (!stream.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void stream.once("drain", pump);
    }
  };
  pump();
  /** The stream's RST_STREAM code once the server has reset it (its "close"), or "open" while it is not. */
  const reset = () => (stream.closed ? stream.rstCode : "open");
  return { stream, status, reset };
}

const guess = (url: string, i: number, xff?: string, dispatcher?: Dispatcher) =>
  undiciFetch(`${url}/api/runs`, { dispatcher, headers: { authorization: `Bearer ${i.toString(16).padStart(64, "d")}`, ...(xff ? { "x-forwarded-for": xff } : {}) } }).then((r) => r.status);

/**
 * Client addresses of this run's own. In scale mode the failed-key budgets are in Redis, shared by every server of
 * the suite and by a rerun within the minute, so a test that counts a budget from its start uses addresses no other
 * test sends from: a loopback source address (127.0.0.0/8 all reaches the server) or a documentation IPv6 address.
 */
const rand = () => 1 + Math.floor(Math.random() * 254);
const ownLoopback = () => new Agent({ localAddress: `127.${rand()}.${rand()}.${rand()}` });
const ownForwarded = () => `2001:db8::${rand().toString(16)}:${rand().toString(16)}:${rand().toString(16)}`;

describe("an https public URL, no trusted proxies: OTLP/gRPC limits before authentication; X-Forwarded-For ignored", () => {
  let s: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => {
    s = await server({ RUNWATCH_OTLP_GRPC_IDLE_MS: "2000", RUNWATCH_PUBLIC_URL: "https://runwatch.example.com", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "2000" });
  });

  it("X-Forwarded-For is ignored: rotating it does not slip past the failed-key throttle", async () => {
    const statuses: number[] = [];
    const from = ownLoopback();
    for (let i = 0; i < 40; i++) statuses.push(await guess(s.url, i, `198.51.100.${i}`, from));
    await from.close();
    expect(statuses.slice(0, 30).every((x) => x === 401)).toBe(true);
    expect(statuses.slice(30).every((x) => x === 429)).toBe(true);
  });

  it("50 keyless calls each withholding the last byte of a 16 MiB message are refused at once, then reset so the senders stop; RSS grows < 100 MiB", async () => {
    const before = await rssMiB(s.child.pid!);
    const sessions = Array.from({ length: 5 }, () => http2.connect(`http://127.0.0.1:${s.grpcPort}`));
    for (const session of sessions) session.on("error", () => {});
    const calls = Array.from({ length: 50 }, (_, i) => withholdingCall(sessions[i % 5]!, 16 * 1024 * 1024 - 16));
    const statuses = await Promise.race([Promise.all(calls.map((c) => c.status)), sleep(10_000).then(() => "timeout")]);
    expect(statuses).not.toBe("timeout");
    expect(new Set(statuses as string[])).toEqual(new Set([String(grpc.status.UNAUTHENTICATED)]));
    // The status is followed by RST_STREAM NO_ERROR: the sender stops, rather than the server reading and dropping the
    // rest of its 16 MiB (a half-open stream it would otherwise keep).
    for (const end = Date.now() + 5_000; calls.some((c) => c.reset() === "open") && Date.now() < end;) await sleep(50);
    expect(calls.map((c) => c.reset())).toEqual(calls.map(() => http2.constants.NGHTTP2_NO_ERROR));
    await sleep(500);
    const after = await rssMiB(s.child.pid!);
    expect(after - before).toBeLessThan(100);
    for (const session of sessions) session.destroy();
  }, 60_000);

  it("idle connections — 200 at once, raw TCP or only the HTTP/2 preface — are each closed by RUNWATCH_OTLP_GRPC_IDLE_MS", async () => {
    const idleMs = 2_000; // the server's setting above
    const open = new Set<net.Socket>();
    const times: { connected: number; heard?: number; closed?: number }[] = [];
    const connect = (preface: boolean) => new Promise<void>((resolve) => {
      const t: (typeof times)[number] = { connected: 0 };
      times.push(t);
      const sock = net.connect(s.grpcPort, "127.0.0.1", () => {
        t.connected = performance.now();
        open.add(sock);
        if (preface) sock.write("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\x00\x00\x00\x04\x00\x00\x00\x00\x00");
        resolve();
      });
      // The server's first bytes (its HTTP/2 SETTINGS) come once it has taken the connection and started its timer.
      sock.on("data", () => { t.heard ??= performance.now(); });
      sock.on("error", () => {});
      sock.on("close", () => {
        t.closed = performance.now();
        open.delete(sock);
      });
    });
    await Promise.all(Array.from({ length: 200 }, (_, i) => connect(i % 2 === 0)));
    expect(open.size).toBe(200);
    for (const end = Date.now() + 3 * idleMs; open.size > 0 && Date.now() < end;) await sleep(100);
    expect(open.size).toBe(0);
    // Every connection's timer started by the last first bytes heard: each is closed by then + the limit (+ a loaded
    // machine's timer delay). grpc-js's own timer re-armed a connection accepted in a burst for a whole period when
    // it fired a few milliseconds short, and such a connection stayed open for twice the limit.
    expect(times.every((t) => t.heard !== undefined)).toBe(true);
    const lastHeard = Math.max(...times.map((t) => t.heard!));
    const late = times.filter((t) => t.closed! > lastHeard + idleMs + 750);
    expect(late.length, `${late.length} closed ${late.map((t) => Math.round(t.closed! - t.connected)).join(", ")} ms after they connected`).toBe(0);
    // And none before its limit.
    expect(Math.min(...times.map((t) => t.closed! - t.connected))).toBeGreaterThan(idleMs - 100);
  }, 30_000);

  it("a valid key is taken over gRPC while 100 unknown keys come from its address", async () => {
    const client = new grpc.Client(`127.0.0.1:${s.grpcPort}`, grpc.credentials.createInsecure());
    const exportWith = (key: string) => new Promise<number>((resolve) => {
      const md = new grpc.Metadata();
      md.set("authorization", `Bearer ${key}`);
      client.makeUnaryRequest(TRACE_EXPORT_PATH, (b: Buffer) => b, (b: Buffer) => b, Buffer.alloc(0), md, (err) => resolve(err ? err.code! : grpc.status.OK));
    });
    const unknown = await Promise.all(Array.from({ length: 100 }, (_, i) => exportWith(i.toString(16).padStart(64, "a"))));
    expect(unknown.filter((c) => c === grpc.status.RESOURCE_EXHAUSTED).length).toBeGreaterThan(0);
    expect(unknown.every((c) => c === grpc.status.UNAUTHENTICATED || c === grpc.status.RESOURCE_EXHAUSTED)).toBe(true);
    expect(await exportWith(s.key)).toBe(grpc.status.OK);
    client.close();
  });

  it("the quota in events and spans per user (2,000 a minute here) refuses with 429 + Retry-After on every receiver, and only that user", async () => {
    const newUser = (name: string) => {
      const email = `${name}-${Date.now()}@example.com`;
      runwatchCli({ ...s.env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", email, "--name", name);
      return runwatchCli(s.env, "key", "create", "--email", email, "--name", name);
    };
    const key = newUser("quota");
    const events = Array.from({ length: 1000 }, (_, i) => ({ event_type: "step", sdk_run_id: "quota-run", span_id: `s-${i}`, payload: { node_name: "plan", phase: "end", i } }));
    const batch = await fetch(`${s.url}/api/ingest/batch`, json(key, { events }));
    expect(batch.status).toBe(207);
    expect(await batch.json()).toMatchObject({ accepted: 1000, rejected: 0 });
    const trace = (n: number) => {
      const traceId = hexId(16);
      return exportProtobuf(Array.from({ length: n }, (_, i) => ({ traceId, spanId: hexId(8), name: `span ${i}` })));
    };
    const otlp = (n: number) => fetch(`${s.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/x-protobuf", authorization: `Bearer ${key}` }, body: trace(n) as BodyInit });
    expect((await otlp(500)).status).toBe(200); // 1,500 of 2,000
    const refused = await otlp(600);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    // A refused request spends none of the quota (the count is of what was taken): the rest still fits.
    expect((await otlp(500)).status).toBe(200); // 2,000 of 2,000
    const single = await fetch(`${s.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "quota-late", agent_name: "quota", payload: {} }));
    expect(single.status).toBe(429);
    expect(((await single.json()) as { error: { message: string } }).error.message).toMatch(/quota of 2000 events and spans per minute/);
    const grpcClient = traceExportClient(`127.0.0.1:${s.grpcPort}`);
    expect((await grpcClient.send(trace(5), key))?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    grpcClient.close();
    // Another user's budget is its own.
    const other = newUser("quota-other");
    expect((await fetch(`${s.url}/api/ingest`, json(other, { event_type: "run_start", sdk_run_id: "other", agent_name: "quota", payload: {} }))).status).toBe(202);
  });
});

describe("RUNWATCH_TRUSTED_PROXIES=127.0.0.1: the failed-key throttle never refuses a valid key; X-Forwarded-For honoured", () => {
  let s: Awaited<ReturnType<typeof server>>;
  beforeAll(async () => { s = await server({ RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000", RUNWATCH_TRUSTED_PROXIES: "127.0.0.1" }); });

  it("past the budget unknown keys get 429, while the valid key from the same address — cached or not — gets 202", async () => {
    const post = (key: string, i: number) => fetch(`${s.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: `nat-${i}`, agent_name: "nat", payload: {} }));
    expect((await post(s.key, 0)).status).toBe(202);
    const statuses = await Promise.all(Array.from({ length: 100 }, (_, i) => post(i.toString(16).padStart(64, "b"), i).then((r) => r.status)));
    expect(statuses.filter((x) => x === 429).length).toBeGreaterThan(0);
    // Interleaved with more guesses, the valid key is taken every time.
    const mixed = await Promise.all(Array.from({ length: 40 }, (_, i) => post(i % 2 ? s.key : i.toString(16).padStart(64, "c"), 1000 + i).then((r) => [i % 2, r.status])));
    for (const [valid, status] of mixed) expect(status).toBe(valid ? 202 : 429);
  });

  it("a valid key never used before (so not cached) is looked up and taken from the throttled address", async () => {
    const res = await fetch(`${s.url}/api/ingest`, json(s.unusedKey, { event_type: "run_start", sdk_run_id: "nat-fresh", agent_name: "nat", payload: {} }));
    expect(res.status).toBe(202);
  });

  it("X-Forwarded-For is honoured through the trusted proxy: each client address has its own budget", async () => {
    const [first, second] = [ownForwarded(), ownForwarded()];
    const a: number[] = [];
    for (let i = 0; i < 32; i++) a.push(await guess(s.url, i, first));
    expect(a.slice(30)).toEqual([429, 429]);
    // Another client behind the same proxy is not throttled by the first one's guesses.
    expect(await guess(s.url, 99, second)).toBe(401);
    // A client cannot pick its address by writing its own header: the proxy's entry (rightmost) counts.
    expect(await guess(s.url, 100, `${second}, ${first}`)).toBe(429);
  });
});
