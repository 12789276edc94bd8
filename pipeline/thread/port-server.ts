/**
 * The host side of the pipeline thread's ports: answers its SQL, ClickHouse and pub/sub calls with this process's
 * own adapters. Embedded, those are single-connection (PGlite) or must stay on one thread (chDB's engine is
 * per process; in-process pub/sub reaches the gateway here), which is why the thread calls back instead of
 * opening its own.
 *
 * A transaction spans several calls: `sql.begin` opens one on the real port and parks it until `sql.end`; its
 * queries name it. Should the thread die with transactions open, abort() rolls them back (PGlite serves nobody
 * else while one is open).
 */
import type { Ports } from "../../core/runtime.js";
import type { Sql } from "../../core/ports/sql.js";
import { publishAll } from "../../core/pubsub/publish-all.js";
import { TimeSlice } from "../../core/time-slice.js";
import type { Handlers } from "../../core/threads/rpc.js";

interface OpenTransaction {
  readonly tx: Sql;
  readonly commit: () => void;
  readonly rollback: (why: Error) => void;
  readonly done: Promise<unknown>;
}

export interface PortServer {
  readonly handlers: Handlers;
  /** Rolls back open transactions and drops subscriptions (the thread is gone). */
  abort(): Promise<void>;
}

export function servePorts(ports: Pick<Ports, "sql" | "clickhouse" | "pubsub">, deliver: (subscription: number, channel: string, message: string) => void): PortServer {
  const transactions = new Map<number, OpenTransaction>();
  const subscriptions = new Map<number, () => Promise<void>>();
  let nextId = 1;

  const sqlOf = (txId: number | undefined): Sql => {
    if (txId === undefined) return ports.sql;
    const open = transactions.get(txId);
    if (!open) throw new Error(`transaction ${txId} is not open`);
    return open.tx;
  };

  const begin = (): Promise<number> =>
    new Promise<number>((ready, fail) => {
      const id = nextId++;
      let started = false;
      const done = ports.sql.transaction(
        (tx) =>
          new Promise<void>((commit, rollback) => {
            started = true;
            transactions.set(id, { tx, commit: () => commit(), rollback, done });
            ready(id);
          }),
      );
      done.catch((err: unknown) => {
        if (!started) fail(err);
      });
    });

  const end = async (txId: number, commit: boolean): Promise<void> => {
    const open = transactions.get(txId);
    if (!open) throw new Error(`transaction ${txId} is not open`);
    transactions.delete(txId);
    if (commit) {
      open.commit();
      await open.done;
    } else {
      const marker = new Error("rolled back by the pipeline thread");
      open.rollback(marker);
      await open.done.catch((err: unknown) => {
        if (err !== marker) throw err;
      });
    }
  };

  const handlers: Handlers = {
    "sql.query": (sql: string, params: readonly unknown[] | undefined, txId: number | undefined) => sqlOf(txId).query(sql, params),
    "sql.begin": begin,
    "sql.end": end,
    "clickhouse.query": (sql: string, params?: Record<string, unknown>) => ports.clickhouse.query(sql, params),
    "clickhouse.exec": (sql: string, params?: Record<string, unknown>) => ports.clickhouse.exec(sql, params),
    "clickhouse.insertEncoded": (table: string, rows: Uint8Array) => ports.clickhouse.insertEncoded(table, rows),
    // Broadcasts of a whole batch arrive together; this thread also serves ingest: publish in 1 ms slices.
    "pubsub.publish": (messages: readonly (readonly [string, string])[]) => publishAll(ports.pubsub, messages, new TimeSlice(1)),
    "pubsub.subscribe": async (prefix: string) => {
      const id = nextId++;
      subscriptions.set(id, await ports.pubsub.subscribePrefix(prefix, (channel, message) => deliver(id, channel, message)));
      return id;
    },
    "pubsub.unsubscribe": async (id: number) => {
      const stop = subscriptions.get(id);
      subscriptions.delete(id);
      await stop?.();
    },
  };

  return {
    handlers,
    async abort() {
      const gone = new Error("the pipeline thread exited");
      for (const [id, open] of transactions) {
        transactions.delete(id);
        open.rollback(gone);
        await open.done.catch(() => {});
      }
      for (const [id, stop] of subscriptions) {
        subscriptions.delete(id);
        await stop().catch(() => {});
      }
    },
  };
}
