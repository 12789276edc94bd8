/**
 * The realtime wire protocol (documented in docs/REALTIME.md). Frames are JSON text.
 *
 * client → server: {"type":"subscribe","channel":"user.42"} | {"type":"ping"}
 * server → client: {"type":"hello",...} | {"type":"subscribed",...} | {"type":"pong"} | {"type":"error",...}
 *                  and every message published on the user's channel, verbatim (e.g. {"type":"event",...}).
 */

/** WebSocket close codes used by the gateway (4000-4999 is the application range). */
export const CloseCode = {
  /** Missing, malformed, forged or expired token, or the login session ended. Fetch a new token and reconnect. */
  unauthorized: 4401,
  /** Subscription to a channel the token does not grant. Do not retry. */
  forbidden: 4403,
  /** A client frame that is not a known JSON message. */
  badMessage: 4400,
  /** Server shutting down; reconnect later. */
  goingAway: 1001,
} as const;

export type ErrorCode = "missing_token" | "invalid_token" | "expired_token" | "session_ended" | "not_a_member" | "forbidden_channel" | "bad_message";

export type ClientMessage = { type: "subscribe"; channel: string } | { type: "ping" };

export const frame = {
  hello: (userId: number, channel: string, heartbeatSeconds: number) =>
    JSON.stringify({ type: "hello", user_id: userId, channel, heartbeat_seconds: heartbeatSeconds }),
  subscribed: (channel: string) => JSON.stringify({ type: "subscribed", channel }),
  pong: () => JSON.stringify({ type: "pong", at: new Date().toISOString() }),
  error: (code: ErrorCode, message: string) => JSON.stringify({ type: "error", error: { code, message } }),
};

/** Parses a client frame; undefined for anything that is not a known message. */
export function parseClientMessage(data: ArrayBuffer | Buffer): ClientMessage | undefined {
  let msg: unknown;
  try {
    msg = JSON.parse((Buffer.isBuffer(data) ? data : Buffer.from(data)).toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof msg !== "object" || msg === null) return undefined;
  const m = msg as Record<string, unknown>;
  if (m.type === "ping") return { type: "ping" };
  if (m.type === "subscribe" && typeof m.channel === "string") return { type: "subscribe", channel: m.channel };
  return undefined;
}
