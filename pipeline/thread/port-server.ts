/**
 * The host side of the pipeline thread's ports (HostMethods of protocol.ts): answers its SQL, ClickHouse and
 * pub/sub calls with this process's own adapters. Embedded, those are single-connection (PGlite) or must stay
 * on one thread (chDB's engine is per process; in-process pub/sub reaches the gateway here), which is why the
 * thread calls back instead of opening its own.
 *
 * Transactions never span the boundary: the thread sends work that needs one as a procedure (by name, with its
 * arguments), which runs here in one call, so PGlite is never held by a transaction waiting on the other thread.
 */
import type { Ports } from "../../core/runtime.js";
import type { SqlProcedure } from "../../core/ports/sql.js";
import { InFlight } from "../../core/in-flight.js";
import { publishAll } from "../../core/pubsub/publish-all.js";
import { TimeSlice } from "../../core/time-slice.js";
import type { HostMethods } from "./protocol.js";

export interface PortServer {
  readonly handlers: HostMethods;
  /**
   * Drops the thread's subscriptions (the thread is gone), and resolves once the ClickHouse writes it had started
   * have settled: a thread that replaces it reads what is stored (pipeline/stored-runs.ts) only after that.
   */
  abort(): Promise<void>;
}

export function servePorts(
  ports: Pick<Ports, "sql" | "clickhouse" | "pubsub">,
  procedures: ReadonlyMap<string, SqlProcedure<any, unknown>>,
  deliver: (subscription: number, channel: string, message: string) => void,
): PortServer {
  const subscriptions = new Map<number, () => Promise<void>>();
  let nextId = 1;
  const writes = new InFlight();

  const handlers: HostMethods = {
    "sql.query": (sql, params) => ports.sql.query(sql, params),
    "sql.run": (name, args) => {
      const procedure = procedures.get(name);
      if (!procedure) throw new Error(`the host knows no SQL procedure named ${name}: list it in pipeline/thread/procedures.ts, or export it as \`procedures\` from the plugin's module`);
      return ports.sql.run(procedure, args);
    },
    "clickhouse.query": (sql, params) => ports.clickhouse.query(sql, params),
    "clickhouse.exec": (sql, params) => writes.track(ports.clickhouse.exec(sql, params)),
    "clickhouse.insertEncoded": (table, rows) => writes.track(ports.clickhouse.insertEncoded(table, rows)),
    // Broadcasts of a whole batch arrive together; this thread also serves ingest: publish in 1 ms slices.
    "pubsub.publish": (messages) => publishAll(ports.pubsub, messages, new TimeSlice(1)),
    "pubsub.subscribe": async (prefix) => {
      const id = nextId++;
      subscriptions.set(id, await ports.pubsub.subscribePrefix(prefix, (channel, message) => deliver(id, channel, message)));
      return id;
    },
    "pubsub.unsubscribe": async (id) => {
      const stop = subscriptions.get(id);
      subscriptions.delete(id);
      await stop?.();
    },
  };

  return {
    handlers,
    async abort() {
      for (const [id, stop] of subscriptions) {
        subscriptions.delete(id);
        await stop().catch(() => {});
      }
      await writes.settled();
    },
  };
}
