/**
 * The realtime gateway: uWebSockets.js on config.gatewayPort (default 8082).
 *
 * A dashboard page fetches a short-lived signed token from web (GET /api/realtime/token), connects to
 * `ws://host:8082/ws` offering the subprotocols `runwatch.v1` and `token.<token>` (the token travels in the
 * Sec-WebSocket-Protocol header, not in the URL that proxies log), and sends
 * {"type":"subscribe","channel":"user.{id}"}. The gateway only ever grants the channel named by the token.
 * Tokens are bound to the login session they were minted in: when it ends, web announces it on
 * REALTIME_REVOKE_CHANNEL and every gateway closes that session's sockets and refuses its tokens.
 * Messages arrive from PubSub (in-process embedded, Redis in scale mode) on the "user." prefix and are fanned
 * out with uWS topics, one topic per user channel, so a publish costs one lookup however many tabs a user has open.
 *
 * Bounded memory: each socket may hold at most `maxBackpressure` bytes of unsent data; a publish that would
 * exceed it closes that socket (closeOnBackpressureLimit). The client reconnects and reloads state from the
 * stores, so a dropped slow consumer loses freshness, never data. Idle sockets are pinged automatically and
 * closed after `idleTimeoutSeconds` without traffic.
 */
import uWS from "uWebSockets.js";
import type { Config } from "../core/config.js";
import type { Ports } from "../core/runtime.js";
import { userChannel } from "../core/ports/pubsub.js";
import { REALTIME_REVOKE_CHANNEL, REALTIME_SUBPROTOCOL, REALTIME_TOKEN_TTL_SECONDS, TOKEN_PROTOCOL_PREFIX, verifyRealtimeToken } from "../core/tokens.js";
import { resolveSessionSecret } from "../core/secrets.js";
import { createLogger, type Logger } from "../core/logger.js";
import { ExpiringSet } from "../core/expiring-set.js";
import { CloseCode, frame, parseClientMessage, type ErrorCode } from "./protocol.js";

export interface GatewayOptions {
  /** Defaults to the shared session secret of the data dir / SESSION_SECRET (core/secrets.ts). */
  sessionSecret?: string;
  /** Unsent bytes allowed per socket before it is dropped. Default 1 MiB. */
  maxBackpressure?: number;
  /** Seconds without traffic before a socket is closed; pings are sent automatically before that. Default 32. */
  idleTimeoutSeconds?: number;
  /** Minutes a socket may live before the server closes it (the client reconnects with a fresh token). Default 60. */
  maxLifetimeMinutes?: number;
  logger?: Logger;
}

export interface Gateway {
  /** ws:// base URL the gateway listens on (the WebSocket endpoint is `${url}/ws`). */
  url: string;
  port: number;
  /** Open sockets right now (for /health and tests). */
  connections(): number;
  close(): Promise<void>;
}

interface SocketData {
  userId: number;
  channel: string;
  /** The login session the token was minted in. */
  sid: string;
  /** Set when the upgrade carried no valid token: the socket is told why and closed at open. */
  rejection?: { code: ErrorCode; message: string };
}

