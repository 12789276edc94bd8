/**
 * The realtime gateway on config.gatewayPort (default 8082), on one of two WebSocket engines (engines/types.ts):
 * uWebSockets.js where its native build loads for this Node.js, the `ws` library otherwise
 * (RUNWATCH_GATEWAY_ENGINE=auto|uws|ws). This file is the gateway's logic; the engines only carry frames.
 *
 * A dashboard page fetches a short-lived signed token from web (GET /api/realtime/token), connects to
 * `ws://host:8082/ws` offering the subprotocols `runwatch.v1` and `token.<token>` (the token travels in the
 * Sec-WebSocket-Protocol header, not in the URL that proxies log), and sends
 * {"type":"subscribe","channel":"project.{id}"} (or "user.{id}"). The gateway only ever grants the channel named by
 * the token: a dashboard's token names the user's current project (docs/TEAMS.md). Tokens are bound to the login
 * session they were minted in: when it ends, web announces it on REALTIME_REVOKE_CHANNEL and every gateway closes
 * that session's sockets and refuses its tokens; so too when a member is removed from a project, for their sockets
 * and tokens of that project. Messages arrive from PubSub (in-process embedded, Redis in scale mode) on the "user."
 * and "project." prefixes and are fanned out with the engine's topics, one topic per channel, so a publish costs
 * one lookup however many tabs are open on it.
 *
 * Bounded memory: each socket may hold at most `maxBackpressure` bytes of unsent data; a publish that would
 * exceed it closes that socket. The client reconnects and reloads state from the stores, so a dropped slow consumer
 * loses freshness, never data. Idle sockets are pinged and closed after `idleTimeoutSeconds` without traffic.
 *
 * No error in a WebSocket path reaches the process: the engines catch what a handler throws, log it here and answer
 * it (HTTP 500 for an upgrade, close 1011 for a socket), and the server serves on.
 */
import type { Config } from "../core/config.js";
import type { Ports } from "../core/runtime.js";
import { projectChannel, userChannel } from "../core/ports/pubsub.js";
import { memberRevocation, REALTIME_REVOKE_CHANNEL, REALTIME_SUBPROTOCOL, REALTIME_TOKEN_TTL_SECONDS, TOKEN_PROTOCOL_PREFIX, verifyRealtimeToken } from "../core/tokens.js";
import { resolveSessionSecret } from "../core/secrets.js";
import { createLogger, type Logger } from "../core/logger.js";
import { ExpiringSet } from "../core/expiring-set.js";
import { CloseCode, frame, parseClientMessage, type ErrorCode } from "./protocol.js";
import { loadEngine } from "./engines/choose.js";
import type { Engine, EngineName, EngineSocket } from "./engines/types.js";

export interface GatewayOptions {
  /** Defaults to the shared session secret of the data dir / SESSION_SECRET (core/secrets.ts). */
  sessionSecret?: string;
  /** Unsent bytes allowed per socket before it is dropped. Default 1 MiB. */
  maxBackpressure?: number;
  /** Seconds without traffic before a socket is closed; pings are sent automatically before that. Default 32. */
  idleTimeoutSeconds?: number;
  /** Minutes a socket may live before the server closes it (the client reconnects with a fresh token). Default 60. */
  maxLifetimeMinutes?: number;
  /** The WebSocket engine; defaults to the one config.gatewayEngine chooses. */
  engine?: Engine;
  logger?: Logger;
}

export interface Gateway {
  /** ws:// base URL the gateway listens on (the WebSocket endpoint is `${url}/ws`). */
  url: string;
  port: number;
  /** The WebSocket engine it runs on. */
  engine: EngineName;
  /** Open sockets right now (for /health and tests). */
  connections(): number;
  close(): Promise<void>;
}

interface SocketData {
  userId: number;
  /** The project the token was minted for, 0 for a user-channel token. */
  projectId: number;
  channel: string;
  /** The login session the token was minted in. */
  sid: string;
  /** Set when the upgrade carried no valid token: the socket is told why and closed at open. */
  rejection?: { code: ErrorCode; message: string };
}

