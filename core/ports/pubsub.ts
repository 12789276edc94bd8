/**
 * Fan-out from pipeline workers to gateways (in-process embedded, Redis pub/sub in scale mode).
 * Channels are `user.{userId}` (what that user's keys sent) and `project.{projectId}` (what the project's members see:
 * docs/TEAMS.md). Delivery is best-effort and live: the dashboard reloads state from the
 * stores, so a missed message costs freshness, never data.
 */
export interface PubSub {
  publish(channel: string, message: string): Promise<void>;
  /** Receives every message on channels starting with `prefix` (e.g. "user."). Returns an unsubscribe. */
  subscribePrefix(prefix: string, handler: (channel: string, message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const userChannel = (userId: number | string): string => `user.${userId}`;
export const projectChannel = (projectId: number | string): string => `project.${projectId}`;
