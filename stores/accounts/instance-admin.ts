/**
 * The instance admin's view of accounts (docs/TEAMS.md, Instance admin): who is an admin, every user with their
 * projects, and disabling a user (no login, no session, no key of theirs) or enabling them again.
 */
import { Conflict, NotFound } from "../../core/errors.js";
import type { Sql } from "../../core/ports/sql.js";
import { normalizeEmail } from "./email.js";

/**
 * Whether the user administers the instance: listed in RUNWATCH_ADMIN_EMAILS, or, when none is, the first user who
 * is not the demo account (`runwatch demo`, whose password is public, is never an admin).
 */
export async function isInstanceAdmin(sql: Sql, user: { id: number; email: string }, adminEmails: readonly string[]): Promise<boolean> {
  const rows = await sql.query<{ id: unknown; demo: boolean }>(
    "SELECT (SELECT id FROM users WHERE NOT demo ORDER BY created_at, id LIMIT 1) AS id, coalesce((SELECT demo FROM users WHERE id = $1), false) AS demo",
    [user.id],
  );
  if (rows[0]?.demo) return false;
  if (adminEmails.length > 0) return adminEmails.includes(normalizeEmail(user.email));
  return rows[0]?.id != null && Number(rows[0].id) === user.id;
}

/** Marks the account `runwatch demo` made, so it never administers the instance. */
export async function markDemoAccount(sql: Sql, userId: number): Promise<void> {
  await sql.query("UPDATE users SET demo = true WHERE id = $1", [userId]);
}

export interface UserSummary {
  readonly id: number;
  readonly email: string;
  readonly name: string;
  readonly created_at: string;
  readonly disabled_at: string | null;
  readonly projects: number;
}

/** Every user, newest first. */
export async function allUsers(sql: Sql): Promise<UserSummary[]> {
  const rows = await sql.query<{ id: unknown; email: string; name: string; created_at: unknown; disabled_at: unknown; projects: unknown }>(
    `SELECT u.id, u.email, u.name, u.created_at, u.disabled_at,
            (SELECT count(*) FROM project_members m WHERE m.user_id = u.id) AS projects
     FROM users u ORDER BY u.created_at DESC, u.id DESC`,
  );
  return rows.map((r) => ({
    id: Number(r.id),
    email: r.email,
    name: r.name,
    created_at: new Date(r.created_at as string).toISOString(),
    disabled_at: r.disabled_at === null ? null : new Date(r.disabled_at as string).toISOString(),
    projects: Number(r.projects),
  }));
}

/**
 * Disables a user (their sessions are deleted, so every page they have open asks for a login at its next request)
 * or enables them again. An admin cannot disable themselves.
 */
export async function setUserDisabled(sql: Sql, userId: number, disabled: boolean, actorId: number): Promise<void> {
  if (disabled && userId === actorId) throw new Conflict({ code: "self", message: "you cannot disable your own account" });
  await sql.transaction(async (tx) => {
    const rows = await tx.query(
      `UPDATE users SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) ELSE NULL END WHERE id = $1 RETURNING id`,
      [userId, disabled],
    );
    if (rows.length === 0) throw new NotFound({ resource: "user", message: "no such user" });
    if (disabled) await tx.query("DELETE FROM sessions WHERE user_id = $1", [userId]);
  });
}
