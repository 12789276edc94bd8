/**
 * koa-session external store on the Postgres `sessions` table: the cookie carries only a random session id;
 * the data (user and CSRF token) stays server-side, so logout and expiry are real. Expired rows are ignored
 * on read and pruned at most every ten minutes.
 */
import type { Sql } from "../core/ports/sql.js";
import type { Logger } from "../core/logger.js";

const PRUNE_EVERY_MS = 10 * 60_000;

export interface SessionStore {
  get(key: string, maxAge: number | "session" | undefined): Promise<Record<string, unknown> | null>;
  set(key: string, sess: Record<string, unknown>, maxAge: number | "session" | undefined): Promise<void>;
  destroy(key: string): Promise<void>;
}

const ttlMs = (maxAge: number | "session" | undefined): number => (typeof maxAge === "number" ? maxAge : 86_400_000);

export function pgSessionStore(sql: Sql, logger: Logger): SessionStore {
  let lastPrune = 0;
  const prune = () => {
    const now = Date.now();
    if (now - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = now;
    sql.query("DELETE FROM sessions WHERE expires_at < now()").catch((err) => logger.warn("session prune failed", { err }));
  };
  return {
    async get(key) {
      const rows = await sql.query<{ data: unknown }>("SELECT data FROM sessions WHERE id = $1 AND expires_at > now()", [key]);
      const data = rows[0]?.data;
      if (data === undefined || data === null) return null;
      return (typeof data === "string" ? JSON.parse(data) : data) as Record<string, unknown>;
    },
    async set(key, sess, maxAge) {
      const expires = new Date(Date.now() + ttlMs(maxAge)).toISOString();
      const uid = typeof (sess.user as { id?: unknown } | undefined)?.id === "number" ? (sess.user as { id: number }).id : null;
      await sql.query(
        `INSERT INTO sessions (id, user_id, data, expires_at) VALUES ($1, $2, $3::jsonb, $4)
         ON CONFLICT (id) DO UPDATE SET user_id = EXCLUDED.user_id, data = EXCLUDED.data, expires_at = EXCLUDED.expires_at`,
        [key, uid, JSON.stringify(sess), expires],
      );
      prune();
    },
    async destroy(key) {
      await sql.query("DELETE FROM sessions WHERE id = $1", [key]);
    },
  };
}
