/**
 * The api_keys repository. A key is 32 random bytes in hex, shown once at creation; only its SHA-256 hash
 * and its last four characters (to tell keys apart in the list) are stored. A key belongs to a project and carries
 * a scope (core/access/roles.ts KeyScope); `user_id` is the user who created it. A key acts with its creator's
 * current role in its project: it works only while they are a member, and removing them revokes it.
 */
import { isKeyScope, isRole, type KeyScope, type Role } from "../../core/access/roles.js";
import { NotFound, ValidationError } from "../../core/errors.js";
import { hashApiKey, newApiKey } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { audit } from "./projects.js";

/** Who a valid key belongs to (what ingest needs on the hot path). */
export interface KeyPrincipal {
  readonly keyId: number;
  /** The user who created the key: events it sends are recorded as theirs. */
  readonly userId: number;
  readonly projectId: number;
  readonly scope: KeyScope;
  /** The creator's role in the key's project when the key was looked up: what the key may do there. */
  readonly role: Role;
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
  readonly scope: KeyScope;
  readonly project_id: number;
  /** The e-mail of the user who created it (null once their account is gone). */
  readonly created_by: string | null;
}

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

/**
 * The key's principal when it is not revoked and its creator is enabled and still a member of its project, with
 * their role there (one indexed lookup: the membership is joined, so checking the role costs ingest no query).
 */
export async function findActiveKeyByHash(sql: Sql, hash: string): Promise<KeyPrincipal | null> {
  const rows = await sql.query<{ id: string | number; user_id: string | number; project_id: string | number; scope: string; role: string; expires_at: unknown }>(
    `SELECT k.id, k.user_id, k.project_id, k.scope, m.role, k.expires_at FROM api_keys k
       JOIN users u ON u.id = k.user_id
       JOIN project_members m ON m.project_id = k.project_id AND m.user_id = k.user_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL AND u.disabled_at IS NULL`,
    [hash],
  );
  const r = rows[0];
  if (!r || !isKeyScope(r.scope) || !isRole(r.role)) return null;
  return {
    keyId: Number(r.id),
    userId: Number(r.user_id),
    projectId: Number(r.project_id),
    scope: r.scope,
    role: r.role,
    expiresAt: r.expires_at == null ? null : new Date(r.expires_at as string).getTime(),
  };
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

export interface NewKeyOptions {
  /** The project the key belongs to; the creator's personal project when absent. */
  readonly projectId?: number;
  readonly scope?: KeyScope;
}

const KEY_COLUMNS = "k.id, k.name, k.last4, k.created_at, k.expires_at, k.last_used_at, k.scope, k.project_id, u.email AS created_by";

/**
 * Creates a key and returns it in clear text: the only time it is ever available. Whether the creator may create
 * keys in the project is the caller's check (core/access/roles.ts manage_keys).
 */
export async function createApiKey(
  sql: Sql,
  userId: number,
  name: string,
  expiresAt: Date | null,
  options: NewKeyOptions = {},
): Promise<{ key: string; info: ApiKeyInfo }> {
  const trimmed = name.trim();
  if (!trimmed) throw new ValidationError({ message: "the key needs a name", field: "name" });
  if (trimmed.length > MAX_KEY_NAME) throw new ValidationError({ message: `the name is longer than ${MAX_KEY_NAME} characters`, field: "name" });
  const scope = options.scope ?? "read+ingest";
  if (!isKeyScope(scope)) throw new ValidationError({ message: "the scope must be ingest or read+ingest", field: "scope" });
  const key = newApiKey();
  const projectId = options.projectId ?? userId;
  const rows = await sql.transaction(async (tx) => {
    await audit(tx, projectId, userId, "key.create", trimmed, { scope, last4: key.slice(-4) });
    return tx.query<Record<string, unknown>>(
      `WITH k AS (
         INSERT INTO api_keys (user_id, project_id, scope, name, key_hash, last4, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         RETURNING *
       )
       SELECT ${KEY_COLUMNS} FROM k LEFT JOIN users u ON u.id = k.user_id`,
      [userId, projectId, scope, trimmed, hashApiKey(key), key.slice(-4), expiresAt ? expiresAt.toISOString() : null],
    );
  });
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
    scope: r.scope as KeyScope,
    project_id: Number(r.project_id),
    created_by: r.created_by === null || r.created_by === undefined ? null : String(r.created_by),
  };
}

/** The project's keys that are not revoked, newest first. */
export async function listApiKeys(sql: Sql, projectId: number): Promise<ApiKeyInfo[]> {
  const rows = await sql.query<Record<string, unknown>>(
    `SELECT ${KEY_COLUMNS} FROM api_keys k LEFT JOIN users u ON u.id = k.user_id
     WHERE k.project_id = $1 AND k.revoked_at IS NULL ORDER BY k.created_at DESC, k.id DESC`,
    [projectId],
  );
  return rows.map(toInfo);
}

/** Revokes one of the project's keys; NotFound when it is not the project's or already revoked. */
export async function revokeApiKey(sql: Sql, projectId: number, keyId: number, actorId: number | null): Promise<ApiKeyInfo> {
  return sql.transaction(async (tx) => {
    const rows = await tx.query<Record<string, unknown>>(
      `WITH k AS (UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND project_id = $2 AND revoked_at IS NULL RETURNING *)
       SELECT ${KEY_COLUMNS} FROM k LEFT JOIN users u ON u.id = k.user_id`,
      [keyId, projectId],
    );
    if (rows.length === 0) throw new NotFound({ resource: "api_key", message: "no such API key" });
    const info = toInfo(rows[0]!);
    await audit(tx, projectId, actorId, "key.revoke", info.name, { last4: info.last4 });
    return info;
  });
}

/**
 * Revokes the keys `userId` made in the project (inside the transaction that removes them from it), each recorded in
 * the audit log with `why`; their names.
 */
export async function revokeKeysMadeBy(tx: Sql, projectId: number, userId: number, actorId: number | null, why: string): Promise<string[]> {
  const rows = await tx.query<{ name: string; last4: string }>(
    `UPDATE api_keys SET revoked_at = now() WHERE project_id = $1 AND user_id = $2 AND revoked_at IS NULL
     RETURNING name, last4`,
    [projectId, userId],
  );
  for (const r of rows) await audit(tx, projectId, actorId, "key.revoke", r.name, { last4: r.last4, why });
  return rows.map((r) => r.name);
}

/** How many of the project's keys `userId` made that are not revoked (what their role now governs). */
export async function countKeysMadeBy(sql: Sql, projectId: number, userId: number): Promise<number> {
  const rows = await sql.query<{ n: unknown }>("SELECT count(*) AS n FROM api_keys WHERE project_id = $1 AND user_id = $2 AND revoked_at IS NULL", [projectId, userId]);
  return Number(rows[0]?.n ?? 0);
}
