/**
 * The engine's syntax tree of a query, read from its EXPLAIN AST text: one node a line, indented one space a level,
 * `<Type>[ <name or value>][ (alias <a>)][ (children <n>)]`. A name the engine prints raw could hold a line break and
 * so forge a line; the tree is therefore read only when every node has exactly the children its line declares —
 * a forged line always adds a child somewhere — and refused otherwise.
 */
import { QueryRefused } from "./types.js";

export interface AstNode {
  readonly type: string;
  /** What follows the type: a function's or identifier's name, a literal's value. */
  readonly text: string;
  readonly alias: string | undefined;
  readonly children: AstNode[];
}

interface Line {
  readonly depth: number;
  readonly node: AstNode;
  readonly declared: number;
}

const LINE = /^( *)([A-Za-z_]+)(.*?)(?: \(children (\d+)\))?$/;
const ALIAS = / \(alias (.*)\)$/;

function readLine(raw: string): Line {
  const m = LINE.exec(raw);
  if (!m) throw unreadable();
  let rest = m[3]!;
  const a = ALIAS.exec(rest);
  if (a) rest = rest.slice(0, a.index);
  const node: AstNode = { type: m[2]!, text: rest.startsWith(" ") ? rest.slice(1) : rest, alias: a?.[1], children: [] };
  return { depth: m[1]!.length, node, declared: m[4] === undefined ? 0 : Number(m[4]) };
}

const unreadable = () => new QueryRefused({ field: "sql", message: "the query's names could not be read (a name with a line break?): rename them" });

export function parseExplainAst(lines: readonly string[]): AstNode {
  const read = lines.filter((l) => l !== "").map(readLine);
  if (read.length === 0 || read[0]!.depth !== 0) throw unreadable();
  const stack: Line[] = [];
  for (const line of read) {
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= line.depth) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) {
      if (line.depth !== parent.depth + 1) throw unreadable();
      parent.node.children.push(line.node);
    } else if (line !== read[0]) throw unreadable();
    stack.push(line);
  }
  for (const line of read) if (line.node.children.length !== line.declared) throw unreadable();
  return read[0]!.node;
}
