/** The parts of the query sandbox that need no engine: params written in, the tree's reading, the lanes. */
import { describe, expect, it } from "vitest";
import { parseExplainAst } from "./ast.js";
import { QueryLanes } from "./lanes.js";
import { paramLiterals, writeParams } from "./params.js";

describe("params", () => {
  it("writes each placeholder outside quotes as a typed literal, escaping the value", () => {
    const lits = paramLiterals({ a: "x' OR 1=1 --", n: 3, b: true, l: ["p", "q\\'"] });
    expect(writeParams("SELECT {a:String}, {n:UInt8}, {b:Bool}, {l:Array(String)}, '{a:String}', `{n:UInt8}`", lits)).toBe(
      "SELECT CAST('x\\' OR 1=1 --' AS String), CAST('3' AS UInt8), CAST('1' AS Bool), CAST(['p', 'q\\\\\\''] AS Array(String)), '{a:String}', `{n:UInt8}`",
    );
  });

  it("refuses a placeholder without a value, a value without a placeholder, and values params may not hold", () => {
    expect(() => writeParams("SELECT {a:String}", new Map())).toThrow(/params has no a/);
    expect(() => writeParams("SELECT 1", paramLiterals({ a: 1 }))).toThrow(/params.a is not used/);
    for (const bad of [{ "a b": 1 }, { a: null }, { a: { b: 1 } }, { a: [[1]] }, { a: Number.NaN }, { a: "x".repeat(20_000) }]) {
      expect(() => paramLiterals(bad as Record<string, unknown>)).toThrow(/params/);
    }
  });
});

describe("the EXPLAIN AST reader", () => {
  it("builds the tree by indentation, with names, aliases and children", () => {
    const root = parseExplainAst([
      "SelectWithUnionQuery (children 1)",
      " ExpressionList (children 1)",
      "  SelectQuery (children 2)",
      "   ExpressionList (children 1)",
      "    Function plus (alias p) (children 1)",
      "     ExpressionList (children 2)",
      "      Literal UInt64_1",
      "      Identifier r.cost_usd",
      "   TablesInSelectQuery (children 1)",
      "    TablesInSelectQueryElement (children 1)",
      "     TableExpression (children 1)",
      "      TableIdentifier runs (alias r)",
    ]);
    const select = root.children[0]!.children[0]!;
    expect(select.children[0]!.children[0]).toMatchObject({ type: "Function", text: "plus", alias: "p" });
    expect(select.children[1]!.children[0]!.children[0]!.children[0]).toMatchObject({ type: "TableIdentifier", text: "runs", alias: "r" });
  });

  it("refuses a tree whose lines do not add up (a name holding a line break forges one)", () => {
    expect(() => parseExplainAst([
      "SelectWithUnionQuery (children 1)",
      " ExpressionList (children 1)",
      "  Identifier x",
      "  Function file (children 1)",
      "   ExpressionList",
    ])).toThrow(/could not be read/);
    expect(() => parseExplainAst(["SelectWithUnionQuery (children 1)", "   ExpressionList"])).toThrow(/could not be read/);
  });
});

describe("lanes", () => {
  it("runs a project's queries one at a time in order, and at most `slots` at once in all", async () => {
    const lanes = new QueryLanes(2);
    let running = 0;
    let most = 0;
    const order: string[] = [];
    const job = (name: string) => async () => {
      running++;
      most = Math.max(most, running);
      order.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 20));
      order.push(`end ${name}`);
      running--;
      return name;
    };
    const all = await Promise.all([lanes.run(1, job("a1")), lanes.run(1, job("a2")), lanes.run(2, job("b1")), lanes.run(3, job("c1"))]);
    expect(all).toEqual(["a1", "a2", "b1", "c1"]);
    expect(most).toBe(2);
    expect(order.indexOf("start a2")).toBeGreaterThan(order.indexOf("end a1"));
    // A failure frees its place.
    await expect(lanes.run(1, async () => { throw new Error("boom"); })).rejects.toThrow("boom");
    expect(await lanes.run(1, async () => "after")).toBe("after");
  });
});
