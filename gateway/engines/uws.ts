/**
 * The `uws` engine: uWebSockets.js's native addon (uws-native.ts). Topics, back-pressure, idle pings and lifetime
 * are uWS's own: a publish is one lookup and one copy into each subscriber's buffer, done in C++.
 *
 * uWS calls into JavaScript from C++; an exception escaping one of those callbacks would be uncaught. So every
 * callback runs inside a try: the error goes to `handlers.error` and is answered (500 for an upgrade, close 1011 for
 * a socket). A uWS socket object must not be touched once closed; the wrapper's `closed` flag keeps late calls
 * (a logout arriving after the close) from throwing.
 */
import type { NativeUws } from "./uws-native.js";
import { answers, guarded } from "./guard.js";
import type { Engine, ListenOptions, EngineServer, EngineSocket } from "./types.js";
import type uWS from "uWebSockets.js";

interface Holder<D> {
  data: D;
  socket?: UwsSocket<D>;
}

class UwsSocket<D> implements EngineSocket<D> {
  closed = false;
  constructor(private readonly ws: uWS.WebSocket<Holder<D>>, readonly data: D) {}
  send(text: string): void {
    if (!this.closed) this.ws.send(text, false, false);
  }
  sendAndClose(text: string, code: number, reason: string): void {
    if (this.closed) return;
    this.ws.cork(() => {
      this.ws.send(text, false, false);
      this.ws.end(code, reason);
    });
  }
  close(code: number, reason: string): void {
    if (!this.closed) this.ws.end(code, reason);
  }
  subscribe(topic: string): void {
    if (!this.closed) this.ws.subscribe(topic);
  }
}

export function uwsEngine(uws: NativeUws): Engine {
  return {
    name: "uws",
    async listen<D>({ host, port, path, limits, handlers }: ListenOptions<D>): Promise<EngineServer> {
      const app = uws.App();

      app.ws<Holder<D>>(path, {
        maxPayloadLength: limits.maxPayloadLength,
        maxBackpressure: limits.maxBackpressure,
        closeOnBackpressureLimit: 1,
        idleTimeout: limits.idleTimeoutSeconds,
        sendPingsAutomatically: true,
        maxLifetime: limits.maxLifetimeMinutes,
        compression: uws.DISABLED,

        // Synchronous: headers must be read before returning.
        upgrade(res, req, context) {
          try {
            const offered = req.getHeader("sec-websocket-protocol").split(",").map((p) => p.trim()).filter(Boolean);
            const { data, protocol } = handlers.upgrade(offered);
            res.upgrade<Holder<D>>({ data }, req.getHeader("sec-websocket-key"), protocol, req.getHeader("sec-websocket-extensions"), context);
          } catch (err) {
            handlers.error("upgrade", err);
            try {
              res.cork(() => {
                res.writeStatus("500 Internal Server Error").writeHeader("content-type", "application/json");
                res.end(JSON.stringify(answers.upgradeFailed));
              });
            } catch { /* already answered */ }
          }
        },
        open(ws) {
          const holder = ws.getUserData();
          holder.socket = new UwsSocket(ws, holder.data);
          guarded(handlers, "open", holder.socket, () => handlers.open(holder.socket!));
        },
        message(ws, data) {
          const socket = ws.getUserData().socket!;
          guarded(handlers, "message", socket, () => handlers.message(socket, data));
        },
        close(ws, code) {
          const socket = ws.getUserData().socket!;
          socket.closed = true;
          guarded(handlers, "close", undefined, () => handlers.close(socket, code));
        },
      });

      const answerJson = (res: uWS.HttpResponse, status: string, body: unknown) => {
        res.cork(() => {
          res.writeStatus(status).writeHeader("content-type", "application/json");
          res.end(JSON.stringify(body));
        });
      };
      app.get("/health", (res) => {
        try {
          answerJson(res, "200 OK", handlers.health());
        } catch (err) {
          handlers.error("health", err);
          answerJson(res, "500 Internal Server Error", answers.healthFailed);
        }
      });
      app.any("/*", (res) => answerJson(res, "404 Not Found", answers.notFound(path)));

      const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
        app.listen(host, port, (s) => (s ? resolve(s) : reject(new Error(`gateway could not listen on ${host}:${port}`))));
      });
      return {
        engine: "uws",
        port: uws.us_socket_local_port(listenSocket as unknown as uWS.us_socket),
        publish(topic, message) {
          try {
            app.publish(topic, message, false, false);
          } catch (err) {
            handlers.error("publish", err);
          }
        },
        async close() {
          uws.us_listen_socket_close(listenSocket);
        },
      };
    },
  };
}
