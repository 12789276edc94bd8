/**
 * The embedded ClickHouse transport: chDB (ClickHouse 26.x in-process) on a persistent data directory.
 *
 * Facts this adapter relies on (checked against chdb 3.4 / libchdb 26.7, see docs/STORAGE.md):
 * - queryAsync / queryBindAsync / insert run on the libuv pool, off the event loop.
 * - Concurrent async calls on one Session are safe: chdb itself chains every parameterised query through
 *   one process-wide queue (parameter state in libchdb is not per-connection), and plain queries and raw
 *   inserts may overlap. A stress of 3,000 mixed concurrent calls returned every result correctly, so this
 *   adapter does not add its own lock. Queries with small parameters go as plain SQL with typed literals
 *   (inline-params.ts), so a slow read does not hold every other query.
 * - One process binds ONE data directory at a time. Several Sessions on the same directory coexist; a
 *   Session on another directory is refused until the first is closed and its native work drained.
 *   close() below waits for both, so a test can open a fresh directory right after closing the last one.
 * - Only one process may use a data directory at a time (ClickHouse's own lock); scale mode uses a server.
 */
import { mkdir } from "node:fs/promises";
import { Session, drainPending } from "chdb";
import { InFlight } from "../in-flight.js";
import { inlineParams } from "./inline-params.js";
import { SessionPool } from "./session-pool.js";
import { sandboxDatabaseOf, type ClickHouse, type ClickHouseSandbox, type EncodedRows, type SandboxAnswer } from "../ports/clickhouse.js";
import { CLICKHOUSE_SETTINGS, encodeRows, fromJsonCompact, parseJsonEachRow, parseJsonEachRowInSlices, quoteIdent, SLICED_PARSE_BYTES } from "./settings.js";

export interface ChdbOptions {
  /**
   * Nice value of the engine's query threads (ClickHouse's os_thread_priority; only lowering is allowed without
   * privileges): in the embedded default they share the cores with the threads that answer ingest.
   */
  readonly queryNice?: number;
}

/** Connections to the engine; see openChdb. */
const CONNECTIONS = 3;
/** Connections of the sandbox (ClickHouseSandbox), apart from those: how many members' queries run at once. */
export const SANDBOX_CONNECTIONS = 2;

export async function openChdb(dir: string, database: string, options: ChdbOptions = {}): Promise<ClickHouse> {
  await mkdir(dir, { recursive: true });
  const settings = { ...CLICKHOUSE_SETTINGS, ...(options.queryNice ? { os_thread_priority: options.queryNice } : {}) };
  const connectionArgs = Object.entries(settings).map(([k, v]) => `--${k}=${v}`);
  // Several connections (Sessions) on the directory, routed by SessionPool (session-pool.ts).
  const sessions: Session[] = [];
  try {
    for (let i = 0; i < CONNECTIONS; i++) sessions.push(new Session(dir, { connectionArgs }));
  } catch (e) {
    for (const s of sessions) s.close();
    throw new Error(`cannot open chDB at ${dir}: ${(e as Error).message}`, { cause: e });
  }
  const db = quoteIdent(database);
  await sessions[0]!.queryAsync(`CREATE DATABASE IF NOT EXISTS ${db}`);
  // USE sticks to a Session's connection, so the shared SQL can name tables without a database.
  for (const s of sessions) await s.queryAsync(`USE ${db}`);
  // A failed query's partial answer is taken by a query of the pool's own, not by the session's next read (session-pool.ts).
  const pool = new SessionPool(sessions, { afterFailure: (s) => s.queryAsync("SELECT 1", { format: "TSV" }) });
  const write = <T>(op: (session: Session) => Promise<T>): Promise<T> => pool.write(op);
  const read = <T>(op: (session: Session) => Promise<T>): Promise<T> => pool.read(op);

  // Ops still running natively when close() is called would be torn down under the engine; track them.
  const inflight = new InFlight();
  let closed = false;
  const track = <T>(p: Promise<T>): Promise<T> => inflight.track(p);
  const ensureOpen = () => {
    if (closed) throw new Error("chDB session is closed");
  };
  // Raw passthrough: the bytes go to the engine's parser without a JS object walk.
  const insertRaw = (table: string, rows: EncodedRows) =>
    write((session) => session.insert({ table, values: rows.bytes, format: "JSONCompactEachRow", columns: rows.columns }));
  const run = (sql: string, params?: Record<string, unknown>, kind: "read" | "write" = "read") => {
    ensureOpen();
    // Plain SQL where the literals are small (inline-params.ts): bound queries run one at a time per process.
    const plain = params && Object.keys(params).length > 0 ? inlineParams(sql, params) : sql;
    return track((kind === "write" ? write : read)((session) =>
      plain === undefined
        ? session.queryBindAsync(sql, params!, { format: "JSONEachRow" })
        : session.queryAsync(plain, { format: "JSONEachRow" })));
  };

  let sandbox: ClickHouseSandbox | undefined;

  return {
    sandbox(): ClickHouseSandbox {
      ensureOpen();
      sandbox ??= chdbSandbox(dir, database, connectionArgs, sessions, track);
      return sandbox;
    },
    async query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      const r = await run(sql, params);
      const bytes = r.bytes();
      return bytes.byteLength > SLICED_PARSE_BYTES ? parseJsonEachRowInSlices<T>(bytes) : parseJsonEachRow<T>(r.text());
    },
    async exec(sql: string, params?: Record<string, unknown>): Promise<void> {
      await run(sql, params, "write");
    },
    async insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
      if (rows.length === 0) return;
      ensureOpen();
      // Tracked from the start: close() waits for the serialisation too, and the session is checked again after it.
      await track(
        encodeRows(rows).then((encoded) => {
          ensureOpen();
          return insertRaw(table, encoded);
        }),
      );
    },
    async insertEncoded(table: string, rows: EncodedRows): Promise<void> {
      if (rows.bytes.length === 0) return;
      ensureOpen();
      await track(insertRaw(table, rows));
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await inflight.settled();
      // The sandbox's sessions were added to `sessions` as they opened.
      for (const s of sessions) s.close();
      await drainPending();
    },
  };
}

/**
 * The sandbox on sessions of its own (opened on first use, closed with the others): each USEs the empty database,
 * so an unqualified table name in a member's SQL resolves there. A query takes the least busy session; chDB runs one
 * query at a time per session, so a slow one waits for its own kind only.
 */
function chdbSandbox(dir: string, database: string, connectionArgs: string[], all: Session[], track: <T>(p: Promise<T>) => Promise<T>): ClickHouseSandbox {
  const empty = quoteIdent(sandboxDatabaseOf(database));
  const busy: number[] = [];
  const opened: Promise<Session>[] = [];
  const open = async (): Promise<Session> => {
    const s = new Session(dir, { connectionArgs });
    all.push(s);
    await s.queryAsync(`CREATE DATABASE IF NOT EXISTS ${empty}`);
    await s.queryAsync(`USE ${empty}`);
    return s;
  };
  for (let i = 0; i < SANDBOX_CONNECTIONS; i++) busy.push(0);
  return {
    database,
    async select(sql: string): Promise<SandboxAnswer> {
      let pick = 0;
      for (let i = 1; i < busy.length; i++) if (busy[i]! < busy[pick]!) pick = i;
      busy[pick]!++;
      try {
        const session = await (opened[pick] ??= open());
        const r = await track(session.queryAsync(sql, { format: "JSONCompact" }));
        return fromJsonCompact(r.text());
      } finally {
        busy[pick]!--;
      }
    },
  };
}