export async function startGateway(ports: Ports, config: Config, opts: GatewayOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.logLevel).child({ svc: "gateway" });
  const secret = opts.sessionSecret ?? (await resolveSessionSecret(config));
  const engine = opts.engine ?? (await loadEngine(config.gatewayEngine, logger));
  const idleTimeout = opts.idleTimeoutSeconds ?? 32;
  const sockets = new Set<EngineSocket<SocketData>>();
  /** Ended sessions, kept until their tokens have expired anyway. */
  const revoked = new ExpiringSet(100_000);
  // A revocation (an ended session's sid, or a removed member's memberRevocation) is kept until the tokens it
  // covers have expired anyway.
  const revoke = (what: string) => {
    if (!what) return;
    revoked.add(what, REALTIME_TOKEN_TTL_SECONDS * 1000 * 2);
    for (const ws of sockets) {
      const d = ws.data;
      if (d.sid === what) ws.sendAndClose(frame.error("session_ended", "you logged out"), CloseCode.unauthorized, "session_ended");
      else if (d.projectId && memberRevocation(d.userId, d.projectId) === what) {
        ws.sendAndClose(frame.error("not_a_member", "you are no longer a member of this project"), CloseCode.forbidden, "not_a_member");
      }
    }
  };
  const unsubscribeRevoke = await ports.pubsub.subscribePrefix(REALTIME_REVOKE_CHANNEL, (_c, what) => revoke(what));
  let dropped = 0;
  let errors = 0;

  /** The socket's data from the token offered; a socket without a valid one is still upgraded (see below). */
  const authorise = (offered: string[]): SocketData => {
    const token = offered.find((p) => p.startsWith(TOKEN_PROTOCOL_PREFIX))?.slice(TOKEN_PROTOCOL_PREFIX.length) ?? "";
    const data: SocketData = { userId: 0, projectId: 0, channel: "", sid: "" };
    if (!token) {
      data.rejection = { code: "missing_token", message: `offer the subprotocols ${REALTIME_SUBPROTOCOL} and ${TOKEN_PROTOCOL_PREFIX}<token from GET /api/realtime/token>` };
      return data;
    }
    const v = verifyRealtimeToken(secret, token);
    if (v.ok && revoked.has(v.claims.sid)) {
      data.rejection = { code: "session_ended", message: "the session that issued this token has ended; log in again" };
    } else if (v.ok && v.claims.pid !== undefined && revoked.has(memberRevocation(v.claims.uid, v.claims.pid))) {
      data.rejection = { code: "not_a_member", message: "you are no longer a member of this project" };
    } else if (v.ok) {
      data.userId = v.claims.uid;
      data.projectId = v.claims.pid ?? 0;
      data.channel = v.claims.pid === undefined ? userChannel(v.claims.uid) : projectChannel(v.claims.pid);
      data.sid = v.claims.sid;
    } else if (v.error === "expired") {
      data.rejection = { code: "expired_token", message: "the realtime token has expired; fetch a new one" };
    } else {
      data.rejection = { code: "invalid_token", message: "the realtime token is not valid" };
    }
    return data;
  };

  const server = await engine.listen<SocketData>({
    host: config.host,
    port: config.gatewayPort,
    path: "/ws",
    limits: {
      maxPayloadLength: 4 * 1024,
      maxBackpressure: opts.maxBackpressure ?? 1024 * 1024,
      idleTimeoutSeconds: idleTimeout,
      maxLifetimeMinutes: opts.maxLifetimeMinutes ?? 60,
    },
    handlers: {
      // Rejected clients are still upgraded so that they get a readable error frame and close code
      // (a browser cannot read the body of a refused upgrade); they never subscribe to anything.
      // Answer with our subprotocol only: echoing the offered list would send the token back in a header.
      upgrade: (offered) => ({ data: authorise(offered), protocol: offered.includes(REALTIME_SUBPROTOCOL) ? REALTIME_SUBPROTOCOL : "" }),

      open(ws) {
        const d = ws.data;
        if (d.rejection) {
          ws.sendAndClose(frame.error(d.rejection.code, d.rejection.message), CloseCode.unauthorized, d.rejection.code);
          return;
        }
        sockets.add(ws);
        ws.send(frame.hello(d.userId, d.channel, idleTimeout));
      },

      message(ws, data) {
        const d = ws.data;
        if (d.rejection) return;
        const msg = parseClientMessage(data);
        if (!msg) {
          ws.sendAndClose(frame.error("bad_message", 'expected {"type":"subscribe","channel":"user.{id}"} or {"type":"ping"}'), CloseCode.badMessage, "bad_message");
          return;
        }
        if (msg.type === "ping") {
          ws.send(frame.pong());
          return;
        }
        if (msg.channel !== d.channel) {
          logger.warn("refused subscription", { user_id: d.userId, channel: msg.channel });
          ws.sendAndClose(frame.error("forbidden_channel", `this token grants only ${d.channel}`), CloseCode.forbidden, "forbidden_channel");
          return;
        }
        ws.subscribe(d.channel);
        ws.send(frame.subscribed(d.channel));
      },

      close(ws, code) {
        const wasOpen = sockets.delete(ws);
        // 1006: dropped without a close frame — over the back-pressure limit, idle, or the network.
        if (wasOpen && code === 1006) dropped++;
        logger.debug("socket closed", { user_id: ws.data.userId, code });
      },

      health: () => ({ status: "ok", engine: engine.name, connections: sockets.size, abnormal_closes: dropped, errors }),

      error(where, err) {
        errors++;
        logger.error("gateway error (answered; serving on)", { where, error: err });
      },
    },
  });

  // Fan-out. PubSub delivers on the publisher's tick (embedded) or from the Redis connection (scale mode); the
  // engine copies the message into each subscriber's buffer, respecting maxBackpressure.
  const fanOut = (channel: string, message: string) => server.publish(channel, message);
  const unsubscribeUsers = await ports.pubsub.subscribePrefix("user.", fanOut);
  const unsubscribeProjects = await ports.pubsub.subscribePrefix("project.", fanOut);
  const unsubscribe = async () => {
    await unsubscribeUsers();
    await unsubscribeProjects();
  };

  const url = `ws://${config.host}:${server.port}`;
  logger.info("gateway listening", { url: `${url}/ws`, engine: engine.name });
  let closed = false;
  return {
    url,
    port: server.port,
    engine: engine.name,
    connections: () => sockets.size,
    async close() {
      if (closed) return;
      closed = true;
      await unsubscribe();
      await unsubscribeRevoke();
      for (const ws of [...sockets]) ws.close(CloseCode.goingAway, "server shutting down");
      sockets.clear();
      await server.close();
    },
  };
}
