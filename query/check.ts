/**
 * What a member's query may hold, checked on the engine's own syntax tree (ast.ts) of its canonical text: one SELECT
 * (UNION / INTERSECT / EXCEPT of SELECTs) whose tables are named without a database — the documented tables and the
 * query's own CTEs resolve, nothing else exists where it runs —; no table functions; no name qualified by a database
 * (system.…, information_schema.…, the app's own), anywhere; only allowed functions (functions.ts); no SETTINGS,
 * FORMAT or INTO OUTFILE. Every node type not listed is refused, so a clause the engine adds later is refused until
 * it is looked at.
 */
import { QUERY_TABLE_DEFS } from "../stores/query/tables.js";
import type { AstNode } from "./ast.js";
import type { Catalogue } from "./functions.js";
import { QueryRefused } from "./types.js";

const TABLE_LIST = QUERY_TABLE_DEFS.map((t) => t.name).join(", ");

/** Node types a query may hold (the rest are checked by their own rule below). */
const PLAIN = new Set([
  "SelectWithUnionQuery", "SelectIntersectExceptQuery", "SelectQuery", "ExpressionList", "TablesInSelectQuery", "TablesInSelectQueryElement",
  "TableExpression", "TableJoin", "ArrayJoin", "Subquery", "WithElement", "Asterisk", "QualifiedAsterisk", "Literal", "Identifier",
  "TableIdentifier", "Function", "OrderByElement", "WindowDefinition", "WindowListElement", "ColumnsRegexpMatcher",
  "ColumnsListMatcher", "QualifiedColumnsRegexpMatcher", "QualifiedColumnsListMatcher", "ColumnsTransformerList", "ColumnsExceptTransformer",
  "ColumnsReplaceTransformer", "ColumnsReplaceTransformerReplacement", "InterpolateElement", "SampleRatio", "Alias",
]);

const CLAUSES: Record<string, string> = { Set: "SETTINGS", SetQuery: "SET", ColumnsApplyTransformer: "APPLY", StorageID: "a table name" };

const refuse = (message: string) => new QueryRefused({ field: "sql", message });

export function checkQuery(root: AstNode, catalogue: Catalogue): void {
  if (root.type !== "SelectWithUnionQuery") throw refuse("sql must be one SELECT query: the sandbox only reads");
  walk(root, catalogue);
}

function walk(node: AstNode, catalogue: Catalogue): void {
  switch (node.type) {
    case "SelectWithUnionQuery":
      // Its only child is the list of SELECTs; one more is a FORMAT, an INTO OUTFILE or a SETTINGS of the whole.
      if (node.children.length !== 1 || node.children[0]!.type !== "ExpressionList") throw refuse("FORMAT, INTO OUTFILE and SETTINGS are not allowed: the answer is JSON, and the bounds are the server's");
      break;
    case "TableExpression":
      for (const c of node.children) {
        if (c.type === "Function") throw refuse(`table functions (${c.text}) are not allowed: read the tables ${TABLE_LIST}`);
      }
      break;
    case "TableIdentifier":
      // The parser writes FROM system.one into every SELECT without a FROM (its one row, dummy = 0): nothing to read.
      if (node.text === "system.one") break;
      qualified(node.text, catalogue, "table");
      // An unqualified name is a documented table or a CTE of the query's (whose names the tree does not print);
      // any other finds nothing in the empty database the query runs in.
      if (node.text.includes(".")) throw refuse(`${node.text}: a table is named without a database: read the tables ${TABLE_LIST}`);
      break;
    case "Identifier":
      qualified(node.text, catalogue, "name");
      break;
    case "Function":
      if (!catalogue.allows(node.text)) throw refuse(`function ${node.text} is not allowed in the sandbox`);
      break;
    case "QueryParameter":
      throw new QueryRefused({ field: "params", message: `the query names {${node.text}} but params has no value for it` });
    default:
      if (!PLAIN.has(node.type)) throw refuse(`${CLAUSES[node.type] ?? node.type} is not allowed in the sandbox`);
  }
  for (const c of node.children) walk(c, catalogue);
}

/** Refuses a name whose first part is a database: `system.tables`, `information_schema.columns`, the app's. */
function qualified(name: string, catalogue: Catalogue, what: string): void {
  const dot = name.indexOf(".");
  if (dot < 0) return;
  const first = name.slice(0, dot).toLowerCase();
  if (catalogue.databases.has(first)) throw refuse(`${name}: a ${what} of database ${name.slice(0, dot)} — a query reads only the tables ${TABLE_LIST}`);
}
