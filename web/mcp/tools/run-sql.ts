/**
 * run_sql: one read-only SELECT over the project's tables (query/ runProjectQuery, as POST /api/query runs it: the
 * same check, scope and bounds), with fewer rows by default than the API answers, since a model reads every one.
 */
import { Effect, Either } from "effect";
import { z } from "zod";
import { ValidationError } from "../../../core/errors.js";
import { MAX_SQL_CHARS, runProjectQuery } from "../../../query/index.js";
import { defineTool } from "../tool.js";

const DEFAULT_ROWS = 100;
const MAX_ROWS = 1_000;

const paramValue = z.union([z.string().max(10_000), z.number(), z.boolean(), z.array(z.union([z.string().max(10_000), z.number(), z.boolean()])).max(1_000)]);

export const runSql = defineTool({
  name: "run_sql",
  title: "Run a SQL query",
  description:
    "Runs one read-only ClickHouse SELECT over this project's tables (describe_sql_schema lists them) and answers its columns " +
    "and rows. Aggregate in SQL rather than reading many rows: an answer holds at most max_rows rows (truncated: true says " +
    "more were left out), each long text is cut, and a query that runs over 30 s or its memory is refused saying which " +
    "bound it hit. Values can be passed as params and named in the query as {name:Type}, e.g. {agent:String}.",
  input: {
    sql: z.string().min(1).max(MAX_SQL_CHARS).describe("One SELECT (WITH … SELECT, UNION of SELECTs) over the documented tables."),
    params: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/), paramValue).optional()
      .describe("Values for the query's {name:Type} placeholders."),
    max_rows: z.number().int().min(1).max(MAX_ROWS).optional().describe(`Rows to return at most (1 to ${MAX_ROWS}; default ${DEFAULT_ROWS}).`),
  },
  action: "read",
  async run(args, { deps, key }) {
    const outcome = await Effect.runPromise(Effect.either(runProjectQuery(deps.ports.clickhouse, {
      projectId: key.projectId,
      sql: args.sql,
      ...(args.params ? { params: args.params } : {}),
      maxRows: args.max_rows ?? DEFAULT_ROWS,
    })));
    if (Either.isRight(outcome)) return outcome.right;
    const e = outcome.left;
    if (e._tag === "QueryRefused") throw new ValidationError({ field: e.field, message: e.message });
    throw new ValidationError({ field: "sql", message: `the query hit its ${e.limit} bound: ${e.message}` });
  },
});
