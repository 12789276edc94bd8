import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { loadConfig } from "../core/config.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { memberRevocation, REALTIME_REVOKE_CHANNEL, REALTIME_SUBPROTOCOL, signRealtimeToken, TOKEN_PROTOCOL_PREFIX } from "../core/tokens.js";
import { startGateway, type Gateway } from "./server.js";
import { loadNativeUws } from "./engines/uws-native.js";
import { uwsEngine } from "./engines/uws.js";
import { wsEngine } from "./engines/ws.js";
import type { Engine } from "./engines/types.js";

const SECRET = "test-secret-0123456789abcdef";

const SID = "test-session-0123456789";
const token = (uid: number, secret = SECRET, sid = SID) => signRealtimeToken(secret, uid, sid).token;

/** A real WebSocket client (offering the token as a subprotocol, as browsers do) that records every frame and how it closed. */
function connect(url: string, tok?: string) {
  const ws = new WebSocket(url, tok === undefined ? [REALTIME_SUBPROTOCOL] : [REALTIME_SUBPROTOCOL, `${TOKEN_PROTOCOL_PREFIX}${tok}`]);
  const frames: any[] = [];
  const waiters: { pred: (f: any) => boolean; resolve: (f: any) => void }[] = [];
  ws.on("message", (data) => {
    const f = JSON.parse(data.toString());
    frames.push(f);
    for (const w of [...waiters]) if (w.pred(f)) { waiters.splice(waiters.indexOf(w), 1); w.resolve(f); }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const next = (pred: (f: any) => boolean, ms = 3000) =>
    new Promise<any>((resolve, reject) => {
      const hit = frames.find(pred);
      if (hit) return resolve(hit);
      const t = setTimeout(() => reject(new Error("timed out waiting for a frame; got " + JSON.stringify(frames))), ms);
      waiters.push({ pred, resolve: (f) => { clearTimeout(t); resolve(f); } });
    });
  return { ws, frames, closed, next, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}

async function subscribed(gw: Gateway, uid: number, sid = SID) {
  const c = connect(`${gw.url}/ws`, token(uid, SECRET, sid));
  await c.next((f) => f.type === "hello");
  c.send({ type: "subscribe", channel: `user.${uid}` });
  await c.next((f) => f.type === "subscribed");
  return c;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const native = loadNativeUws();
/** Both engines pass the same suite; `uws` only where its native build loads for this Node.js. */
const ENGINES: [string, Engine | undefined][] = [
  ["ws", wsEngine],
  ["uws", native.ok ? uwsEngine(native.uws) : undefined],
];

describe.each(ENGINES)("realtime gateway (%s engine)", (name, engine) => {
  if (!engine) {
    it.skip(`needs uWebSockets.js's native build: ${native.ok ? "" : native.why}`, () => {});
    return;
  }
  let dir: string;
  let ports: Ports;
  let gw: Gateway;

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-gw-"));
    const config = loadConfig({ RUNWATCH_DATA_DIR: dir, RUNWATCH_GATEWAY_PORT: "0", LOG_LEVEL: "error" });
    ports = await openPorts(config, ["pubsub"]);
    gw = await startGateway(ports, config, { sessionSecret: SECRET, maxBackpressure: 64 * 1024, engine });
    expect(gw.engine).toBe(name);
  });
  afterAll(async () => {
    await gw?.close();
    await ports?.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it("a valid token receives its own user's messages, verbatim and in order", async () => {
    const c = await subscribed(gw, 7);
    expect(c.frames[0]).toMatchObject({ type: "hello", user_id: 7, channel: "user.7" });
    for (let i = 0; i < 5; i++) await ports.pubsub.publish("user.7", JSON.stringify({ type: "event", user_id: 7, seq: i }));
    await c.next((f) => f.seq === 4);
    expect(c.frames.filter((f) => f.type === "event").map((f) => f.seq)).toEqual([0, 1, 2, 3, 4]);
    c.ws.close();
  });

  it("a second user receives nothing of the first user's messages", async () => {
    const a = await subscribed(gw, 101);
    const b = await subscribed(gw, 102);
    for (let i = 0; i < 20; i++) await ports.pubsub.publish("user.101", JSON.stringify({ type: "event", user_id: 101, seq: i }));
    await ports.pubsub.publish("user.102", JSON.stringify({ type: "event", user_id: 102, marker: true }));
    await a.next((f) => f.seq === 19);
    await b.next((f) => f.marker === true);
    await sleep(100);
    expect(b.frames.filter((f) => f.type === "event")).toEqual([{ type: "event", user_id: 102, marker: true }]);
    expect(a.frames.some((f) => f.user_id === 102)).toBe(false);
    a.ws.close();
    b.ws.close();
  });

  it("refuses a subscription to another user's channel with an error frame and close 4403", async () => {
    const c = connect(`${gw.url}/ws`, token(201));
    await c.next((f) => f.type === "hello");
    c.send({ type: "subscribe", channel: "user.202" });
    const err = await c.next((f) => f.type === "error");
    expect(err.error.code).toBe("forbidden_channel");
    expect((await c.closed).code).toBe(4403);
    // And nothing published to the victim reaches the closed socket.
    await ports.pubsub.publish("user.202", JSON.stringify({ type: "event", user_id: 202 }));
    await sleep(50);
    expect(c.frames.some((f) => f.type === "event")).toBe(false);
  });

  it.each([
    ["missing", "", "missing_token"],
    ["forged (signed with another secret)", token(1, "another-secret"), "invalid_token"],
    ["tampered", token(1).replace(/^./, (ch) => (ch === "e" ? "f" : "e")), "invalid_token"],
    ["expired", signRealtimeToken(SECRET, 1, SID, 60, Date.now() - 61_000).token, "expired_token"],
    ["garbage", "not-a-token", "invalid_token"],
  ])("refuses a %s token with an error frame and close 4401", async (_name, tok, code) => {
    const c = connect(`${gw.url}/ws`, tok || undefined);
    const err = await c.next((f) => f.type === "error");
    expect(err.error.code).toBe(code);
    expect((await c.closed).code).toBe(4401);
    expect(c.frames.some((f) => f.type === "hello")).toBe(false);
  });

  it("ignores a token in the URL (it must not travel where proxies log it)", async () => {
    const c = connect(`${gw.url}/ws?token=${encodeURIComponent(token(9))}`);
    expect((await c.next((f) => f.type === "error")).error.code).toBe("missing_token");
    expect((await c.closed).code).toBe(4401);
  });

  it("answers with its own subprotocol only, never echoing the token back", async () => {
    const c = connect(`${gw.url}/ws`, token(10));
    await c.next((f) => f.type === "hello");
    expect(c.ws.protocol).toBe(REALTIME_SUBPROTOCOL);
    c.ws.close();
  });

  it("a logout closes that session's sockets and its tokens open nothing more; other sessions stay (security row i)", async () => {
    const mine = await subscribed(gw, 11, "session-to-end-0123456789");
    const other = await subscribed(gw, 11, "another-session-0123456789");
    const leaked = token(11, SECRET, "session-to-end-0123456789");
    await ports.pubsub.publish(REALTIME_REVOKE_CHANNEL, "session-to-end-0123456789");
    expect((await mine.next((f) => f.type === "error")).error.code).toBe("session_ended");
    expect((await mine.closed).code).toBe(4401);
    const again = connect(`${gw.url}/ws`, leaked);
    expect((await again.next((f) => f.type === "error")).error.code).toBe("session_ended");
    await ports.pubsub.publish("user.11", JSON.stringify({ type: "event", user_id: 11, after: true }));
    await other.next((f) => f.after === true);
    other.ws.close();
  });

  it("a project token grants the project's channel only; removing the member closes their sockets and refuses their tokens of it", async () => {
    const projectToken = (uid: number, pid: number) => signRealtimeToken(SECRET, uid, SID, 60, Date.now(), pid).token;
    const member = connect(`${gw.url}/ws`, projectToken(21, 900));
    expect((await member.next((f) => f.type === "hello")).channel).toBe("project.900");
    member.send({ type: "subscribe", channel: "project.900" });
    await member.next((f) => f.type === "subscribed");
    const colleague = connect(`${gw.url}/ws`, projectToken(22, 900));
    await colleague.next((f) => f.type === "hello");
    colleague.send({ type: "subscribe", channel: "project.900" });
    await colleague.next((f) => f.type === "subscribed");
    await ports.pubsub.publish("project.900", JSON.stringify({ type: "events", project_id: 900, n: 1 }));
    await member.next((f) => f.n === 1);
    // Another project's channel, or the user channel, is not what this token grants.
    const nosy = connect(`${gw.url}/ws`, projectToken(23, 900));
    await nosy.next((f) => f.type === "hello");
    nosy.send({ type: "subscribe", channel: "project.901" });
    expect((await nosy.next((f) => f.type === "error")).error.code).toBe("forbidden_channel");

    await ports.pubsub.publish(REALTIME_REVOKE_CHANNEL, memberRevocation(21, 900));
    expect((await member.next((f) => f.type === "error")).error.code).toBe("not_a_member");
    expect((await member.closed).code).toBe(4403);
    const again = connect(`${gw.url}/ws`, projectToken(21, 900));
    expect((await again.next((f) => f.type === "error")).error.code).toBe("not_a_member");
    // The colleague stays, and the removed member's token of another project still opens.
    await ports.pubsub.publish("project.900", JSON.stringify({ type: "events", project_id: 900, n: 2 }));
    await colleague.next((f) => f.n === 2);
    const elsewhere = connect(`${gw.url}/ws`, projectToken(21, 901));
    expect((await elsewhere.next((f) => f.type === "hello")).channel).toBe("project.901");
    for (const c of [colleague, elsewhere]) c.ws.close();
  });

  it("closes a client that sends an unknown frame", async () => {
    const c = connect(`${gw.url}/ws`, token(5));
    await c.next((f) => f.type === "hello");
    c.ws.send("{nope");
    expect((await c.next((f) => f.type === "error")).error.code).toBe("bad_message");
    expect((await c.closed).code).toBe(4400);
  });

  it("hostile frames (near-miss channels, binary, oversized, deep JSON, a flood) get an error and a close; nothing leaks and the gateway serves on", async () => {
    const victim = await subscribed(gw, 401);
    const nearMisses = ["user.401", "user.0401", "user.401 ", " user.401", "USER.401", "user.401\u0000", "user.401.x", "user.4010", "user.40", "user.+401",
      "user.4.01e2", "user.401\ud800", "user.*", "user.>", "user.", "", "x".repeat(3_000)];
    const attackers = await Promise.all(nearMisses.map(async (channel) => {
      const c = connect(`${gw.url}/ws`, token(402));
      await c.next((f) => f.type === "hello");
      c.send({ type: "subscribe", channel });
      return { channel, c };
    }));
    for (const { channel, c } of attackers) {
      expect((await c.next((f) => f.type === "error")).error.code, JSON.stringify(channel)).toBe("forbidden_channel");
      expect((await c.closed).code).toBe(4403);
    }
    const hostile: (string | Buffer)[] = [Buffer.from([0xff, 0xfe, 0x00]), "[]", "null", "42", '"subscribe"', '{"type":"subscribe","channel":401}',
      '{"type":"subscribe","channel":["user.402"]}', "{\"a\":".repeat(2_000) + "1" + "}".repeat(2_000), "x".repeat(5_000), '{"type":"__proto__"}'];
    for (const data of hostile) {
      const c = connect(`${gw.url}/ws`, token(402));
      await c.next((f) => f.type === "hello");
      c.ws.send(data);
      const closed = await c.closed;
      // A frame past maxPayloadLength (4 KiB): uWS cuts the connection without a close frame (1006 on this side), ws
      // closes with 1009 (message too big).
      const expected = Buffer.byteLength(data) > 4 * 1024 ? [1006, 1009] : [4400];
      expect(expected, `${String(data).slice(0, 40)} closed with ${closed.code}`).toContain(closed.code);
    }
    // A flood of pings from one client does not stop another's delivery.
    const flooder = await subscribed(gw, 403);
    for (let i = 0; i < 2_000; i++) flooder.send({ type: "ping" });
    await ports.pubsub.publish("user.401", JSON.stringify({ type: "event", user_id: 401, after: true }));
    await victim.next((f) => f.after === true);
    expect(attackers.some(({ c }) => c.frames.some((f) => f.type === "event"))).toBe(false);
    flooder.ws.close();
    victim.ws.close();
  });

  it("answers application pings", async () => {
    const c = await subscribed(gw, 8);
    c.send({ type: "ping" });
    await c.next((f) => f.type === "pong");
    c.ws.close();
  });

  it("drops a slow consumer instead of buffering without bound, while a fast one keeps up", async () => {
    const fast = await subscribed(gw, 301);
    const slow = await subscribed(gw, 301);
    const before = gw.connections();
    // Stop reading: the kernel buffers fill, then the engine buffers up to maxBackpressure (64 KiB), then drops.
    (slow.ws as any)._socket.pause();
    const chunk = "x".repeat(16 * 1024);
    let sent = 0;
    let slowClosed = false;
    slow.closed.then(() => { slowClosed = true; });
    const deadline = Date.now() + 20_000;
    while (gw.connections() === before && Date.now() < deadline) {
      for (let i = 0; i < 64; i++) await ports.pubsub.publish("user.301", JSON.stringify({ type: "event", seq: sent++, chunk }));
      await sleep(5);
    }
    expect(gw.connections()).toBe(before - 1);
    // The fast consumer got everything that was published.
    await fast.next((f) => f.seq === sent - 1, 10_000);
    expect(fast.frames.filter((f) => f.type === "event").length).toBe(sent);
    (slow.ws as any)._socket.resume();
    await slow.closed;
    expect(slowClosed).toBe(true);
    // The slow socket received far fewer than were published: it was cut off, not buffered.
    expect(slow.frames.filter((f) => f.type === "event").length).toBeLessThan(sent);
    fast.ws.close();
  }, 40_000);

  it("serves /health", async () => {
    const res = await fetch(gw.url.replace("ws://", "http://") + "/health");
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: "ok", engine: name });
  });
});
