/**
 * The engine contract (types.ts) for both engines: an error thrown by a handler in an upgrade, at open, in a
 * message or in /health is reported and answered — HTTP 500 for the upgrade, close 1011 for the socket — and the
 * engine keeps serving HTTP and delivering to its other sockets. Hostile raw HTTP on the port changes nothing either.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import net from "node:net";
import WebSocket from "ws";
import { loadNativeUws } from "./uws-native.js";
import { uwsEngine } from "./uws.js";
import { wsEngine } from "./ws.js";
import { loadEngine } from "./choose.js";
import { createLogger } from "../../core/logger.js";
import type { Engine, EngineHandlers, EngineServer, EngineSocket } from "./types.js";

const native = loadNativeUws();
const ENGINES: [string, Engine | undefined][] = [
  ["ws", wsEngine],
  ["uws", native.ok ? uwsEngine(native.uws) : undefined],
];

interface Data { name: string }

/** Handlers that throw on cue: the subprotocol "boom-upgrade", the name "boom-open", the frame "boom". */
function faultyHandlers(errors: string[], healthFails: { on: boolean }): EngineHandlers<Data> {
  return {
    upgrade(offered) {
      if (offered.includes("boom-upgrade")) throw new Error("upgrade failed");
      return { data: { name: offered[0] ?? "" }, protocol: offered[0] ?? "" };
    },
    open(socket) {
      if (socket.data.name === "boom-open") throw new Error("open failed");
      socket.subscribe("all");
      socket.send("hello");
    },
    message(socket, data) {
      const text = Buffer.from(data as ArrayBuffer).toString();
      if (text === "boom") throw new Error("message failed");
      socket.send(`echo ${text}`);
    },
    close() {},
    health() {
      if (healthFails.on) throw new Error("health failed");
      return { status: "ok" };
    },
    error: (where) => { errors.push(where); },
  };
}

function client(url: string, protocol: string) {
  const ws = new WebSocket(url, [protocol]);
  const frames: string[] = [];
  ws.on("message", (d) => frames.push(d.toString()));
  ws.on("error", () => {});
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  const response = new Promise<number>((resolve) => ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0)));
  const until = async (pred: () => boolean, ms = 3000) => {
    const end = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > end) throw new Error(`timed out; frames ${JSON.stringify(frames)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  return { ws, frames, closed, response, until };
}

/** Sends raw bytes and returns what came back before the server closed or 1 s passed. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => s.write(bytes));
    let got = "";
    s.on("data", (d) => { got += d.toString(); });
    s.on("error", () => {});
    const done = () => resolve(got);
    s.on("close", done);
    setTimeout(() => { s.destroy(); done(); }, 1000).unref();
  });
}

describe.each(ENGINES)("gateway engine %s: errors in a WebSocket path are answered, never fatal", (_name, engine) => {
  if (!engine) {
    it.skip(`needs uWebSockets.js's native build: ${native.ok ? "" : native.why}`, () => {});
    return;
  }
  const errors: string[] = [];
  const healthFails = { on: false };
  let server: EngineServer;
  let base: string;

  beforeAll(async () => {
    server = await engine.listen<Data>({
      host: "127.0.0.1", port: 0, path: "/ws",
      limits: { maxPayloadLength: 4096, maxBackpressure: 64 * 1024, idleTimeoutSeconds: 30, maxLifetimeMinutes: 60 },
      handlers: faultyHandlers(errors, healthFails),
    });
    base = `127.0.0.1:${server.port}`;
  });
  afterAll(async () => { await server?.close(); });

  const healthy = async () => {
    const res = await fetch(`http://${base}/health`);
    return res.status === 200 && (await res.json()).status === "ok";
  };

  it("a throwing upgrade is answered 500 with a JSON error; the next upgrade and /health work", async () => {
    const bad = client(`ws://${base}/ws`, "boom-upgrade");
    expect(await bad.response).toBe(500);
    expect(errors).toContain("upgrade");
    const good = client(`ws://${base}/ws`, "fine");
    await good.until(() => good.frames.includes("hello"));
    expect(await healthy()).toBe(true);
    good.ws.close();
  });

  it("a throwing open or message closes that socket with 1011 while another socket keeps receiving", async () => {
    const bystander = client(`ws://${base}/ws`, "bystander");
    await bystander.until(() => bystander.frames.includes("hello"));

    const atOpen = client(`ws://${base}/ws`, "boom-open");
    expect(await atOpen.closed).toBe(1011);
    const inMessage = client(`ws://${base}/ws`, "talker");
    await inMessage.until(() => inMessage.frames.includes("hello"));
    inMessage.ws.send("boom");
    expect(await inMessage.closed).toBe(1011);
    expect(errors).toEqual(expect.arrayContaining(["open", "message"]));

    server.publish("all", "after the errors");
    await bystander.until(() => bystander.frames.includes("after the errors"));
    bystander.ws.send("still here");
    await bystander.until(() => bystander.frames.includes("echo still here"));
    expect(await healthy()).toBe(true);
    bystander.ws.close();
  });

  it("a throwing /health answers 500 and the next one 200", async () => {
    healthFails.on = true;
    expect((await fetch(`http://${base}/health`)).status).toBe(500);
    healthFails.on = false;
    expect(await healthy()).toBe(true);
  });

  it("hostile raw requests on the port (garbage, half upgrades, bad keys, wrong paths) are answered or dropped; it serves on", async () => {
    const key = "dGhlIHNhbXBsZSBub25jZQ==";
    const hostile = [
      "\x00\x01\x02garbage\r\n\r\n",
      "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 99\r\n\r\n`,
      `GET /elsewhere HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: ${"p,".repeat(2000)}\r\n\r\n`,
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\nX-Big: ${"a".repeat(100_000)}\r\n\r\n`,
      `GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n`,
      "POST /health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    ];
    const answers = await Promise.all(hostile.map((bytes) => raw(server.port, bytes)));
    for (const a of answers) expect(a.startsWith("HTTP/1.1 5")).toBe(false);
    expect(await healthy()).toBe(true);
    const after = client(`ws://${base}/ws`, "after");
    await after.until(() => after.frames.includes("hello"));
    after.ws.close();
  });
});

