/**
 * The `ws` engine: the `ws` library on node:http, pure JavaScript, for every Node.js on which uWebSockets.js has no
 * native build. It keeps the `uws` engine's behaviour (types.ts):
 *
 * - topics: a Map from topic to its sockets; a publish encodes the message once and hands the same buffer to each
 *   subscriber (ws frames a server's unmasked buffer without copying it);
 * - back-pressure: a socket whose unsent bytes (ws's `bufferedAmount`: its own queue plus the net.Socket's) would
 *   pass `maxBackpressure` is destroyed, not written to — its client sees 1006, as with uWS's closeOnBackpressureLimit;
 * - idle and lifetime: one timer pings sockets silent for half of `idleTimeoutSeconds`, destroys those silent for all
 *   of it, and closes with 1001 those older than `maxLifetimeMinutes`;
 * - errors: every handler call is caught, reported and answered (500 for an upgrade, 1011 for a socket); every socket
 *   and the server have an 'error' listener, since an EventEmitter's unhandled 'error' would be thrown.
 */
import http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import type { Engine, ListenOptions, EngineLimits, EngineServer, EngineSocket } from "./types.js";
import { answers, guarded } from "./guard.js";
import { answerClientError } from "../../core/network/client-error.js";

const GOING_AWAY = 1001;
/** How long close() waits for clients to answer the closing handshake before it cuts them off. */
const CLOSE_GRACE_MS = 1_000;

class WsSocket<D> implements EngineSocket<D> {
  readonly topics = new Set<string>();
  readonly openedAt = Date.now();
  lastHeard = Date.now();
  constructor(readonly ws: WebSocket, readonly data: D, private readonly join: (s: WsSocket<D>, topic: string) => void) {}
  get open(): boolean {
    return this.ws.readyState === this.ws.OPEN;
  }
  send(text: string): void {
    if (this.open) this.ws.send(text);
  }
  sendAndClose(text: string, code: number, reason: string): void {
    if (!this.open) return;
    this.ws.send(text);
    this.ws.close(code, reason);
  }
  close(code: number, reason: string): void {
    if (this.open) this.ws.close(code, reason);
  }
  subscribe(topic: string): void {
    if (this.open) this.join(this, topic);
  }
}

const pathOf = (req: http.IncomingMessage): string => (req.url ?? "/").split("?")[0]!;

function answer(socket: Duplex, status: string, body: unknown): void {
  const json = JSON.stringify(body);
  socket.end(`HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n${json}`);
}

/** Pings the quiet, drops the silent, retires the old. */
function startHeartbeat<D>(sockets: Set<WsSocket<D>>, limits: EngineLimits, onError: (err: unknown) => void): NodeJS.Timeout {
  const idleMs = limits.idleTimeoutSeconds * 1000;
  const lifetimeMs = limits.maxLifetimeMinutes * 60_000;
  const timer = setInterval(() => {
    const now = Date.now();
    for (const s of sockets) {
      try {
        if (now - s.lastHeard >= idleMs) s.ws.terminate();
        else if (lifetimeMs > 0 && now - s.openedAt >= lifetimeMs) s.ws.close(GOING_AWAY, "max_lifetime");
        else if (now - s.lastHeard >= idleMs / 2) s.ws.ping();
      } catch (err) {
        onError(err);
      }
    }
  }, Math.max(250, idleMs / 4));
  timer.unref();
  return timer;
}

export const wsEngine: Engine = {
  name: "ws",
  async listen<D>({ host, port, path, limits, handlers }: ListenOptions<D>): Promise<EngineServer> {
    const sockets = new Set<WsSocket<D>>();
    const topics = new Map<string, Set<WsSocket<D>>>();
    const join = (s: WsSocket<D>, topic: string) => {
      s.topics.add(topic);
      let members = topics.get(topic);
      if (!members) topics.set(topic, (members = new Set()));
      members.add(s);
    };
    const leave = (s: WsSocket<D>) => {
      for (const topic of s.topics) {
        const members = topics.get(topic);
        members?.delete(s);
        if (members?.size === 0) topics.delete(topic);
      }
    };

    /** The subprotocol each upgrade decided, read back by ws's handleProtocols. */
    const chosen = new WeakMap<http.IncomingMessage, string>();
    const wss = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: limits.maxPayloadLength,
      handleProtocols: (_offered, req) => chosen.get(req) || false,
    });

    const server = http.createServer((req, res) => {
      const pathname = pathOf(req);
      let status = 404;
      let body: unknown = answers.notFound(path);
      if (pathname === "/health" && (req.method === "GET" || req.method === "HEAD")) {
        try {
          [status, body] = [200, handlers.health()];
        } catch (err) {
          handlers.error("health", err);
          [status, body] = [500, answers.healthFailed];
        }
      }
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    });
    server.on("clientError", answerClientError);

    server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on("error", () => socket.destroy());
      if (pathOf(req) !== path) {
        answer(socket, "404 Not Found", answers.notFound(path));
        return;
      }
      let decided: { data: D; protocol: string };
      try {
        const header = req.headers["sec-websocket-protocol"] ?? "";
        decided = handlers.upgrade(header.split(",").map((p) => p.trim()).filter(Boolean));
      } catch (err) {
        handlers.error("upgrade", err);
        answer(socket, "500 Internal Server Error", answers.upgradeFailed);
        return;
      }
      chosen.set(req, decided.protocol);
      wss.handleUpgrade(req, socket, head, (ws) => {
        const s = new WsSocket(ws, decided.data, join);
        sockets.add(s);
        ws.on("error", () => { /* a protocol error (bad frame, too big): ws closes the socket and 'close' follows */ });
        ws.on("pong", () => { s.lastHeard = Date.now(); });
        ws.on("message", (data) => {
          s.lastHeard = Date.now();
          // binaryType is ws's default, "nodebuffer": a message arrives as one Buffer, fragments joined.
          guarded(handlers, "message", s, () => handlers.message(s, data as Buffer));
        });
        ws.on("close", (code) => {
          sockets.delete(s);
          leave(s);
          guarded(handlers, "close", undefined, () => handlers.close(s, code));
        });
        guarded(handlers, "open", s, () => handlers.open(s));
      });
    });

    const heartbeat = startHeartbeat(sockets, limits, (err) => handlers.error("heartbeat", err));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        server.on("error", (err) => handlers.error("server", err));
        resolve();
      });
    });

    return {
      engine: "ws",
      port: (server.address() as import("node:net").AddressInfo).port,
      publish(topic, message) {
        const members = topics.get(topic);
        if (!members) return;
        const frame = Buffer.from(message);
        for (const s of members) {
          try {
            if (s.ws.bufferedAmount + frame.length > limits.maxBackpressure) s.ws.terminate();
            else s.ws.send(frame, { binary: false });
          } catch (err) {
            handlers.error("publish", err);
          }
        }
      },
      async close() {
        clearInterval(heartbeat);
        const closing = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of sockets) s.close(GOING_AWAY, "server shutting down");
        const timeout = new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref());
        await Promise.race([closing, timeout]);
        for (const s of sockets) s.ws.terminate();
        server.closeAllConnections();
        await closing;
      },
    };
  },
};
