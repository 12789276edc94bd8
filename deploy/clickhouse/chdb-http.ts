/**
 * chdb-http: the real ClickHouse engine (chDB 26.x) behind the subset of ClickHouse's HTTP interface that
 * @clickhouse/client uses, so several Runwatch processes can share one ClickHouse on a machine where no
 * modern ClickHouse server can be installed (Debian ships 18.16; see docs/SCALE.md).
 *
 * It is a development/CI endpoint, not a production server: no authentication (binds 127.0.0.1 by default),
 * no TLS, one process. What it implements, as ClickHouse does:
 *   GET|HEAD /ping and GET /        → "Ok.\n"
 *   POST /?query=…  body = data      INSERT INTO t [(cols)] FORMAT <fmt> with the rows in the body
 *   POST /          body = SQL       any statement; result in its FORMAT clause (default TabSeparated)
 *   POST multipart/form-data         query + param_* parts (@clickhouse/client's long-parameter mode)
 *   URL params: database, query_id, param_<name> (server-side binding {name:Type}), any other = a setting;
 *   gzip request bodies (Content-Encoding) and responses (enable_http_compression=1 + Accept-Encoding);
 *   errors as HTTP 500 with "Code: N. DB::Exception: … (NAME)" and X-ClickHouse-Exception-Code.
 * Like a ClickHouse server, it answers several queries at once: each database is served on CONNECTIONS chDB
 * sessions, which run one query at a time each, routed as the embedded adapter routes them (core/clickhouse/session-pool.ts).
 *
 *   node --import tsx deploy/clickhouse/chdb-http.ts [--port 8124] [--host 127.0.0.1] [--data DIR]
 */
import http from "node:http";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { gunzip as gunzipCb, gzip as gzipCb } from "node:zlib";
import { parseArgs, promisify } from "node:util";
import { Session } from "chdb";
import { quoteString } from "../../core/clickhouse/inline-params.js";
import { SessionPool } from "../../core/clickhouse/session-pool.js";

/** URL parameters that are part of the protocol, not settings. */
const PROTOCOL_PARAMS = new Set(["query", "database", "query_id", "session_id", "session_timeout", "session_check", "role", "user", "password", "default_format", "quota_key"]);
/** HTTP-transport settings that do not apply to an embedded engine. */
const HTTP_ONLY_SETTINGS = new Set(["enable_http_compression", "http_zlib_compression_level", "send_progress_in_http_headers", "http_headers_progress_interval_ms", "wait_end_of_query", "buffer_size", "http_response_buffer_size", "http_native_compression_disable_checksumming_on_decompress", "cancel_http_readonly_queries_on_client_close"]);