export async function startGateway(ports: Ports, config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.logLevel).child({ svc: "gateway" });
  const secret = opts.sessionSecret ?? (await resolveSessionSecret(config));
  const idleTimeout = opts.idleTimeoutSeconds ?? 32;
  const sockets = new Set<uWS.WebSocket<SocketData>>();
  /** Ended sessions, kept until their tokens have expired anyway. */
  const revoked = new ExpiringSet(100_000);
  const endSession = (sid: string) => {
    if (!sid) return;
    revoked.add(sid, REALTIME_TOKEN_TTL_SECONDS * 1000 * 2);
    for (const ws of sockets) {
      if (ws.getUserData().sid !== sid) continue;
      ws.cork(() => {
        ws.send(frame.error("session_ended", "you logged out"));
        ws.end(CloseCode.unauthorized, "session_ended");
      });
    }
  };
  const unsubscribeRevoke = await ports.pubsub.subscribePrefix(REALTIME_REVOKE_CHANNEL, (_c, sid) => endSession(sid));
  let dropped = 0;

  const app = uWS.App();

  app.ws<SocketData>("/ws", {
    maxPayloadLength: 4 * 1024,
    maxBackpressure: opts.maxBackpressure ?? 1024 * 1024,
    closeOnBackpressureLimit: 1,
    idleTimeout,
    sendPingsAutomatically: true,
    maxLifetime: opts.maxLifetimeMinutes ?? 60,
    compression: uWS.DISABLED,

    // Synchronous: the token is verified before the socket exists; headers must be read before returning.
    upgrade(res, req, context) {
      const offered = req.getHeader("sec-websocket-protocol").split(",").map((p) => p.trim());
      const token = offered.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX))?.slice(TOKEN_PROTOCOL_PREFIX.length) ?? "";
      const data: SocketData = { userId: 0, channel: "", sid: "" };
      if (!token) {
        data.rejection = { code: "missing_token", message: `offer the subprotocols ${REALTIME_SUBPROTOCOL} and ${TOKEN_PROTOCOL_PREFIX}<token from GET /api/realtime/token>` };
      } else {
        const v = verifyRealtimeToken(secret, token);
        if (v.ok && revoked.has(v.claims.sid)) {
          data.rejection = { code: "session_ended", message: "the session that issued this token has ended; log in again" };
        } else if (v.ok) {
          data.userId = v.claims.uid;
          data.channel = userChannel(v.claims.uid);
          data.sid = v.claims.sid;
        } else if (v.error === "expired") {
          data.rejection = { code: "expired_token", message: "the realtime token has expired; fetch a new one" };
        } else {
          data.rejection = { code: "invalid_token", message: "the realtime token is not valid" };
        }
      }
      // Rejected clients are still upgraded so that they get a readable error frame and close code
      // (a browser cannot read the body of a refused upgrade); they never subscribe to anything.
      // Answer with our subprotocol only: echoing the offered list would send the token back in a header.
      res.upgrade(
        data,
        req.getHeader("sec-websocket-key"),
        offered.includes(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : "",
        req.getHeader("sec-websocket-extensions"),
        context,
      );
    },

    open(ws) {
      const d = ws.getUserData();
      if (d.rejection) {
        ws.cork(() => {
          ws.send(frame.error(d.rejection!.code, d.rejection!.message));
          ws.end(CloseCode.unauthorized, d.rejection!.code);
        });
        return;
      }
      sockets.add(ws);
      ws.send(frame.hello(d.userId, d.channel, idleTimeout));
    },

    message(ws, data) {
      const d = ws.getUserData();
      if (d.rejection) return;
      const msg = parseClientMessage(data);
      if (!msg) {
        ws.cork(() => {
          ws.send(frame.error("bad_message", 'expected {"type":"subscribe","channel":"user.{id}"} or {"type":"ping"}'));
          ws.end(CloseCode.badMessage, "bad_message");
        });
        return;
      }
      if (msg.type === "ping") {
        ws.send(frame.pong());
        return;
      }
      if (msg.channel !== d.channel) {
        logger.warn("refused subscription", { user_id: d.userId, channel: msg.channel });
        ws.cork(() => {
          ws.send(frame.error("forbidden_channel", `this token grants only ${d.channel}`));
          ws.end(CloseCode.forbidden, "forbidden_channel");
        });
        return;
      }
      ws.subscribe(d.channel);
      ws.send(frame.subscribed(d.channel));
    },

    close(ws, code) {
      const wasOpen = sockets.delete(ws);
      // uWS closes a socket with 1006 when closeOnBackpressureLimit drops it (and on idle timeout).
      if (wasOpen && code === 1006) dropped++;
      logger.debug("socket closed", { user_id: ws.getUserData().userId, code });
    },
  });

  app.get("/health", (res) => {
    res.cork(() => {
      res.writeHeader("content-type", "application/json");
      res.end(JSON.stringify({ status: "ok", connections: sockets.size, abnormal_closes: dropped }));
    });
  });
  app.any("/*", (res) => {
    res.cork(() => {
      res.writeStatus("404 Not Found").writeHeader("content-type", "application/json");
      res.end(JSON.stringify({ error: { code: "not_found", message: "the realtime endpoint is /ws" } }));
    });
  });

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    app.listen(config.host, config.gatewayPort, (s) =>
      s ? resolve(s) : reject(new Error(`gateway could not listen on ${config.host}:${config.gatewayPort}`)),
    );
  });
  const port = uWS.us_socket_local_port(listenSocket as unknown as uWS.us_socket);

  // Fan-out. PubSub delivers on the publisher's tick (embedded) or from the Redis connection (scale mode);
  // app.publish copies the message into each subscriber's buffer, respecting maxBackpressure.
  const unsubscribe = await ports.pubsub.subscribePrefix("user.", (channel, message) => {
    app.publish(channel, message, false, false);
  });

  const url = `ws://${config.host}:${port}`;
  logger.info("gateway listening", { url: `${url}/ws` });
  let closed = false;
  return {
    url,
    port,
    connections: () => sockets.size,
    async close() {
      if (closed) return;
      closed = true;
      await unsubscribe();
      await unsubscribeRevoke();
      uWS.us_listen_socket_close(listenSocket);
      for (const ws of [...sockets]) {
        try { ws.end(CloseCode.goingAway, "server shutting down"); } catch { /* already closed */ }
      }
      sockets.clear();
    },
  };
}
