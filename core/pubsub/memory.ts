import type { PubSub } from "../ports/pubsub.js";

/** In-process pub/sub for the embedded default: pipeline and gateway share one process. */
export function memoryPubSub(): PubSub {
  const subs = new Set<{ prefix: string; handler: (c: string, m: string) => void }>();
  return {
    async publish(channel, message) {
      for (const s of subs) {
        if (!channel.startsWith(s.prefix)) continue;
        try { s.handler(channel, message); } catch (err) { console.error("pubsub handler failed", err); }
      }
    },
    async subscribePrefix(prefix, handler) {
      const sub = { prefix, handler };
      subs.add(sub);
      return async () => { subs.delete(sub); };
    },
    async close() { subs.clear(); },
  };
}
