/**
 * Removing a member takes effect at once, wherever it is done (the project settings page, `runwatch project
 * remove-member`): their next request finds no membership; the API keys they made in the project are revoked and the
 * invitations they sent there withdrawn, in the same transaction (stores/accounts/member-changes.ts); then, once that
 * is committed, every web process forgets their keys (ACCESS_CHANGED_CHANNEL), and gateways close their open sockets
 * on the project and refuse their tokens for it (gateway/server.ts), because the removal is announced on
 * REALTIME_REVOKE_CHANNEL.
 */
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { memberRevocation, REALTIME_REVOKE_CHANNEL } from "../core/tokens.js";
import { commitMemberRemoval, type MemberRemoval } from "../stores/accounts/member-changes.js";
import { announceAccessChange } from "./access-changes.js";

export interface MemberRemoved extends MemberRemoval {
  /** Set when the gateways could not be told: the removal stands, open sockets end when their token expires. */
  readonly announceError?: unknown;
}

export async function removeMemberNow(
  sql: Sql, pubsub: Pick<PubSub, "publish">, projectId: number, email: string, actorId: number | null,
): Promise<MemberRemoved> {
  const removed = await commitMemberRemoval(sql, projectId, email, actorId);
  // The keys are revoked in the database already; this only makes other web processes stop trusting their copy.
  const keysError = await announceAccessChange(pubsub, { member: { userId: removed.userId, projectId } });
  try {
    await pubsub.publish(REALTIME_REVOKE_CHANNEL, memberRevocation(removed.userId, projectId));
    return keysError ? { ...removed, announceError: keysError } : removed;
  } catch (announceError) {
    return { ...removed, announceError };
  }
}
