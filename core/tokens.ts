/**
 * Short-lived signed tokens for the realtime gateway.
 *
 * The web app (session-authenticated) mints a token for the logged-in user; the gateway, which has no session
 * store, verifies it with the same secret. Format: `base64url(JSON claims) "." base64url(HMAC-SHA256)`.
 * The `p` claim pins the token's purpose so a token minted for one use cannot be replayed for another.
 * Browsers send it in the Sec-WebSocket-Protocol header (REALTIME_SUBPROTOCOL, then `token.<token>`), never in
 * the URL, where proxies and logs would keep it.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export interface RealtimeClaims {
  /** User id (without `pid`, the only channel the holder may subscribe to is `user.{uid}`). */
  readonly uid: number;
  /** The project the token was minted for: the only channel it grants is then `project.{pid}`. */
  readonly pid?: number;
  /** Expiry, seconds since the epoch. */
  readonly exp: number;
  /**
   * The login session it was minted in (a random id kept in that session, never the session id itself). When
   * the session ends (logout), web publishes it on REALTIME_REVOKE_CHANNEL: gateways close its sockets and
   * refuse its tokens from then on.
   */
  readonly sid: string;
}

/**
 * Pub/sub channel on which web announces what realtime tokens no longer grant. The message is the `sid` of an ended
 * login session, or memberRevocation(uid, pid) for a member removed from a project.
 */
export const REALTIME_REVOKE_CHANNEL = "realtime.revoke";
export const memberRevocation = (uid: number, pid: number): string => `member:${uid}:${pid}`;

/** The subprotocol the gateway speaks; the client offers it first, then `token.<token>`. */
export const REALTIME_SUBPROTOCOL = "runwatch.v1";
export const TOKEN_PROTOCOL_PREFIX = "token.";

export type TokenError = "malformed" | "bad_signature" | "expired" | "wrong_purpose";

const PURPOSE = "rt";
/** Default lifetime: long enough to open a WebSocket after the page fetched it, short enough to be useless if leaked. */
export const REALTIME_TOKEN_TTL_SECONDS = 60;

const mac = (secret: string, body: string): Buffer => createHmac("sha256", secret).update(body).digest();

export function signRealtimeToken(
  secret: string,
  uid: number,
  sid: string,
  ttlSeconds: number = REALTIME_TOKEN_TTL_SECONDS,
  nowMs: number = Date.now(),
  pid?: number,
): { token: string; exp: number } {
  const exp = Math.floor(nowMs / 1000) + ttlSeconds;
  const body = Buffer.from(JSON.stringify(pid === undefined ? { p: PURPOSE, uid, sid, exp } : { p: PURPOSE, uid, pid, sid, exp })).toString("base64url");
  return { token: `${body}.${mac(secret, body).toString("base64url")}`, exp };
}

export function verifyRealtimeToken(
  secret: string,
  token: string,
  nowMs: number = Date.now(),
): { ok: true; claims: RealtimeClaims } | { ok: false; error: TokenError } {
  const dot = token.indexOf(".");
  if (dot <= 0 || dot !== token.lastIndexOf(".")) return { ok: false, error: "malformed" };
  const body = token.slice(0, dot);
  const sig = Buffer.from(token.slice(dot + 1), "base64url");
  const want = mac(secret, body);
  // Compare in constant time; a length mismatch is already a failure (and timingSafeEqual would throw).
  if (sig.length !== want.length || !timingSafeEqual(sig, want)) return { ok: false, error: "bad_signature" };
  let claims: { p?: unknown; uid?: unknown; pid?: unknown; exp?: unknown; sid?: unknown };
  try {
    claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  } catch {
    return { ok: false, error: "malformed" };
  }
  if (claims.p !== PURPOSE) return { ok: false, error: "wrong_purpose" };
  if (!Number.isSafeInteger(claims.uid) || (claims.uid as number) <= 0 || !Number.isSafeInteger(claims.exp)) {
    return { ok: false, error: "malformed" };
  }
  if (typeof claims.sid !== "string" || claims.sid.length < 16 || claims.sid.length > 64) return { ok: false, error: "malformed" };
  if (claims.pid !== undefined && (!Number.isSafeInteger(claims.pid) || (claims.pid as number) <= 0)) return { ok: false, error: "malformed" };
  if ((claims.exp as number) * 1000 <= nowMs) return { ok: false, error: "expired" };
  const base = { uid: claims.uid as number, exp: claims.exp as number, sid: claims.sid };
  return { ok: true, claims: claims.pid === undefined ? base : { ...base, pid: claims.pid as number } };
}