const INSERT_RE = /^\s*INSERT\s+INTO\s+([`"\w.]+)\s*(\([^)]*\))?\s*FORMAT\s+(\w+)\s*$/is;
const IDENT_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SETTING_VALUE_RE = /^[\w.+\-: ]*$/;

export interface ChdbHttpOptions {
  readonly dataDir: string;
  readonly host?: string;
  readonly port?: number;
}

interface DbSession {
  readonly session: Session;
  /** Settings currently applied to this session (all Runwatch clients send the same ones). */
  readonly applied: Map<string, string>;
  lock: Promise<void>;
}

/** A database's sessions, routed as the embedded adapter routes its own (SessionPool). */
type DbPool = SessionPool<DbSession>;

const CONNECTIONS = 3;
// Off the event loop (libuv's pool), as a server compresses in its own threads: compressing a 40 MB answer in
// line held every other query's answer for most of a second.
const gzip = promisify(gzipCb);
/** ClickHouse's default http_zlib_compression_level. */
const GZIP_LEVEL = 3;
const gunzip = promisify(gunzipCb);
const WRITE_RE = /^\s*(INSERT|ALTER|CREATE|DROP|TRUNCATE|OPTIMIZE|RENAME|EXCHANGE|SYSTEM|DELETE|UPDATE|SET)\b/i;

class HttpError extends Error {
  constructor(readonly status: number, readonly code: number, message: string, readonly name_ = "BAD_ARGUMENTS") {
    super(message);
  }
}

/**
 * A compound parameter (Array, Tuple) arrives as its type's own literal text, quotes and backslashes included,
 * which ClickHouse parses as it is; chDB's binder escapes every value as a scalar's, which breaks such text at its
 * first quote. So each `{name:Array(…)}` placeholder is written into the query as `CAST('<text>' AS Array(…))`: the
 * text sits whole inside one escaped string literal (it cannot end it), and the engine parses it by the type, as it
 * parses a bound parameter (CAST cannot make a Map from text: Map parameters stay bound). Scalars stay bound.
 */
export function inlineCompoundParams(query: string, params: ReadonlyMap<string, string>): { query: string; inlined: Set<string> } {
  const inlined = new Set<string>();
  const out = query.replace(/\{\s*(\w+)\s*:\s*((?:Array|Tuple)\s*\([^{}]*\))\s*\}/g, (whole, name: string, type: string) => {
    const value = params.get(`param_${name}`);
    if (value === undefined) return whole;
    inlined.add(name);
    return `CAST(${quoteString(value)} AS ${type})`;
  });
  return { query: out, inlined };
}

/** Reverses ClickHouse's TSV escaping of an HTTP parameter value (chDB escapes it again when binding). */
export function tsvUnescape(s: string): string {
  if (!s.includes("\\")) return s;
  const map: Record<string, string> = { "\\": "\\", "0": "\0", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t", "'": "'", N: "\\N" };
  return s.replace(/\\(.)/gs, (_, c: string) => map[c] ?? c);
}

function parseMultipart(body: Buffer, contentType: string): Map<string, string> {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  if (!m) throw new HttpError(400, 36, "multipart body without a boundary");
  const boundary = `--${m[1] ?? m[2]}`;
  const parts = new Map<string, string>();
  for (const chunk of body.toString("utf8").split(boundary)) {
    const headerEnd = chunk.indexOf("\r\n\r\n");
    if (headerEnd < 0) continue;
    const name = /name="([^"]+)"/.exec(chunk.slice(0, headerEnd))?.[1];
    if (!name) continue;
    let value = chunk.slice(headerEnd + 4);
    if (value.endsWith("\r\n")) value = value.slice(0, -2);
    parts.set(name, value);
  }
  return parts;
}

const contentTypeFor = (format: string) =>
  /^JSON/i.test(format) ? "application/json; charset=UTF-8" : /^CSV/i.test(format) ? "text/csv; charset=UTF-8" : "text/tab-separated-values; charset=UTF-8";

/** The FORMAT of a statement's result (the last FORMAT clause), else the default. */
const formatOf = (sql: string, dflt: string) => /\bFORMAT\s+(\w+)\s*;?\s*$/i.exec(sql)?.[1] ?? dflt;

export function startChdbHttp(options: ChdbHttpOptions): Promise<{ server: http.Server; url: string; close(): Promise<void> }> {
  mkdirSync(options.dataDir, { recursive: true });
  const pools = new Map<string, DbPool>();
  let queries = 0;

  async function poolFor(database: string): Promise<DbPool> {
    if (!IDENT_RE.test(database)) throw new HttpError(400, 81, `Database ${database} does not exist`, "UNKNOWN_DATABASE");
    let pool = pools.get(database);
    if (!pool) {
      // Sessions (connections) on the same data directory: USE sticks to a connection.
      pool = new SessionPool(Array.from({ length: CONNECTIONS }, (): DbSession => ({ session: new Session(options.dataDir), applied: new Map(), lock: Promise.resolve() })), {
        // A failed query's partial answer is taken here, not by the session's next read (core/clickhouse/session-pool.ts).
        afterFailure: (s) => s.session.queryAsync("SELECT 1", { format: "TSV" }),
      });
      pools.set(database, pool);
      if (database !== "default") {
        try {
          for (const s of pool.sessions) await s.session.queryAsync(`USE \`${database}\``);
        } catch (err) {
          pools.delete(database);
          for (const s of pool.sessions) s.session.close();
          throw err;
        }
      }
    }
    return pool;
  }

  /** Applies the request's settings to the session when they differ from what it has (serialized). */
  async function applySettings(s: DbSession, settings: [string, string][]): Promise<void> {
    const changed = settings.filter(([k, v]) => s.applied.get(k) !== v);
    if (!changed.length) return;
    const prev = s.lock;
    let release!: () => void;
    s.lock = new Promise((r) => { release = r; });
    await prev;
    try {
      const still = changed.filter(([k, v]) => s.applied.get(k) !== v);
      if (!still.length) return;
      for (const [k, v] of still) {
        if (!IDENT_RE.test(k) || !SETTING_VALUE_RE.test(v)) throw new HttpError(400, 115, `Unknown setting ${k}`, "UNKNOWN_SETTING");
      }
      await s.session.queryAsync(`SET ${still.map(([k, v]) => `${k} = ${/^-?\d+(\.\d+)?$/.test(v) ? v : `'${v}'`}`).join(", ")}`);
      for (const [k, v] of still) s.applied.set(k, v);
    } finally {
      release();
    }
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    res.setHeader("X-ClickHouse-Server-Display-Name", "chdb-http");
    if ((req.method === "GET" || req.method === "HEAD") && (url.pathname === "/ping" || url.pathname === "/")) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=UTF-8" }).end("Ok.\n");
      return;
    }
    if (url.pathname === "/replicas_status") {
      res.writeHead(200, { "Content-Type": "text/plain; charset=UTF-8" }).end("Ok.\n");
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    let body = Buffer.concat(chunks);
    if (/gzip/i.test(String(req.headers["content-encoding"] ?? ""))) body = await gunzip(body);

    const params = new Map<string, string>(url.searchParams);
    let queryText = params.get("query");
    let data: Buffer | undefined;
    const ctype = String(req.headers["content-type"] ?? "");
    if (/^multipart\/form-data/i.test(ctype)) {
      for (const [k, v] of parseMultipart(body, ctype)) params.set(k, v);
      queryText = params.get("query");
    } else if (queryText !== undefined) {
      data = body; // ?query=INSERT … FORMAT X with the rows as the body, or a query prefix
    } else {
      queryText = body.toString("utf8");
    }
    if (req.method === "GET" && !queryText) throw new HttpError(400, 36, "Empty query", "BAD_ARGUMENTS");
    if (!queryText?.trim()) throw new HttpError(400, 62, "Empty query", "SYNTAX_ERROR");

    const database = params.get("database") ?? "default";
    const queryId = params.get("query_id") ?? crypto.randomUUID();
    const bind: Record<string, string> = {};
    const settings: [string, string][] = [];
    const compound = inlineCompoundParams(queryText, params);
    queryText = compound.query;
    for (const [k, v] of params) {
      if (k.startsWith("param_")) {
        if (!compound.inlined.has(k.slice(6))) bind[k.slice(6)] = tsvUnescape(v);
      }
      else if (!PROTOCOL_PARAMS.has(k) && !HTTP_ONLY_SETTINGS.has(k)) settings.push([k, v]);
    }
    const insert = data !== undefined ? INSERT_RE.exec(queryText) : null;
    const pool = await poolFor(database);
    const write = insert !== null || WRITE_RE.test(queryText);
    const headers: Record<string, string> = { "X-ClickHouse-Query-Id": queryId };
    const run = async (s: DbSession): Promise<string> => {
      await applySettings(s, settings);
      await s.lock;
      queries++;
      if (insert) {
        const [, table, columns, format] = insert;
        // chDB checks the table, the column names and the format against its own whitelists.
        const names = columns?.slice(1, -1).split(",").map((c) => c.trim().replace(/^[`"]|[`"]$/g, ""));
        const r = await s.session.insert({ table: table.replace(/[`"]/g, ""), values: data!, format: format as "JSONEachRow", ...(names ? { columns: names } : {}) });
        const written = String((r as { rowsWritten?: number }).rowsWritten ?? 0);
        headers["X-ClickHouse-Summary"] = JSON.stringify({ read_rows: "0", read_bytes: "0", written_rows: written, written_bytes: String(data!.length), total_rows_to_read: "0", result_rows: "0", result_bytes: "0" });
        return "";
      }
      const sql = data !== undefined && data.length ? `${queryText}\n${data.toString("utf8")}` : queryText;
      const format = formatOf(sql, params.get("default_format") ?? "TabSeparated");
      const r = Object.keys(bind).length
        ? await s.session.queryBindAsync(sql, bind, { format })
        : await s.session.queryAsync(sql, { format });
      const text = r.text();
      headers["X-ClickHouse-Format"] = format;
      headers["Content-Type"] = contentTypeFor(format);
      headers["X-ClickHouse-Summary"] = JSON.stringify({ read_rows: "0", read_bytes: "0", written_rows: "0", written_bytes: "0", total_rows_to_read: "0", result_rows: "0", result_bytes: String(Buffer.byteLength(text)) });
      return text;
    };
    const out = write ? await pool.write(run) : await pool.read(run);
    let payload: Buffer = Buffer.from(out);
    if (params.get("enable_http_compression") === "1" && /gzip/i.test(String(req.headers["accept-encoding"] ?? ""))) {
      payload = await gzip(payload, { level: GZIP_LEVEL });
      headers["Content-Encoding"] = "gzip";
    }
    res.writeHead(200, headers).end(payload);
  }

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const e = err as { message?: string; clickhouseCode?: number };
      const http_ = err instanceof HttpError ? err : undefined;
      const code = http_?.code ?? e.clickhouseCode ?? (Number(/Code: (\d+)/.exec(e.message ?? "")?.[1]) || 1000);
      let message = e.message ?? String(err);
      if (!/^Code: \d+/.test(message)) message = `Code: ${code}. DB::Exception: ${message}. (${http_?.name_ ?? "UNKNOWN_EXCEPTION"})`;
      if (!res.headersSent) {
        res.writeHead(http_?.status ?? 500, { "Content-Type": "text/plain; charset=UTF-8", "X-ClickHouse-Exception-Code": String(code) });
      }
      res.end(`${message} (version chdb-http)\n`);
    });
  });
  server.keepAliveTimeout = 10_000;

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8124, options.host ?? "127.0.0.1", () => {
      const addr = server.address() as import("node:net").AddressInfo;
      resolve({
        server,
        url: `http://${addr.address}:${addr.port}`,
        async close() {
          await new Promise<void>((r) => server.close(() => r()));
          server.closeAllConnections();
          for (const pool of pools.values()) for (const s of pool.sessions) s.session.close();
          pools.clear();
          void queries;
        },
      });
    });
  });
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname;
if (isMain) {
  const { values } = parseArgs({
    options: { port: { type: "string", default: process.env.CHDB_HTTP_PORT ?? "8124" }, host: { type: "string", default: "127.0.0.1" }, data: { type: "string", default: process.env.CHDB_HTTP_DATA ?? path.resolve(".data/chdb-http") } },
  });
  const srv = await startChdbHttp({ dataDir: path.resolve(values.data!), host: values.host, port: Number(values.port) });
  process.stdout.write(`chdb-http listening on ${srv.url} (data ${path.resolve(values.data!)})\n`);
  const stop = () => { void srv.close().then(() => process.exit(0)); };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}
