/**
 * The WebSocket engine under the realtime gateway: what gateway/server.ts needs of a WebSocket server, and the
 * choice between the two adapters.
 *
 * - `uws` (uws.ts beside this file): uWebSockets.js, native, the fast path. Used only where a native build for the
 *   running Node.js loads; a package's JavaScript fallback is never used (the one of the unofficial fork implements
 *   neither publish nor upgrades).
 * - `ws` (ws.ts): the `ws` library on node:http, pure JavaScript, loads on every Node.js.
 *
 * choose.ts picks one (RUNWATCH_GATEWAY_ENGINE); docs/REALTIME.md compares them.
 *
 * Contract, the same for both: handlers run on the event loop and may throw; an engine catches every such error,
 * reports it to `handlers.error` and answers it (an upgrade with HTTP 500, an open socket with close 1011), so no
 * error in a WebSocket path can reach the process. A publish never blocks: a socket whose unsent data would pass
 * `maxBackpressure` is closed (1006 on the client's side) and its client reconnects and reloads.
 */
export type EngineName = "uws" | "ws";
export type EngineChoice = EngineName | "auto";

/** One open socket, carrying the data its upgrade decided. Calls on a closed socket do nothing. */
export interface EngineSocket<D> {
  readonly data: D;
  send(text: string): void;
  /** Sends a last text frame, then closes with `code` and `reason`. */
  sendAndClose(text: string, code: number, reason: string): void;
  close(code: number, reason: string): void;
  /** From now on every publish on `topic` reaches this socket. */
  subscribe(topic: string): void;
}

export interface EngineHandlers<D> {
  /** Synchronous: from the subprotocols offered, the socket's data and the one subprotocol to answer ("" for none). */
  upgrade(offeredProtocols: string[]): { data: D; protocol: string };
  open(socket: EngineSocket<D>): void;
  /** A client frame; `data` is valid only during the call. */
  message(socket: EngineSocket<D>, data: ArrayBuffer | Buffer): void;
  /** `code` is 1006 when the socket was dropped (slow consumer, idle, network) rather than closed by a close frame. */
  close(socket: EngineSocket<D>, code: number): void;
  /** The JSON body of GET /health. */
  health(): unknown;
  /** An error thrown by a handler above or by the engine's own work; the engine has answered it already. */
  error(where: string, err: unknown): void;
}

export interface EngineLimits {
  /** The largest client frame; a bigger one closes the socket. */
  maxPayloadLength: number;
  /** Unsent bytes a socket may hold; a publish that would pass it closes the socket. */
  maxBackpressure: number;
  /** A socket silent this long is closed; pings go out before that. */
  idleTimeoutSeconds: number;
  /** A socket is closed this long after it opened (its client reconnects with a fresh token). */
  maxLifetimeMinutes: number;
}

export interface EngineServer {
  readonly engine: EngineName;
  readonly port: number;
  /** Sends `message` as one text frame to every socket subscribed to `topic`. */
  publish(topic: string, message: string): void;
  /** Stops listening and closes every socket with 1001. */
  close(): Promise<void>;
}

export interface ListenOptions<D> {
  host: string;
  port: number;
  /** The WebSocket endpoint; GET /health answers beside it, anything else 404. */
  path: string;
  limits: EngineLimits;
  handlers: EngineHandlers<D>;
}

export interface Engine {
  readonly name: EngineName;
  listen<D>(opts: ListenOptions<D>): Promise<EngineServer>;
}
