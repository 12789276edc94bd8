/**
 * The api_keys repository. A key is 32 random bytes in hex, shown once at creation; only its SHA-256 hash
 * and its last four characters (to tell keys apart in the list) are stored.
 */
import { NotFound, ValidationError } from "../../core/errors.js";
import { hashApiKey, newApiKey } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";

/** Who a valid key belongs to (what ingest needs on the hot path). */
export interface KeyPrincipal {
  readonly keyId: number;
  readonly userId: number;
  /** Epoch ms, or null for a key that never expires. */
  readonly expiresAt: number | null;
}

export interface ApiKeyInfo {
  readonly id: number;
  readonly name: string;
  readonly last4: string;
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly last_used_at: string | null;
  readonly expired: boolean;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

export async function findActiveKeyByHash(sql: Sql, hash: string): Promise<KeyPrincipal | null> {
  const rows = await sql.query<{ id: string | number; user_id: string | number; expires_at: unknown }>(
    "SELECT id, user_id, expires_at FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL",
    [hash],
  );
  const r = rows[0];
  if (!r) return null;
  return { keyId: Number(r.id), userId: Number(r.user_id), expiresAt: r.expires_at == null ? null : new Date(r.expires_at as string).getTime() };
}

export async function touchKey(sql: Sql, keyId: number): Promise<void> {
  await sql.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [keyId]);
}

export const MAX_KEY_NAME = 100;

/** Parses an expiry given as a duration ("30d", "12h", "90m", "1y") or an ISO date/time; "" or "never" → none. */
export function parseExpiry(input: string | undefined, now: Date = new Date()): Date | null {
  const s = (input ?? "").trim();
  if (s === "" || s.toLowerCase() === "never") return null;
  const m = /^(\d+)\s*([mhdwy])$/i.exec(s);
  if (m) {
    const n = Number(m[1]);
    const unitMs = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 }[m[2]!.toLowerCase() as "m"];
    if (n <= 0) throw new ValidationError({ message: "the expiry must be in the future", field: "expires" });
    return new Date(now.getTime() + n * unitMs);
  }
  const t = /^\d{4}-\d{2}-\d{2}$/.test(s) ? Date.parse(`${s}T23:59:59.999Z`) : Date.parse(s);
  if (Number.isNaN(t)) {
    throw new ValidationError({ message: "expiry must be a duration like 30d or an ISO date like 2027-01-31", field: "expires" });
  }
  if (t <= now.getTime()) throw new ValidationError({ message: "the expiry must be in the future", field: "expires" });
  return new Date(t);
}

/** Creates a key and returns it in clear text: the only time it is ever available. */
export async function createApiKey(
  sql: Sql,
  userId: number,
  name: string,
  expiresAt: Date | null,
): Promise<{ key: string; info: ApiKeyInfo }> {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError({ message: "the key needs a name", field: "name" });
  if (trimmed.length > MAX_KEY_NAME) throw new ValidationError({ message: `the name is longer than ${MAX_KEY_NAME} characters`, field: "name" });
  const key = newApiKey();
  const rows = await sql.query<Record<string, unknown>>(
    `INSERT INTO api_keys (user_id, name, key_hash, last4, expires_at)
     VALUES ($1, $2, $3, $4, $5)
     RETURNING id, name, last4, created_at, expires_at, last_used_at`,
    [userId, trimmed, hashApiKey(key), key.slice(-4), expiresAt ? expiresAt.toISOString() : null],
  );
  return { key, info: toInfo(rows[0]!) };
}

function toInfo(r: Record<string, unknown>): ApiKeyInfo {
  const expires = iso(r.expires_at);
  return {
    id: Number(r.id),
    name: String(r.name),
    last4: String(r.last4),
    created_at: iso(r.created_at)!,
    expires_at: expires,
    last_used_at: iso(r.last_used_at),
    expired: expires !== null && Date.parse(expires) <= Date.now(),
  };
}

/** The user's keys that are not revoked, newest first. */
export async function listApiKeys(sql: Sql, userId: number): Promise<ApiKeyInfo[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT id, name, last4, created_at, expires_at, last_used_at FROM api_keys
     WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`,
    [userId],
  );
  return rows.map(toInfo);
}

/** Revokes one of the user's keys; NotFound when it is not theirs or already revoked. */
export async function revokeApiKey(sql: Sql, userId: number, keyId: number): Promise<void> {
  const rows = await sql.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL RETURNING id", [keyId, userId]);
  if (rows.length === 0) throw new NotFound({ resource: "api_key", message: "no such API key" });
}
