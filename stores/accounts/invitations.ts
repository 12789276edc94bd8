/**
 * Invitations to a project (docs/TEAMS.md, Invitations): an admin invites an e-mail address with a role; the link's
 * token is 32 random bytes, shown once (or mailed), stored as its SHA-256. A link works once, for 7 days, until
 * revoked, only for an account with the invited address, and only while whoever sent it may still invite: an
 * address is not verified at registration, so an invitation must not outlive the trust in its sender (removing or
 * demoting them revokes their open invitations, and a link is checked against their role when it is used).
 */
import { randomBytes } from "node:crypto";
import { can, isRole, ROLES, type Role } from "../../core/access/roles.js";
import { AuthError, Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { hashApiKey } from "../../core/ids.js";
import type { Sql } from "../../core/ports/sql.js";
import { isEmailAddress, normalizeEmail } from "./email.js";
import { audit, type Project } from "./projects.js";

export const INVITATION_DAYS = 7;

export interface Invitation {
  readonly id: number;
  readonly project_id: number;
  readonly email: string;
  readonly role: Role;
  readonly invited_by: string | null;
  readonly created_at: string;
  readonly expires_at: string;
  readonly expired: boolean;
}

type Row = { id: unknown; project_id: unknown; email: string; role: string; invited_by: string | null; created_at: unknown; expires_at: unknown };
const toInvitation = (r: Row): Invitation => {
  const expires = new Date(r.expires_at as string);
  return {
    id: Number(r.id),
    project_id: Number(r.project_id),
    email: r.email,
    role: r.role as Role,
    invited_by: r.invited_by,
    created_at: new Date(r.created_at as string).toISOString(),
    expires_at: expires.toISOString(),
    expired: expires.getTime() <= Date.now(),
  };
};
const COLUMNS = "i.id, i.project_id, i.email, i.role, u.email AS invited_by, i.created_at, i.expires_at";

/** Invites `email` to the project with `role`; the token (for the link) is returned only here. */
export async function createInvitation(
  sql: Sql, projectId: number, email: string, role: string, invitedBy: number,
): Promise<{ token: string; invitation: Invitation }> {
  const address = normalizeEmail(email ?? "");
  if (!isEmailAddress(address)) throw new ValidationError({ message: "enter a valid e-mail address, like you@example.com", field: "email" });
  if (!isRole(role) || role === "owner") throw new ValidationError({ message: "the role must be viewer, member or admin", field: "role" });
  const token = randomBytes(32).toString("hex");
  return sql.transaction(async (tx) => {
    const member = await tx.query(
      "SELECT 1 FROM project_members m JOIN users u ON u.id = m.user_id WHERE m.project_id = $1 AND lower(u.email) = $2",
      [projectId, address],
    );
    if (member.length > 0) throw new Conflict({ code: "already_member", message: `${address} is already a member`, field: "email" });
    const rows = await tx.query<Row>(
      `WITH i AS (
         INSERT INTO project_invitations (project_id, email, role, token_hash, invited_by, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(days => $6)) RETURNING *
       )
       SELECT ${COLUMNS} FROM i LEFT JOIN users u ON u.id = i.invited_by`,
      [projectId, address, role, hashApiKey(token), invitedBy, INVITATION_DAYS],
    );
    await audit(tx, projectId, invitedBy, "invitation.create", address, { role });
    return { token, invitation: toInvitation(rows[0]!) };
  });
}

/** The project's invitations not accepted nor revoked (expired ones included, marked), newest first. */
export async function pendingInvitations(sql: Sql, projectId: number): Promise<Invitation[]> {
  const rows = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM project_invitations i LEFT JOIN users u ON u.id = i.invited_by
     WHERE i.project_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL ORDER BY i.created_at DESC, i.id DESC`,
    [projectId],
  );
  return rows.map(toInvitation);
}

export async function revokeInvitation(sql: Sql, projectId: number, id: number, actorId: number): Promise<void> {
  await sql.transaction(async (tx) => {
    const rows = await tx.query<{ email: string }>(
      "UPDATE project_invitations SET revoked_at = now() WHERE id = $1 AND project_id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email",
      [id, projectId],
    );
    if (!rows[0]) throw new NotFound({ resource: "invitation", message: "no such invitation" });
    await audit(tx, projectId, actorId, "invitation.revoke", rows[0].email);
  });
}

const unusable = () => new NotFound({
  resource: "invitation",
  message: "this invitation link is not valid: it was used, revoked or mistyped, it expired, or whoever sent it may no longer invite members",
});

/** The roles that may invite (manage_members), for SQL. */
const INVITING_ROLES = ROLES.filter((r) => can(r, "manage_members"));

/** An open invitation whose sender is still a member allowed to invite (the sender's account gone: none). */
const OPEN = `i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
  AND EXISTS (SELECT 1 FROM project_members s WHERE s.project_id = i.project_id AND s.user_id = i.invited_by AND s.role = ANY($2::text[]))`;

/** The open invitation of a link's token, with its project; NotFound when the link cannot be used. */
export async function invitationOf(sql: Sql, token: string): Promise<{ invitation: Invitation; project: Project }> {
  if (!/^[0-9a-f]{64}$/.test(token)) throw unusable();
  const rows = await sql.query<Row & { slug: string; name: string; personal_of: unknown; p_created_at: unknown }>(
    `SELECT ${COLUMNS}, p.slug, p.name, p.personal_of, p.created_at AS p_created_at
     FROM project_invitations i JOIN projects p ON p.id = i.project_id LEFT JOIN users u ON u.id = i.invited_by
     WHERE i.token_hash = $1 AND ${OPEN}`,
    [hashApiKey(token), INVITING_ROLES],
  );
  const r = rows[0];
  if (!r) throw unusable();
  const project: Project = { id: Number(r.project_id), slug: r.slug, name: r.name, personal: r.personal_of !== null, created_at: new Date(r.p_created_at as string).toISOString() };
  return { invitation: toInvitation(r), project };
}

/**
 * Accepts an invitation for `user`, whose e-mail must be the invited one: they become a member with its role (a
 * member already: their role becomes the invited one, the owner's never changes). The link is then used up.
 */
export async function acceptInvitation(sql: Sql, token: string, user: { id: number; email: string }): Promise<Project> {
  const { invitation, project } = await invitationOf(sql, token);
  if (normalizeEmail(user.email) !== invitation.email) {
    throw new AuthError({ code: "forbidden", message: `this invitation is for ${invitation.email}: log in with that address to accept it` });
  }
  await sql.transaction(async (tx) => {
    // Checked again as it is used up: accepted or revoked meanwhile, or its sender removed or demoted meanwhile.
    const used = await tx.query(
      `UPDATE project_invitations i SET accepted_at = now(), accepted_by = $3 WHERE i.token_hash = $1 AND ${OPEN} RETURNING id`,
      [hashApiKey(token), INVITING_ROLES, user.id],
    );
    if (used.length === 0) throw unusable();
    await tx.query(
      `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role WHERE project_members.role <> 'owner'`,
      [project.id, user.id, invitation.role],
    );
    await audit(tx, project.id, user.id, "invitation.accept", invitation.email, { role: invitation.role });
  });
  return project;
}

/**
 * Revokes the open invitations `userId` sent to the project (inside the transaction that removes or demotes them),
 * each recorded in the audit log with `why`; the invited addresses.
 */
export async function revokeInvitationsSentBy(tx: Sql, projectId: number, userId: number, actorId: number | null, why: string): Promise<string[]> {
  const rows = await tx.query<{ email: string }>(
    `UPDATE project_invitations SET revoked_at = now()
     WHERE project_id = $1 AND invited_by = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email`,
    [projectId, userId],
  );
  for (const r of rows) await audit(tx, projectId, actorId, "invitation.revoke", r.email, { why });
  return rows.map((r) => r.email);
}
