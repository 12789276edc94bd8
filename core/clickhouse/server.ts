/**
 * The server ClickHouse transport: @clickhouse/client over HTTP. It differs from chDB only in transport;
 * the SQL is the same (event-store.ts, migrations/). Needs a server with query parameters and DateTime64
 * and JSON objects read into String columns (ClickHouse 23.x or newer; Debian's 18.16 has none of them, see
 * docs/STORAGE.md).
 */
import { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from "@clickhouse/client";
import { sandboxDatabaseOf, type ClickHouse, type ClickHouseSandbox, type EncodedRows } from "../ports/clickhouse.js";
import { CLICKHOUSE_SETTINGS, encodeRows, fromJsonCompact, parseJsonEachRow, parseJsonEachRowInSlices, quoteIdent, SLICED_PARSE_BYTES } from "./settings.js";

const settings: ClickHouseSettings = {
  ...CLICKHOUSE_SETTINGS,
  // A retried insert of the same block (same rows, same order) is dropped by the server
  // (tables set non_replicated_deduplication_window; Replicated tables dedupe by default).
  insert_deduplicate: 1,
  // Inserts are synchronous: the pipeline commits its log offset only after the rows are stored.
  async_insert: 0,
};

/**
 * Oldest server major this schema and SQL target (DateTime64, query parameters, ISO output, dedup window, and
 * input_format_json_read_objects_as_strings, which 22.12 added).
 */
export const MIN_SERVER_MAJOR = 23;

const clientFor = (url: string, database: string, clickhouse_settings: ClickHouseSettings, more: Partial<Parameters<typeof createClient>[0]> = {}): ClickHouseClient =>
  createClient({
    url,
    database,
    clickhouse_settings,
    application: "runwatch",
    // loadRuns can bind 1,000 keys; long parameter lists go in the body instead of the URL.
    use_multipart_params_auto: true,
    ...more,
  });

/** How many members' queries the sandbox client runs at once (its own sockets, apart from the app's). */
export const SANDBOX_CONNECTIONS = 2;

/** The server's version string, asked without any settings so that any server can answer. */
export async function clickHouseServerVersion(url: string): Promise<string> {
  const client = clientFor(url, "default", {});
  try {
    const ping = await client.ping();
    if (!ping.success) throw new Error(`ClickHouse at ${redact(url)} is unreachable: ${String(ping.error)}`);
    const [row] = await (await client.query({ query: "SELECT version() AS v", format: "JSONEachRow" })).json<{ v: string }>();
    return row!.v;
  } finally {
    await client.close();
  }
}

export async function openClickHouseServer(url: string, database: string): Promise<ClickHouse> {
  const version = await clickHouseServerVersion(url);
  if (Number(version.split(".")[0]) < MIN_SERVER_MAJOR) {
    throw new Error(
      `ClickHouse server ${version} at ${redact(url)} is too old: Runwatch needs ${MIN_SERVER_MAJOR}.x or newer ` +
        "(DateTime64, query parameters, JSON objects read as strings). Use a current server, or leave CLICKHOUSE_URL unset for embedded chDB.",
    );
  }
  return connectClickHouse(url, database, settings);
}

/**
 * The bare transport with the given session settings: creates the database if missing, then serves the
 * ClickHouse port. openClickHouseServer uses it with Runwatch's settings; tests also use it with none to
 * exercise the transport against servers too old for the schema.
 */
export async function connectClickHouse(url: string, database: string, clickhouseSettings: ClickHouseSettings): Promise<ClickHouse> {
  const admin = clientFor(url, "default", clickhouseSettings);
  try {
    await admin.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(database)}` });
  } finally {
    await admin.close();
  }
  const client = clientFor(url, database, clickhouseSettings);
  const query_params = (params?: Record<string, unknown>) => (params && Object.keys(params).length ? params : undefined);
  const insertEncoded = async (table: string, { columns, bytes }: EncodedRows): Promise<void> => {
    if (bytes.length === 0) return;
    const { stream } = await client.exec({
      query: `INSERT INTO ${quoteIdent(table)} (${columns.map(quoteIdent).join(", ")}) FORMAT JSONCompactEachRow`,
      values: Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]),
    });
    // The (empty) response body must be read to release the connection.
    stream.resume();
    await finished(stream);
  };
  let sandbox: { ready: Promise<void>; client: ClickHouseClient } | undefined;
  const openSandbox = () => {
    // Its own client, whose database is the empty one; a request waits for the engine's max_execution_time (the
    // SQL's SETTINGS) to answer, not for the client to give up first.
    const empty = sandboxDatabaseOf(database);
    const ready = client.command({ query: `CREATE DATABASE IF NOT EXISTS ${quoteIdent(empty)}` }).then(() => {});
    // A member's query failing is an answer (query/engine-errors.ts), not a client error to log.
    const quiet = { level: ClickHouseLogLevel.OFF };
    return { ready, client: clientFor(url, empty, { ...CLICKHOUSE_SETTINGS }, { request_timeout: 120_000, max_open_connections: SANDBOX_CONNECTIONS, log: quiet }) };
  };
  const sandboxPort: ClickHouseSandbox = {
    database,
    async select(sql) {
      sandbox ??= openSandbox();
      await sandbox.ready;
      const rs = await sandbox.client.query({ query: sql, format: "JSONCompact" });
      return fromJsonCompact(await rs.text());
    },
  };
  return {
    sandbox: () => sandboxPort,
    async query<T>(sql: string, params?: Record<string, unknown>): Promise<T[]> {
      const rs = await client.query({ query: sql, query_params: query_params(params), format: "JSONEachRow" });
      const text = await rs.text();
      return text.length > SLICED_PARSE_BYTES ? parseJsonEachRowInSlices<T>(text) : parseJsonEachRow<T>(text);
    },
    async exec(sql: string, params?: Record<string, unknown>): Promise<void> {
      await client.command({ query: sql, query_params: query_params(params) });
    },
    async insert(table: string, rows: readonly Record<string, unknown>[]): Promise<void> {
      if (rows.length > 0) await insertEncoded(table, await encodeRows(rows));
    },
    insertEncoded,
    async close() {
      await sandbox?.ready.catch(() => {});
      await sandbox?.client.close();
      await client.close();
    },
  };
}

/** The URL without its password, for error messages. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<invalid url>";
  }
}
