/**
 * PubSub on Redis, so any pipeline worker reaches every gateway. Two connections (a subscribed connection
 * cannot publish): the subscriber PSUBSCRIBEs `prefix*` once per prefix and ioredis re-subscribes after a
 * reconnect; the publisher fails fast while Redis is down instead of queueing.
 *
 * Channels are the deployment's (REDIS_PREFIX): the port's channel `project.3` is `<prefix>:project.3` in
 * Redis, so deployments sharing a Redis do not hear each other (their project ids overlap, and pub/sub ignores
 * Redis's database numbers). Handlers get the port's channel names.
 *
 * Delivery is best-effort, as the port says: a publish that cannot reach Redis is logged and dropped
 * (the dashboard reloads from the stores), so a Redis outage never stalls the pipeline.
 */
import { Redis } from "ioredis";
import type { PubSub } from "../ports/pubsub.js";
import { createLogger } from "../logger.js";

const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, (c) => `\\${c}`);

export function redisPubSub(url: string, prefix = "runwatch"): PubSub {
  const namespace = `${prefix}:`;
  const logger = createLogger(undefined, { component: "redis-pubsub" });
  const retryStrategy = (times: number) => Math.min(times * 100, 2_000);
  // No offline queue: while disconnected a publish fails at once. The timeout only guards against a hung
  // Redis, and is generous so that a CPU-starved host does not drop messages Redis did receive.
  const publisher = new Redis(url, { enableOfflineQueue: false, commandTimeout: 5_000, maxRetriesPerRequest: 1, retryStrategy, connectionName: "runwatch-pub" });
  // No ready check on the subscriber: its INFO check can race a PSUBSCRIBE queued before the connection was
  // up ("Connection in subscriber mode, only subscriber commands may be used"), losing the subscription.
  const subscriber = new Redis(url, { autoResubscribe: true, enableReadyCheck: false, retryStrategy, connectionName: "runwatch-sub" });
  for (const [name, c] of [["publisher", publisher], ["subscriber", subscriber]] as const) {
    let down = false;
    c.on("error", (err) => { if (!down) logger.warn(`redis ${name} connection error`, { error: err }); down = true; });
    c.on("ready", () => { if (down) logger.info(`redis ${name} reconnected`); down = false; });
  }

  const handlers = new Map<string, Set<(channel: string, message: string) => void>>();
  subscriber.on("pmessage", (pattern: string, channel: string, message: string) => {
    for (const h of handlers.get(pattern) ?? []) {
      try { h(channel.slice(namespace.length), message); } catch (err) { logger.error("pubsub handler failed", { error: err }); }
    }
  });

  let dropped = 0;
  let lastDropLog = 0;

  return {
    async publish(channel, message) {
      try {
        await publisher.publish(namespace + channel, message);
      } catch (err) {
        dropped++;
        if (Date.now() - lastDropLog > 5_000) {
          lastDropLog = Date.now();
          logger.warn("publish dropped (redis unavailable)", { dropped, error: err });
        }
      }
    },
    async subscribePrefix(channelPrefix, handler) {
      const pattern = `${globEscape(namespace + channelPrefix)}*`;
      let set = handlers.get(pattern);
      if (!set) {
        set = new Set();
        handlers.set(pattern, set);
        await subscriber.psubscribe(pattern);
      }
      set.add(handler);
      return async () => {
        const s = handlers.get(pattern);
        if (!s) return;
        s.delete(handler);
        if (!s.size) {
          handlers.delete(pattern);
          await subscriber.punsubscribe(pattern).catch(() => {});
        }
      };
    },
    async close() {
      handlers.clear();
      publisher.disconnect();
      subscriber.disconnect();
    },
  };
}
