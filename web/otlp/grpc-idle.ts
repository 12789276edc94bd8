/**
 * The idle limit of OTLP/gRPC connections (RUNWATCH_OTLP_GRPC_IDLE_MS, docs/SECURITY.md, capacity): a connection
 * without a call for `idleMs` is closed, counted from the moment it is accepted, so one that never sends a request —
 * nothing at all, or only the HTTP/2 preface — closes too. Every connection is closed by the limit: a GOAWAY once it
 * has had no call for `idleMs`, and the socket destroyed `GRACE_MS` later if the peer has not let it close by then.
 *
 * Not grpc-js's own `grpc.max_connection_idle_ms`: its timer is armed on the event loop's cached clock, and when it
 * fires it compares Date.now() with the connection's start. A connection accepted late in a loop turn that took
 * many connections finds, when its timer fires, that a few milliseconds short of the limit have passed, and re-arms
 * for a whole period: 38 of 200 connections opened at once stayed open for twice the limit.
 */
import type http2 from "node:http2";
import type * as grpc from "@grpc/grpc-js";

/** How long a connection told to go away may take to close before its socket is destroyed. */
export const GRACE_MS = 1_000;

interface Http2ServerInfo {
  readonly sessions: ReadonlySet<http2.ServerHttp2Session>;
}

/**
 * Applies the idle limit to every connection of the bound `server` (call it once bindAsync has answered). grpc-js
 * offers no hook on its connections; its HTTP/2 servers are a private field, which this reads (it fails at start,
 * and capacity-limits.test.ts with it, if that moves).
 */
export function closeIdleConnections(server: grpc.Server, idleMs: number): void {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  if (!(servers instanceof Map) || servers.size === 0) throw new Error("grpc-js no longer keeps its HTTP/2 servers where the idle limit looks for them");
  for (const [h2, info] of servers as Map<http2.Http2Server, Http2ServerInfo>) {
    h2.on("session", (session: http2.ServerHttp2Session) => watch(session, idleMs));
    // Connections accepted before this ran (between the listen and now).
    for (const session of info.sessions) watch(session, idleMs);
  }
}

/** One connection's calls in flight, and the timer that closes it after `idleMs` without any. */
function watch(session: http2.ServerHttp2Session, idleMs: number): void {
  let active = 0;
  let timer: NodeJS.Timeout | undefined;
  const close = () => {
    if (active > 0 || session.destroyed) return;
    session.close();
    setTimeout(() => session.destroy(), GRACE_MS).unref();
  };
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(close, idleMs).unref();
  };
  session.on("stream", (stream: http2.ServerHttp2Stream) => {
    active++;
    clearTimeout(timer);
    stream.once("close", () => {
      if (--active === 0 && !session.closed && !session.destroyed) arm();
    });
  });
  session.once("close", () => clearTimeout(timer));
  arm();
}
