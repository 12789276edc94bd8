/**
 * The pipeline thread's ports: SQL, ClickHouse and pub/sub calls go to the host thread (port-server.ts), which
 * runs them on the process's own adapters. The expensive work of a call stays here: rows are serialised
 * (EncodedRows) on this thread and reach the host as a view of this thread's shared arena (a transferred buffer
 * when the arena is full: core/threads/shared-arena.ts says why); a batch's broadcasts travel as one message.
 */
import type { Config } from "../../core/config.js";
import { encodeRows } from "../../core/clickhouse/settings.js";
import type { ClickHouse, EncodedRows } from "../../core/ports/clickhouse.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { Sql, SqlProcedure } from "../../core/ports/sql.js";
import type { QueryFn } from "../../core/postgres/sql-common.js";
import type { PipelinePorts } from "../pipeline-ports.js";
import { ownBytes, type Rpc } from "../../core/threads/rpc.js";
import { SharedArena } from "../../core/threads/shared-arena.js";
import type { HostMethods, ThreadMethods } from "./protocol.js";

type HostRpc = Rpc<ThreadMethods, HostMethods>;

/** Handlers of messages on subscribed channels, by subscription id (the host pushes `pubsub.message`). */
export type Subscribers = Map<number, (channel: string, message: string) => void>;

export function remotePorts(rpc: HostRpc, config: Config, subscribers: Subscribers): PipelinePorts {
  return { config, sql: remoteSql(rpc), clickhouse: remoteClickHouse(rpc), pubsub: remotePubSub(rpc, subscribers) };
}

function remoteSql(rpc: HostRpc): Sql {
  const query: QueryFn = async <T>(sql: string, params?: readonly unknown[]) => (await rpc.call("sql.query", [sql, params])) as T[];
  return {
    query,
    // Work that needs a transaction is a procedure: one call, run on the host (no transaction spans threads).
    run: async <A, R>(procedure: SqlProcedure<A, R>, args: A) => (await rpc.call("sql.run", [procedure.name, args])) as R,
    transaction: () =>
      Promise.reject(new Error("a transaction cannot span the pipeline thread and its host: write the work as a procedure (defineProcedure, core/ports/sql.ts) and call sql.run")),
    close: async () => {},
  };
}

/**
 * Room for the rows of the inserts in flight: two overlapping parts' agent_events (~6 MB each for 5,000 spans with
 * messages) and their smaller tables. Address space until written; an insert that does not fit is transferred.
 */
export const ROWS_ARENA_BYTES = 32 << 20;

function remoteClickHouse(rpc: HostRpc): ClickHouse {
  const arena = new SharedArena(ROWS_ARENA_BYTES);
  const insertEncoded = (table: string, { columns, bytes }: EncodedRows): Promise<void> => {
    // The host inserts straight from a lent view; bytes that do not fit are moved, not copied.
    const view = arena.lendCopy(bytes) ?? ownBytes(bytes);
    return arena.send(view, (lent) => rpc.call("clickhouse.insertEncoded", [table, { columns, bytes: view }], lent ? [] : [view.buffer as ArrayBuffer]));
  };
  return {
    query: async <T>(sql: string, params?: Record<string, unknown>) => (await rpc.call("clickhouse.query", [sql, params])) as T[],
    exec: (sql: string, params?: Record<string, unknown>) => rpc.call("clickhouse.exec", [sql, params]),
    async insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
      if (rows.length > 0) await insertEncoded(table, await encodeRows(rows));
    },
    insertEncoded,
    sandbox: () => {
      throw new Error("the pipeline thread runs no member's SQL: the sandbox is served where the web process opened ClickHouse");
    },
    close: async () => {},
  };
}

/** Publishes made in one turn of this thread's event loop cross to the host as one message. */
function remotePubSub(rpc: HostRpc, subscribers: Subscribers): PubSub {
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
      const id = await rpc.call("pubsub.subscribe", [prefix]);
      subscribers.set(id, handler);
      return async () => {
        subscribers.delete(id);
        await rpc.call("pubsub.unsubscribe", [id]);
      };
    },
    close: async () => {},
  };
}
