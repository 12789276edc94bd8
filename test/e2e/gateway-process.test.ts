/**
 * The realtime gateway inside `runwatch start`, on whatever Node.js runs the suite (CI runs it on the machine's
 * Node and on Node 24): a logged-in dashboard's socket gets its events live, and hostile WebSocket traffic on the
 * gateway port — garbage, half upgrades, forged tokens, abrupt disconnects — is answered without taking down the
 * process that also serves ingest and pages. Then a second server forced onto the `ws` engine does the same.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadNativeUws } from "../../gateway/engines/uws-native.js";
import { childServerWithAccount, json, loginJar } from "./harness.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

function rawExchange(port: number, bytes: string, hangUpAfterMs = 300): Promise<string> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => s.write(bytes));
    let got = "";
    s.on("data", (d) => { got += d.toString(); });
    s.on("error", () => {});
    s.on("close", () => resolve(got));
    setTimeout(() => s.destroy(), hangUpAfterMs).unref();
  });
}

async function serverWith(extra: Record<string, string>) {
  const s = await childServerWithAccount("gw", extra, children, dirs);
  return { ...s, gatewayPort: Number(s.env.RUNWATCH_GATEWAY_PORT) };
}

async function liveAndHostile(s: Awaited<ReturnType<typeof serverWith>>, expectedEngine: string) {
  // web's /healthz answers before the later roles have started: wait for the gateway too.
  let health: unknown;
  for (const end = Date.now() + 30_000; !health && Date.now() < end;) {
    health = await fetch(`http://127.0.0.1:${s.gatewayPort}/health`).then((r) => r.json(), () => undefined);
    if (!health) await new Promise((r) => setTimeout(r, 100));
  }
  expect(health).toMatchObject({ status: "ok", engine: expectedEngine });

  // A dashboard's socket, as web/static/live.js opens it.
  const jar = await loginJar(s.url, s.email);
  const token = await (await jar.fetch(`${s.url}/api/realtime/token`)).json() as { url: string; protocols: string[]; channel: string };
  const ws = new WebSocket(`ws://127.0.0.1:${s.gatewayPort}/ws`, token.protocols);
  const frames: any[] = [];
  ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
  const until = async (pred: () => boolean, what: string) => {
    for (const end = Date.now() + 20_000; !pred();) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}; frames ${JSON.stringify(frames).slice(0, 500)}; server said:\n${s.output().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await until(() => frames.some((f) => f.type === "hello"), "hello");
  ws.send(JSON.stringify({ type: "subscribe", channel: token.channel }));
  await until(() => frames.some((f) => f.type === "subscribed"), "subscribed");

  // Hostile traffic on the gateway port, all at once.
  const key = "dGhlIHNhbXBsZSBub25jZQ==";
  const upgrade = (extra: string, p = "/ws") => `GET ${p} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`;
  const hostile = [
    "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage that looks like TLS\r\n\r\n",
    upgrade("Sec-WebSocket-Protocol: runwatch.v1, token.forged.token\r\n"),
    upgrade(`Sec-WebSocket-Protocol: ${"token.x,".repeat(500)}\r\n`),
    upgrade("", "/elsewhere"),
    upgrade("X-Huge: " + "h".repeat(64 * 1024) + "\r\n"),
    upgrade("").slice(0, 60),
    "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
  ];
  await Promise.all(Array.from({ length: 5 }, () => hostile.map((h) => rawExchange(s.gatewayPort, h))).flat());
  // Sockets that open and vanish mid-stream.
  await Promise.all(Array.from({ length: 20 }, async () => {
    const c = new WebSocket(`ws://127.0.0.1:${s.gatewayPort}/ws`, token.protocols);
    c.on("error", () => {});
    await new Promise((r) => c.once("open", r));
    (c as unknown as { _socket: net.Socket })._socket.destroy();
  }));

  // The process still serves ingest, pages and the live socket.
  expect(s.child.exitCode).toBeNull();
  const res = await fetch(`${s.url}/api/ingest`, json(s.key, { event_type: "run_start", sdk_run_id: `after-hostile-${expectedEngine}`, agent_name: "gw-agent", payload: {} }));
  expect(res.status).toBe(202);
  await until(() => frames.some((f) => f.type === "events" && JSON.stringify(f).includes(`after-hostile-${expectedEngine}`)), "the run's events frame");
  expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
  expect((await jar.fetch(`${s.url}/dashboard`)).status).toBe(200);
  expect((await (await fetch(`http://127.0.0.1:${s.gatewayPort}/health`)).json()).status).toBe("ok");
  expect(s.output()).not.toMatch(/uncaught error|unhandled rejection/);
  ws.close();
}

const native = loadNativeUws();

describe("the gateway inside runwatch start", () => {
  it(`auto engine (${native.ok ? "uws" : "ws"} on Node ${process.versions.node}): live frames, and hostile sockets take nothing down`, async () => {
    await liveAndHostile(await serverWith({}), native.ok ? "uws" : "ws");
  }, 120_000);

  // Where uws does not load, the auto engine above was ws already.
  it.skipIf(!native.ok)("RUNWATCH_GATEWAY_ENGINE=ws: the same", async () => {
    await liveAndHostile(await serverWith({ RUNWATCH_GATEWAY_ENGINE: "ws" }), "ws");
  }, 120_000);
});
