/**
 * Adding a member or changing their role takes effect at once, wherever it is done (the project settings page,
 * `runwatch project add-member`): the API keys they made in the project act with the new role (every web process
 * forgets its copy of them once the change is committed: ACCESS_CHANGED_CHANNEL), and a member who may no longer
 * invite loses the open invitations they sent (stores/accounts/member-changes.ts, each in the audit log).
 */
import type { Role } from "../core/access/roles.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { commitMemberRole, type MemberRole } from "../stores/accounts/member-changes.js";
import { announceAccessChange } from "./access-changes.js";

export interface MemberSet extends MemberRole {
  /** Set when other web processes could not be told: they see the new role when their cached keys expire (10 s). */
  readonly announceError?: unknown;
}

export async function setMemberNow(
  sql: Sql, pubsub: Pick<PubSub, "publish">, projectId: number, email: string, role: Role, actorId: number | null,
): Promise<MemberSet> {
  const set = await commitMemberRole(sql, projectId, email, role, actorId);
  const announceError = await announceAccessChange(pubsub, { member: { userId: set.member.user_id, projectId } });
  return announceError ? { ...set, announceError } : set;
}
