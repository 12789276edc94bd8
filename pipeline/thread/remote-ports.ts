/**
 * The pipeline thread's ports: SQL, ClickHouse and pub/sub calls go to the host thread (port-server.ts), which
 * runs them on the process's own adapters. The expensive work of a call stays here: rows are serialised to
 * JSONEachRow on this thread and move to the host as one transferred buffer; a batch's broadcasts travel as
 * one message.
 */
import type { Config } from "../../core/config.js";
import { toJsonEachRow } from "../../core/clickhouse/settings.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql } from "../../core/ports/sql.js";
import { transactionSql, type QueryFn } from "../../core/postgres/sql-common.js";
import type { PipelinePorts } from "../pipeline-ports.js";
import { ownBytes, type Rpc } from "../../core/threads/rpc.js";

/** Handlers of messages on subscribed channels, by subscription id (the host pushes `pubsub.message`). */
export type Subscribers = Map<number, (channel: string, message: string) => void>;

export function remotePorts(rpc: Rpc, config: Config, subscribers: Subscribers): PipelinePorts {
  return { config, sql: remoteSql(rpc), clickhouse: remoteClickHouse(rpc), pubsub: remotePubSub(rpc, subscribers) };
}

function remoteSql(rpc: Rpc): Sql {
  const queryIn =
    (txId: number | undefined): QueryFn =>
    <T>(sql: string, params?: readonly unknown[]) =>
      rpc.call<T[]>("sql.query", [sql, params, txId]);
  return {
    query: queryIn(undefined),
    async transaction<R>(fn: (tx: Sql) => Promise<R>): Promise<R> {
      const txId = await rpc.call<number>("sql.begin");
      let result: R;
      try {
        result = await fn(transactionSql(queryIn(txId)));
      } catch (err) {
        await rpc.call("sql.end", [txId, false]).catch(() => {});
        throw err;
      }
      await rpc.call("sql.end", [txId, true]);
      return result;
    },
    close: async () => {},
  };
}

const encoder = new TextEncoder();

function remoteClickHouse(rpc: Rpc): ClickHouse {
  const insertEncoded = (table: string, bytes: Uint8Array): Promise<void> => {
    const own = ownBytes(bytes); // moved, not copied
    return rpc.call("clickhouse.insertEncoded", [table, own], [own.buffer]);
  };
  return {
    query: <T>(sql: string, params?: Record<string, unknown>) => rpc.call<T[]>("clickhouse.query", [sql, params]),
    exec: (sql: string, params?: Record<string, unknown>) => rpc.call<void>("clickhouse.exec", [sql, params]),
    async insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
      if (rows.length === 0) return;
      await insertEncoded(table, encoder.encode(toJsonEachRow(rows)));
    },
    insertEncoded,
    close: async () => {},
  };
}

/** Publishes made in one turn of this thread's event loop cross to the host as one message. */
function remotePubSub(rpc: Rpc, subscribers: Subscribers): PubSub {
  let queued: [string, string][] = [];
  let settle: { resolve(): void; reject(e: unknown): void }[] = [];
  const flush = () => {
    const messages = queued;
    const waiting = settle;
    queued = [];
    settle = [];
    rpc.call("pubsub.publish", [messages]).then(
      () => waiting.forEach((w) => w.resolve()),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  };
  return {
    publish(channel: string, message: string): Promise<void> {
      if (queued.length === 0) queueMicrotask(flush);
      queued.push([channel, message]);
      return new Promise<void>((resolve, reject) => settle.push({ resolve, reject }));
    },
    async subscribePrefix(prefix, handler) {
      const id = await rpc.call<number>("pubsub.subscribe", [prefix]);
      subscribers.set(id, handler);
      return async () => {
        subscribers.delete(id);
        await rpc.call("pubsub.unsubscribe", [id]);
      };
    },
    close: async () => {},
  };
}
