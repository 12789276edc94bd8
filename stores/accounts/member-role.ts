/**
 * Adding a member or changing their role takes effect at once, wherever it is done (the project settings page,
 * `runwatch project add-member`): the API keys they made in the project act with the new role (every web process
 * forgets its copy of them: ACCESS_CHANGED_CHANNEL), and a member who may no longer invite loses the open
 * invitations they sent (each in the audit log).
 */
import { can, type Role } from "../../core/access/roles.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { announceAccessChange } from "./access-changes.js";
import { countKeysMadeBy } from "./api-keys.js";
import { revokeInvitationsSentBy } from "./invitations.js";
import { setMember, type Member } from "./projects.js";

export interface MemberSet {
  readonly member: Member;
  /** How many API keys they made in the project: they act with `member.role` from now on. */
  readonly keys: number;
  /** The addresses their open invitations to the project were for, revoked because the new role may not invite. */
  readonly invitationsRevoked: readonly string[];
  /** Set when other web processes could not be told: they see the new role when their cached keys expire (10 s). */
  readonly announceError?: unknown;
}

export async function setMemberNow(
  sql: Sql, pubsub: Pick<PubSub, "publish">, projectId: number, email: string, role: Role, actorId: number | null,
): Promise<MemberSet> {
  const set = await sql.transaction(async (tx) => {
    const member = await setMember(tx, projectId, email, role, actorId);
    const invitationsRevoked = can(member.role, "manage_members")
      ? []
      : await revokeInvitationsSentBy(tx, projectId, member.user_id, actorId, `its sender's role is now ${member.role}`);
    return { member, invitationsRevoked, keys: await countKeysMadeBy(tx, projectId, member.user_id) };
  });
  const announceError = await announceAccessChange(pubsub, { member: { userId: set.member.user_id, projectId } });
  return announceError ? { ...set, announceError } : set;
}
