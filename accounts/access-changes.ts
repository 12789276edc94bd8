/**
 * What an API key may do is its creator's role in the key's project (stores/accounts/api-keys.ts), and every web
 * process keeps the keys it has seen for a few seconds (web/middleware/api-key-auth.ts). When a member's role changes
 * or they are removed, a project is deleted, a user disabled or a key revoked, the change is announced on
 * ACCESS_CHANGED_CHANNEL so that every web process forgets the keys it covers at once, not when its cache expires.
 * The process that made the change forgets them itself too: over Redis its own message comes back later.
 */
import type { PubSub } from "../core/ports/pubsub.js";

export const ACCESS_CHANGED_CHANNEL = "access.changed";

/** Whose keys to forget: one member's in one project, a whole project's, a user's everywhere, or one key. */
export type AccessChange =
  | { readonly member: { readonly userId: number; readonly projectId: number } }
  | { readonly projectId: number }
  | { readonly userId: number }
  | { readonly keyId: number };

const id = (s: string | undefined): number | undefined => (s !== undefined && /^[1-9][0-9]{0,15}$/.test(s) ? Number(s) : undefined);

export function encodeAccessChange(c: AccessChange): string {
  if ("member" in c) return `member:${c.member.userId}:${c.member.projectId}`;
  if ("projectId" in c) return `project:${c.projectId}`;
  if ("userId" in c) return `user:${c.userId}`;
  return `key:${c.keyId}`;
}

/** The change a message announces; undefined for anything else (a message from a newer version is ignored). */
export function parseAccessChange(message: string): AccessChange | undefined {
  const [kind, a, b, ...rest] = message.split(":");
  if (rest.length > 0) return undefined;
  const first = id(a);
  if (first === undefined) return undefined;
  if (kind === "member") {
    const projectId = id(b);
    return projectId === undefined ? undefined : { member: { userId: first, projectId } };
  }
  if (b !== undefined) return undefined;
  if (kind === "project") return { projectId: first };
  if (kind === "user") return { userId: first };
  if (kind === "key") return { keyId: first };
  return undefined;
}

/**
 * Announces `change` to every web process. Resolves to the error when pub/sub could not be reached: the change
 * stands, and other processes see it when their cached keys expire (10 s).
 */
export async function announceAccessChange(pubsub: Pick<PubSub, "publish">, change: AccessChange): Promise<unknown> {
  try {
    await pubsub.publish(ACCESS_CHANGED_CHANNEL, encodeAccessChange(change));
    return undefined;
  } catch (err) {
    return err;
  }
}
