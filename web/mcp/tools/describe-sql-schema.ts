/** describe_sql_schema: the tables and columns run_sql reads (query/: QUERY_TABLES, the same as GET /api/query/schema). */
import { QUERY_TABLES } from "../../../query/index.js";
import { defineTool } from "../tool.js";

export const describeSqlSchema = defineTool({
  name: "describe_sql_schema",
  title: "Describe the SQL schema",
  description:
    "Lists the tables run_sql can read — runs, spans, llm_calls, events, scores, sessions, costs, experiment_results, each " +
    "holding only this project's rows — with every column's ClickHouse type and meaning. Read it before writing a query.",
  input: {},
  action: "read",
  uncut: true,
  async run() {
    return { dialect: "ClickHouse SQL (SELECT only)", tables: QUERY_TABLES };
  },
});
