/** The users repository: registration rules, creation with a scrypt hash, and credential checks. */
import { Conflict, ValidationError } from "../../core/errors.js";
import { displayTextProblem } from "../../core/display-text.js";
import type { Sql } from "../../core/ports/sql.js";
import { isEmailAddress, normalizeEmail } from "./email.js";
import { dummyPasswordHash, hashPassword, needsRehash, verifyPassword } from "./passwords.js";
import { createPersonalProject } from "./projects.js";

export { normalizeEmail };

/** An account as the rest of Runwatch sees it (never the password hash). */
export interface User {
  readonly id: number;
  readonly name: string;
  readonly email: string;
}

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

export interface NewUser {
  readonly email: string;
  readonly name: string;
  readonly password: string;
}

/** Checks the registration fields; the first problem names its field. */
export function validateNewUser(u: NewUser): ValidationError | undefined {
  const email = normalizeEmail(u.email ?? "");
  if (!email) return new ValidationError({ message: "Enter your email address.", field: "email" });
  if (!isEmailAddress(email)) return new ValidationError({ message: "Enter a valid email address, like you@example.com.", field: "email" });
  const name = (u.name ?? "").trim();
  if (!name) return new ValidationError({ message: "Enter your name.", field: "name" });
  if (name.length > 100) return new ValidationError({ message: "The name can be at most 100 characters.", field: "name" });
  const problem = displayTextProblem(name);
  if (problem) return new ValidationError({ message: `The name ${problem}.`, field: "name" });
  const pw = u.password ?? "";
  if (pw.length < PASSWORD_MIN) return new ValidationError({ message: `The password needs at least ${PASSWORD_MIN} characters.`, field: "password" });
  if (pw.length > PASSWORD_MAX) return new ValidationError({ message: `The password can be at most ${PASSWORD_MAX} characters.`, field: "password" });
  return undefined;
}

const toUser = (r: { id: unknown; name: unknown; email: unknown }): User => ({ id: Number(r.id), name: String(r.name), email: String(r.email) });

/**
 * Creates a user and their personal project (docs/TEAMS.md); ValidationError for bad fields, Conflict when the
 * email is taken.
 */
export async function createUser(sql: Sql, input: NewUser): Promise<User> {
  const problem = validateNewUser(input);
  if (problem) throw problem;
  const email = normalizeEmail(input.email);
  const passwordHash = await hashPassword(input.password);
  return sql.transaction(async (tx) => {
    const rows = await tx.query<{ id: unknown; name: unknown; email: unknown }>(
      `INSERT INTO users (email, name, password_hash) VALUES ($1, $2, $3)
       ON CONFLICT ((lower(email))) DO NOTHING RETURNING id, name, email`,
      [email, input.name.trim(), passwordHash],
    );
    if (!rows[0]) throw new Conflict({ message: "An account with this email already exists.", field: "email" });
    const user = toUser(rows[0]);
    await createPersonalProject(tx, user);
    return user;
  });
}

export async function findUserByEmail(sql: Sql, email: string): Promise<User | undefined> {
  if (!isEmailAddress(normalizeEmail(email ?? ""))) return undefined;
  const rows = await sql.query<{ id: unknown; name: unknown; email: unknown }>("SELECT id, name, email FROM users WHERE lower(email) = lower($1)", [normalizeEmail(email)]);
  return rows[0] ? toUser(rows[0]) : undefined;
}

export async function findUserById(sql: Sql, id: number): Promise<User | undefined> {
  const rows = await sql.query<{ id: unknown; name: unknown; email: unknown }>("SELECT id, name, email FROM users WHERE id = $1", [id]);
  return rows[0] ? toUser(rows[0]) : undefined;
}

/** The user when email and password match and the account is enabled, else undefined. Unknown emails cost the same scrypt time. */
export async function checkCredentials(sql: Sql, email: string, password: string): Promise<User | undefined> {
  const address = normalizeEmail(email ?? "");
  const rows = isEmailAddress(address) ? await sql.query<{ id: unknown; name: unknown; email: unknown; password_hash: string; disabled_at: unknown }>(
    "SELECT id, name, email, password_hash, disabled_at FROM users WHERE lower(email) = lower($1)",
    [address],
  ) : [];
  const row = rows[0];
  const ok = await verifyPassword(password, row?.password_hash ?? (await dummyPasswordHash()));
  // A disabled account (stores/accounts/instance-admin.ts) fails as a wrong password does: nothing to probe.
  if (!row || !ok || row.disabled_at !== null) return undefined;
  if (needsRehash(row.password_hash)) {
    // Upgrade an old hash now that we have the password; only if nobody changed it meanwhile.
    await sql.query("UPDATE users SET password_hash = $1 WHERE id = $2 AND password_hash = $3", [await hashPassword(password), row.id, row.password_hash]);
  }
  return toUser(row);
}
