/**
 * A member's removal or new role, with what it takes from them, in one transaction (each step in the audit log):
 * removed, they lose the API keys they made in the project and the invitations they sent there; demoted to a role
 * that may not invite, they lose those invitations. Announcing the change to other processes is accounts/, the
 * feature, once the transaction is committed.
 */
import { can, type Role } from "../../core/access/roles.js";
import type { Sql } from "../../core/ports/sql.js";
import { countKeysMadeBy, revokeKeysMadeBy } from "./api-keys.js";
import { revokeInvitationsSentBy } from "./invitations.js";
import { removeMember, setMember, type Member } from "./projects.js";

export interface MemberRemoval {
  readonly userId: number;
  /** The names of the API keys they had made in the project, now revoked. */
  readonly keysRevoked: readonly string[];
  /** The addresses their open invitations to the project were for, now revoked. */
  readonly invitationsRevoked: readonly string[];
}

export async function commitMemberRemoval(sql: Sql, projectId: number, email: string, actorId: number | null): Promise<MemberRemoval> {
  return sql.transaction(async (tx) => {
    const userId = await removeMember(tx, projectId, email, actorId);
    const keysRevoked = await revokeKeysMadeBy(tx, projectId, userId, actorId, "its creator was removed from the project");
    const invitationsRevoked = await revokeInvitationsSentBy(tx, projectId, userId, actorId, "its sender was removed from the project");
    return { userId, keysRevoked, invitationsRevoked };
  });
}

export interface MemberRole {
  readonly member: Member;
  /** How many API keys they made in the project: they act with `member.role` from now on. */
  readonly keys: number;
  /** The addresses their open invitations to the project were for, revoked because the new role may not invite. */
  readonly invitationsRevoked: readonly string[];
}

/** Adds the member, or changes their role. */
export async function commitMemberRole(sql: Sql, projectId: number, email: string, role: Role, actorId: number | null): Promise<MemberRole> {
  return sql.transaction(async (tx) => {
    const member = await setMember(tx, projectId, email, role, actorId);
    const invitationsRevoked = can(member.role, "manage_members")
      ? []
      : await revokeInvitationsSentBy(tx, projectId, member.user_id, actorId, `its sender's role is now ${member.role}`);
    return { member, invitationsRevoked, keys: await countKeysMadeBy(tx, projectId, member.user_id) };
  });
}
