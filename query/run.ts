/**
 * A member's SQL query over their project's data, safe by construction (docs/QUERY.md, "How scoping works"):
 * 1. the engine's own parser makes the query's canonical text (formatQuery: one statement, no comments or quoting
 *    tricks left), params are written in as typed literals, and the engine's syntax tree of the result is checked
 *    (query/check.ts): one SELECT over the documented tables, allowed functions, no SETTINGS/FORMAT/INTO;
 * 2. that text runs as a subquery under CTEs the server writes — one per documented table, each reading only the
 *    project's rows (stores/query/tables.ts) — on the sandbox connection, whose current database is empty, with the
 *    bounds as the query's SETTINGS (query/bounds.ts), and one row more than asked, to know it was cut.
 */
import { Effect } from "effect";
import { sandboxDatabaseOf, type ClickHouse, type ClickHouseSandbox } from "../core/ports/clickhouse.js";
import { queryTableCtes } from "../stores/query/tables.js";
import { BOUNDS_SETTINGS, DEFAULT_MAX_ROWS, MAX_RESULT_BYTES, MAX_ROWS, MAX_SQL_CHARS, OVER_BYTES } from "./bounds.js";
import { checkQuery } from "./check.js";
import { toQueryError } from "./engine-errors.js";
import { catalogueOf } from "./functions.js";
import { QueryLanes } from "./lanes.js";
import { paramLiterals, writeParams } from "./params.js";
import { quoteString } from "../core/clickhouse/inline-params.js";
import { parseExplainAst } from "./ast.js";
import { QueryLimitHit, QueryRefused, type QueryRequest, type QueryResult } from "./types.js";

/**
 * The answer's bytes so far, row by row: chDB does not apply max_result_bytes to what it answers, so the query itself
 * stops at the bound (throwIf, OVER_BYTES: engine-errors.ts), on both transports alike.
 */
const BYTES_COLUMN = "_answer_bytes_";

/** Queries of all projects at once, per process (each holds one sandbox connection). */
const SLOTS = 2;
const lanes = new WeakMap<ClickHouse, QueryLanes>();

export function runProjectQuery(clickhouse: ClickHouse, request: QueryRequest): Effect.Effect<QueryResult, QueryRefused | QueryLimitHit> {
  return Effect.suspend(() => {
    const maxRows = request.maxRows ?? DEFAULT_MAX_ROWS;
    if (!Number.isInteger(maxRows) || maxRows < 1 || maxRows > MAX_ROWS) {
      return Effect.fail(new QueryRefused({ field: "max_rows", message: `max_rows must be an integer from 1 to ${MAX_ROWS}` }));
    }
    if (typeof request.sql !== "string" || request.sql.trim() === "") return Effect.fail(new QueryRefused({ field: "sql", message: "sql must be a SELECT query" }));
    if (request.sql.length > MAX_SQL_CHARS) return Effect.fail(new QueryRefused({ field: "sql", message: `sql may be at most ${MAX_SQL_CHARS} characters` }));
    let literals: Map<string, string>;
    try {
      literals = paramLiterals(request.params);
    } catch (e) {
      return Effect.fail(e as QueryRefused);
    }
    let queue = lanes.get(clickhouse);
    if (!queue) lanes.set(clickhouse, (queue = new QueryLanes(SLOTS)));
    const sandbox = clickhouse.sandbox();
    const databases = [sandboxDatabaseOf(sandbox.database), sandbox.database];
    return Effect.tryPromise({
      try: () => queue.run(request.projectId, () => run(sandbox, request.projectId, request.sql, literals, maxRows)),
      catch: (e) => e,
    }).pipe(
      Effect.catchAll((e) => {
        if (e instanceof QueryRefused || e instanceof QueryLimitHit) return Effect.fail(e);
        // An engine error of the query's making is the member's to fix; any other (the engine gone) is a failure.
        const mapped = toQueryError(e, databases);
        return mapped ? Effect.fail(mapped) : Effect.die(e);
      }),
    );
  });
}

async function run(sandbox: ClickHouseSandbox, projectId: number, sql: string, literals: ReadonlyMap<string, string>, maxRows: number): Promise<QueryResult> {
  const started = performance.now();
  const catalogue = await catalogueOf(sandbox);
  let text = await canonical(sandbox, sql);
  if (literals.size > 0 || /\{[A-Za-z_][A-Za-z0-9_]*:/.test(text)) text = await canonical(sandbox, writeParams(text, literals));
  // The engine prints a SELECT starting so: anything else is refused here in words a person reads (the check below
  // refuses it too, on the tree).
  if (!/^(SELECT|WITH|\()/i.test(text)) throw new QueryRefused({ field: "sql", message: "sql must be one SELECT query: the sandbox only reads" });
  // As a table subquery, so that a FORMAT the server's client appends to what it sends belongs to the outer SELECT.
  const ast = await sandbox.select(`SELECT explain FROM (EXPLAIN AST ${text})`);
  checkQuery(parseExplainAst(ast.rows.map((r) => String(r[0]))), catalogue);
  const answer = await sandbox.select(`${queryTableCtes(sandbox.database, projectId)}
SELECT * EXCEPT (${BYTES_COLUMN}) FROM (
  SELECT *, sum(byteSize(*)) OVER (ROWS UNBOUNDED PRECEDING) AS ${BYTES_COLUMN} FROM (
${text}
  ) LIMIT ${maxRows + 1}
) WHERE throwIf(${BYTES_COLUMN} > ${MAX_RESULT_BYTES}, '${OVER_BYTES}') = 0
SETTINGS ${BOUNDS_SETTINGS}`);
  const truncated = answer.rows.length > maxRows;
  return {
    columns: answer.columns,
    rows: truncated ? answer.rows.slice(0, maxRows) : answer.rows,
    truncated,
    limit: truncated ? "rows" : null,
    elapsed_ms: Math.round(performance.now() - started),
  };
}

/**
 * The engine's canonical text of `sql` (formatQuery): parsed by its own parser as one statement — several, or none,
 * are a syntax error — and printed back without comments, with every literal and name quoted as the engine quotes
 * them. The SQL travels as a string literal, so nothing in it is read as SQL here.
 */
async function canonical(sandbox: ClickHouseSandbox, sql: string): Promise<string> {
  const r = await sandbox.select(`SELECT formatQuerySingleLine(${quoteString(sql)}) AS q`);
  const q = r.rows[0]?.[0];
  if (typeof q !== "string" || q === "") throw new QueryRefused({ field: "sql", message: "sql must be one SELECT query" });
  return q;
}
