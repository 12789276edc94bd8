/**
 * Single sign-on accounts (docs/TEAMS.md): the user an OpenID Connect identity logs in. An identity seen before logs
 * in its user; a new one is linked to the account with its verified e-mail, or makes a new account (with its
 * personal project). Unverified addresses, domains not allowed and disabled users are refused.
 *
 * Linking by e-mail trusts both sides' address. The provider's must be verified; the account's too, or anyone could
 * register a colleague's address with a password before their first sign-in and share the account it then becomes
 * (and keep the keys and memberships made meanwhile). Registration verifies no address, so an account's is verified
 * only once an identity provider vouched for it (`users.email_verified_at`): one that made the account, or one its
 * owner linked while logged in with its password (`signedIn`). Any other account with the address is refused, with
 * what to do. A first sign-in, making the account or linking it, joins the configured default project.
 */
import type { Role } from "../../core/access/roles.js";
import { AuthError, Conflict } from "../../core/errors.js";
import type { Sql } from "../../core/ports/sql.js";
import { repairString } from "../../core/events/storable.js";
import { isEmailAddress, normalizeEmail } from "./email.js";
import { audit, createPersonalProject, findProjectBySlug } from "./projects.js";
import type { User } from "./users.js";

export interface OidcIdentity {
  readonly issuer: string;
  readonly subject: string;
  readonly email?: string;
  readonly emailVerified?: boolean;
  readonly name?: string;
}

export interface SsoPolicy {
  readonly allowedDomains: readonly string[];
  readonly defaultProject?: string;
  readonly defaultRole: Exclude<Role, "owner">;
}

/** A password hash no password matches (passwords.ts verifies only scrypt hashes): the account signs in by SSO. */
const NO_PASSWORD = "sso";

const refuse = (message: string) => new AuthError({ code: "forbidden", message });

/** The Conflict code of a sign-in refused because an account with the address exists and its address is unverified. */
export const UNVERIFIED_ACCOUNT = "unverified_account";

/**
 * The account `identity` signs in as; AuthError (forbidden) when it may not, Conflict (UNVERIFIED_ACCOUNT) when an
 * account with its address exists whose address is unverified and `signedIn` (the user logged in here now) is not it.
 */
export async function signInWithIdentity(
  sql: Sql, identity: OidcIdentity, policy: SsoPolicy, signedIn?: { readonly id: number },
): Promise<User & { created: boolean; linked: boolean }> {
  const known = await sql.query<{ id: unknown; name: string; email: string; disabled_at: unknown }>(
    `SELECT u.id, u.name, u.email, u.disabled_at FROM user_identities i JOIN users u ON u.id = i.user_id
     WHERE i.issuer = $1 AND i.subject = $2`,
    [identity.issuer, identity.subject],
  );
  if (known[0]) {
    if (known[0].disabled_at !== null) throw refuse("this account is disabled: ask the instance's admin");
    await sql.query("UPDATE user_identities SET last_login = now() WHERE issuer = $1 AND subject = $2", [identity.issuer, identity.subject]);
    return { id: Number(known[0].id), name: known[0].name, email: known[0].email, created: false, linked: false };
  }
  const email = normalizeEmail(identity.email ?? "");
  if (email === "") throw refuse("the identity provider sent no e-mail address (ask it for the `email` scope)");
  // A provider's claims are foreign input: an address Postgres cannot store (U+0000, a lone surrogate) is not one.
  if (!isEmailAddress(email) || repairString(email) !== email) throw refuse("the identity provider sent an e-mail address that is not one");
  // Linking to an existing account, or naming a new one, trusts the address: only a verified one.
  if (identity.emailVerified !== true) throw refuse(`the identity provider has not verified ${email}`);
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (policy.allowedDomains.length > 0 && !policy.allowedDomains.includes(domain)) throw refuse(`${domain} addresses may not sign in here`);
  return sql.transaction(async (tx) => {
    let rows = await tx.query<{ id: unknown; name: string; email: string; disabled_at: unknown; email_verified_at: unknown }>(
      "SELECT id, name, email, disabled_at, email_verified_at FROM users WHERE lower(email) = $1 FOR UPDATE",
      [email],
    );
    let created = false;
    if (!rows[0]) {
      const name = repairString((identity.name ?? "").trim()).slice(0, 100) || email.split("@")[0]!;
      rows = await tx.query(
        "INSERT INTO users (email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, now()) RETURNING id, name, email, disabled_at, email_verified_at",
        [email, name, NO_PASSWORD],
      );
      created = true;
    }
    const row = rows[0]!;
    if (row.disabled_at !== null) throw refuse("this account is disabled: ask the instance's admin");
    const user = { id: Number(row.id), name: row.name, email: row.email };
    if (row.email_verified_at === null) {
      // The password's owner, logged in, proves the account is theirs; the provider has verified the address.
      if (signedIn?.id !== user.id) {
        throw new Conflict({
          code: UNVERIFIED_ACCOUNT,
          message: `An account with ${email} already exists, made with a password, and its address was never verified, so single sign-on ` +
            "does not take it over. If it is yours, log in with its password first: single sign-on then links to it. If it is not, ask " +
            "the instance's admin.",
        });
      }
      await tx.query("UPDATE users SET email_verified_at = now() WHERE id = $1", [user.id]);
    }
    await tx.query("INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3)", [identity.issuer, identity.subject, user.id]);
    if (created) await createPersonalProject(tx, user);
    await joinDefaultProject(tx, user, policy);
    return { ...user, created, linked: !created };
  });
}

/** What every first sign-in gets, made or linked: the default project with the default role (a member already keeps theirs). */
async function joinDefaultProject(tx: Sql, user: User, policy: SsoPolicy): Promise<void> {
  const project = policy.defaultProject ? await findProjectBySlug(tx, policy.defaultProject) : undefined;
  if (!project) return;
  const added = await tx.query(
    "INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING user_id",
    [project.id, user.id, policy.defaultRole],
  );
  if (added.length > 0) await audit(tx, project.id, null, "member.add", user.email, { role: policy.defaultRole, via: "single sign-on" });
}
