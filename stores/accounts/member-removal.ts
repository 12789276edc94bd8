/**
 * Removing a member takes effect at once, wherever it is done (the project settings page, `runwatch project
 * remove-member`): their next request finds no membership, and gateways close their open sockets on the project
 * and refuse their tokens for it (gateway/server.ts), because the removal is announced on REALTIME_REVOKE_CHANNEL.
 */
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { memberRevocation, REALTIME_REVOKE_CHANNEL } from "../../core/tokens.js";
import { removeMember } from "./projects.js";

export interface MemberRemoved {
  readonly userId: number;
  /** Set when the gateways could not be told: the removal stands, open sockets end when their token expires. */
  readonly announceError?: unknown;
}

export async function removeMemberNow(
  sql: Sql, pubsub: Pick<PubSub, "publish">, projectId: number, email: string, actorId: number | null,
): Promise<MemberRemoved> {
  const userId = await removeMember(sql, projectId, email, actorId);
  try {
    await pubsub.publish(REALTIME_REVOKE_CHANNEL, memberRevocation(userId, projectId));
    return { userId };
  } catch (announceError) {
    return { userId, announceError };
  }
}