describe("gateway engine ws: slow consumers", () => {
  it("a socket that stops reading is dropped once its unsent bytes pass maxBackpressure; the publisher never blocks", async () => {
    const sockets: EngineSocket<Data>[] = [];
    const handlers = faultyHandlers([], { on: false });
    const server = await wsEngine.listen<Data>({
      host: "127.0.0.1", port: 0, path: "/ws",
      limits: { maxPayloadLength: 4096, maxBackpressure: 64 * 1024, idleTimeoutSeconds: 30, maxLifetimeMinutes: 60 },
      handlers: { ...handlers, open: (s) => { sockets.push(s); handlers.open(s); } },
    });
    const slow = client(`ws://127.0.0.1:${server.port}/ws`, "slow");
    await slow.until(() => slow.frames.includes("hello"));
    (slow.ws as unknown as { _socket: net.Socket })._socket.pause();
    const chunk = "x".repeat(16 * 1024);
    let code: number | undefined;
    void slow.closed.then((c) => { code = c; });
    const started = Date.now();
    for (let i = 0; i < 4_000 && code === undefined; i++) {
      server.publish("all", chunk);
      if (i % 50 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    (slow.ws as unknown as { _socket: net.Socket })._socket.resume();
    expect(await slow.closed).toBe(1006);
    expect(Date.now() - started).toBeLessThan(15_000);
    await server.close();
  });
});

describe("choosing the engine (RUNWATCH_GATEWAY_ENGINE)", () => {
  const logger = createLogger("error");
  it("auto takes uws where its native build loads and ws elsewhere; ws is always there", async () => {
    expect((await loadEngine("auto", logger)).name).toBe(native.ok ? "uws" : "ws");
    expect((await loadEngine("ws", logger)).name).toBe("ws");
  });
  it("uws forced where it does not load is a start-up error that says why and what to do", async () => {
    if (native.ok) {
      expect((await loadEngine("uws", logger)).name).toBe("uws");
    } else {
      await expect(loadEngine("uws", logger)).rejects.toThrow(/RUNWATCH_GATEWAY_ENGINE=uws, but uWebSockets\.js .*docs\/REALTIME\.md/);
    }
  });
});
