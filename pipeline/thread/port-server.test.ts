/** The thread boundary's SQL rules, without threads: procedures by name on the host, no transaction on the thread. */
import { describe, expect, it } from "vitest";
import { defineProcedure, runHere, type Sql } from "../../core/ports/sql.js";
import { memoryPubSub } from "../../core/pubsub/memory.js";
import type { Rpc } from "../../core/threads/rpc.js";
import { servePorts } from "./port-server.js";
import type { HostMethods, ThreadMethods } from "./protocol.js";
import { remotePorts } from "./remote-ports.js";

const queries: string[] = [];
const fakeSql: Sql = {
  query: async <T>(sql: string) => { queries.push(sql); return [] as T[]; },
  transaction: async (fn) => { queries.push("BEGIN"); const r = await fn(fakeSql); queries.push("COMMIT"); return r; },
  run: runHere(() => fakeSql),
  close: async () => {},
};
const countRows = defineProcedure("test.count-rows", async (sql, table: string) => {
  await sql.transaction(async (tx) => tx.query(`SELECT count(*) FROM ${table}`));
  return 42;
});

describe("the pipeline thread's SQL", () => {
  const server = servePorts({ sql: fakeSql, clickhouse: undefined as never, pubsub: memoryPubSub() }, new Map([[countRows.name, countRows]]), () => {});
  // A loopback "rpc" that calls the host's handlers directly, as the real one does across the thread.
  const rpc = { call: (method: keyof HostMethods, args: unknown[]) => (server.handlers[method] as (...a: unknown[]) => unknown)(...args) } as unknown as Rpc<ThreadMethods, HostMethods>;
  const remote = remotePorts(rpc, {} as never, new Map()).sql;

  it("runs a procedure on the host in one call, its transaction whole", async () => {
    queries.length = 0;
    expect(await remote.run(countRows, "agents")).toBe(42);
    expect(queries).toEqual(["BEGIN", "SELECT count(*) FROM agents", "COMMIT"]);
  });

  it("refuses a transaction on the thread, and a procedure the host does not know, saying what to do", async () => {
    await expect(remote.transaction(async () => 1)).rejects.toThrow(/cannot span the pipeline thread and its host: write the work as a procedure/);
    const stranger = defineProcedure("test.not-listed", async () => 0);
    await expect(remote.run(stranger, undefined)).rejects.toThrow(/knows no SQL procedure named test.not-listed/);
  });
});

describe("the pipeline thread's ClickHouse writes", () => {
  it("abort() resolves only once the writes a dead thread started have settled, failed ones included", async () => {
    const gates: (() => void)[] = [];
    const gated = () => new Promise<void>((resolve) => gates.push(resolve));
    const clickhouse = {
      insertEncoded: gated,
      exec: () => gated().then(() => { throw new Error("ClickHouse went away (test)"); }),
    } as never;
    const server = servePorts({ sql: fakeSql, clickhouse, pubsub: memoryPubSub() }, new Map(), () => {});
    const insert = server.handlers["clickhouse.insertEncoded"]("agent_events", { columns: ["event_id"], bytes: new Uint8Array(1) });
    const exec = server.handlers["clickhouse.exec"]("ALTER TABLE t DELETE WHERE 1", undefined);
    exec.catch(() => {});
    let aborted = false;
    const abort = server.abort().then(() => void (aborted = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(aborted).toBe(false);
    gates[0]!();
    await insert;
    await new Promise((r) => setTimeout(r, 20));
    expect(aborted).toBe(false); // the exec still runs
    gates[1]!();
    await abort;
    expect(aborted).toBe(true);
    await expect(exec).rejects.toThrow(/went away/);
  });
});
