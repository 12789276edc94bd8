/**
 * The one place where adapters are chosen. Each port independently picks its server adapter when its
 * env var is set (KAFKA_BROKERS, CLICKHOUSE_URL, DATABASE_URL, REDIS_URL) and its embedded adapter otherwise.
 * Ports are effect services (Context.Tag) built by scoped Layers, so shutdown releases them in reverse order.
 */
import { Context, Effect, Exit, Layer, Scope } from "effect";
import path from "node:path";
import type { Config } from "./config.js";
import type { EventLog } from "./ports/event-log.js";
import type { ClickHouse } from "./ports/clickhouse.js";
import type { Sql } from "./ports/sql.js";
import type { RateLimiter } from "./ports/rate-limiter.js";
import type { PubSub } from "./ports/pubsub.js";
import { memoryRateLimiter } from "./limiter/memory.js";
import { LaneRouter, type Lane } from "./log/lane-router.js";
import { lanedLog } from "./log/lanes.js";
import { memoryPubSub } from "./pubsub/memory.js";

export class EventLogService extends Context.Tag("runwatch/EventLog")<EventLogService, EventLog>() {}
export class ClickHouseService extends Context.Tag("runwatch/ClickHouse")<ClickHouseService, ClickHouse>() {}
export class SqlService extends Context.Tag("runwatch/Sql")<SqlService, Sql>() {}
export class RateLimiterService extends Context.Tag("runwatch/RateLimiter")<RateLimiterService, RateLimiter>() {}
export class PubSubService extends Context.Tag("runwatch/PubSub")<PubSubService, PubSub>() {}

const scoped = <I, S extends { close(): Promise<void> }>(tag: Context.Tag<I, S>, open: () => Promise<S>) =>
  Layer.scoped(tag, Effect.acquireRelease(Effect.promise(open), (s) => Effect.promise(() => s.close())));

/**
 * The event log is two logs of one kind, its lanes (core/log/lanes.ts): the topics KAFKA_TOPIC and KAFKA_TOPIC.bulk,
 * or the file logs <data dir>/log and <data dir>/log-bulk. Both are always read; RUNWATCH_BULK_LANE_BYTES=0 only
 * stops new appends from going to the bulk lane.
 */
async function openEventLog(c: Config): Promise<EventLog> {
  const openLane = async (lane: Lane): Promise<EventLog> =>
    c.kafkaBrokers
      ? (await import("./log/kafka-log.js")).openKafkaLog(c, lane === "bulk" ? { topic: `${c.kafkaTopic}.bulk`, partitionsLike: c.kafkaTopic } : {})
      : (await import("./log/file-log.js")).openFileLog(path.join(c.dataDir, lane === "bulk" ? "log-bulk" : "log"));
  const main = await openLane("main");
  const bulk = await openLane("bulk").catch(async (err: unknown) => {
    await main.close();
    throw err;
  });
  return lanedLog({ main, bulk }, new LaneRouter(c.bulkLane));
}

export const eventLogLayer = (c: Config) => scoped(EventLogService, () => openEventLog(c));

export const clickHouseLayer = (c: Config) =>
  scoped(ClickHouseService, async () => {
    const ch = c.clickhouseUrl
      ? await (await import("./clickhouse/server.js")).openClickHouseServer(c.clickhouseUrl, c.clickhouseDatabase)
      : await (await import("./clickhouse/chdb.js")).openChdb(path.join(c.dataDir, "clickhouse"), c.clickhouseDatabase, { queryNice: c.backgroundNice });
    await (await import("./clickhouse/migrate.js")).migrateClickHouse(ch);
    return ch;
  });

export const sqlLayer = (c: Config) =>
  scoped(SqlService, async () => {
    const sql = c.databaseUrl
      ? await (await import("./postgres/pg.js")).openPg(c.databaseUrl)
      : await (await import("./postgres/pglite.js")).openPglite(path.join(c.dataDir, "postgres"));
    await (await import("./postgres/migrate.js")).migratePostgres(sql);
    return sql;
  });

export const rateLimiterLayer = (c: Config) =>
  scoped(RateLimiterService, async () =>
    c.redisUrl
      ? (await import("./limiter/redis.js")).redisRateLimiter(c.redisUrl, c.rateLimitPerMinute, c.redisPrefix)
      : memoryRateLimiter(c.rateLimitPerMinute),
  );

export const pubSubLayer = (c: Config) =>
  scoped(PubSubService, async () =>
    c.redisUrl ? (await import("./pubsub/redis.js")).redisPubSub(c.redisUrl, c.redisPrefix) : memoryPubSub(),
  );

export interface Ports {
  readonly config: Config;
  readonly log: EventLog;
  readonly clickhouse: ClickHouse;
  readonly sql: Sql;
  readonly limiter: RateLimiter;
  readonly pubsub: PubSub;
  /** Releases every port (reverse order of acquisition). */
  close(): Promise<void>;
}

export type PortName = "log" | "clickhouse" | "sql" | "limiter" | "pubsub";

/**
 * Opens the ports a role needs (all by default). Roles that do not need a port do not open it:
 * a gateway process never opens ClickHouse, for instance.
 */
export async function openPorts(config: Config, needs: readonly PortName[] = ["log", "clickhouse", "sql", "limiter", "pubsub"]): Promise<Ports> {
  const want = new Set(needs);
  const unused = <T>(name: string): T =>
    new Proxy({}, { get: () => { throw new Error(`port ${name} was not opened for this role`); } }) as T;
  let layer = Layer.empty as unknown as Layer.Layer<any, any, any>;
  if (want.has("sql")) layer = Layer.merge(layer, sqlLayer(config));
  if (want.has("clickhouse")) layer = Layer.merge(layer, clickHouseLayer(config));
  if (want.has("log")) layer = Layer.merge(layer, eventLogLayer(config));
  if (want.has("limiter")) layer = Layer.merge(layer, rateLimiterLayer(config));
  if (want.has("pubsub")) layer = Layer.merge(layer, pubSubLayer(config));
  const scope = Effect.runSync(Scope.make());
  const ctx = await Effect.runPromise(Layer.buildWithScope(layer, scope) as Effect.Effect<Context.Context<any>>);
  const get = <I, S>(tag: Context.Tag<I, S>, name: PortName): S =>
    want.has(name) ? Context.unsafeGet(ctx as Context.Context<I>, tag) : unused<S>(name);
  return {
    config,
    log: get(EventLogService, "log"),
    clickhouse: get(ClickHouseService, "clickhouse"),
    sql: get(SqlService, "sql"),
    limiter: get(RateLimiterService, "limiter"),
    pubsub: get(PubSubService, "pubsub"),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void)),
  };
}
