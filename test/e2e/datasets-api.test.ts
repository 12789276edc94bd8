/**
 * The datasets API over real HTTP (docs/EVALUATION.md): create, add and update items as versions, read any version
 * back, import JSON Lines and CSV (a file with bad lines refused whole, naming them), within the key's project
 * only; hostile input answered with a 4xx naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject } from "../../stores/accounts/projects.js";
import { bearer, json, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
let key: string;
let otherKey: string;
let ingestOnly: string;

beforeAll(async () => {
  srv = await startTestServer({ env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  const owner = await srv.user();
  const team = await createProject(srv.ports.sql, owner.id, "Evaluation");
  key = await srv.key(owner.id, { projectId: team.id });
  ingestOnly = await srv.key(owner.id, { projectId: team.id, scope: "ingest" });
  // The owner's personal project: same user, another project.
  otherKey = await srv.key(owner.id);
});
afterAll(async () => {
  await srv?.close();
});

const api = (path: string, k = key) => `${srv.url}/api/datasets${path}`;
const post = (path: string, body: unknown, k = key) => fetch(api(path), json(k, body));
const upload = (path: string, type: string, body: string, k = key) =>
  fetch(api(path), { method: "POST", headers: { authorization: `Bearer ${k}`, "content-type": type }, body });
const get = async <T = any>(path: string, k = key): Promise<{ status: number; body: T }> => {
  const res = await fetch(api(path), bearer(k));
  return { status: res.status, body: (await res.json()) as T };
};

describe("datasets API", () => {
  it("creates a dataset once per name, and lists it in its project only", async () => {
    const res = await post("", { name: "support questions", description: "Tickets the bot got wrong" });
    expect(res.status).toBe(201);
    expect((await res.json()).dataset).toMatchObject({ name: "support questions", version: 0, item_count: 0, description: "Tickets the bot got wrong" });
    const again = await post("", { name: "support questions" });
    expect([again.status, (await again.json()).error]).toEqual([409, expect.objectContaining({ code: "name_taken", field: "name" })]);
    expect((await get("")).body.datasets.map((d: { name: string }) => d.name)).toEqual(["support questions"]);
    expect((await get("", otherKey)).body.datasets).toEqual([]);
    expect((await get("/support%20questions", otherKey)).status).toBe(404);
    // The same name in the other project is its own dataset.
    expect((await post("", { name: "support questions" }, otherKey)).status).toBe(201);
  });

  it("makes a version per change, keeps unchanged items, and reads every version back", async () => {
    await post("", { name: "versions" });
    const first = await post("/versions/items", { items: [{ id: "a", input: { q: "one" }, expected_output: "1" }, { id: "b", input: "two" }, { input: "three" }] });
    const w1 = await first.json();
    expect([first.status, w1.version, w1.changed, w1.ids.slice(0, 2)]).toEqual([201, 1, 3, ["a", "b"]]);
    // a changes (its keys in another order are the same item), b is the same: one change, version 2.
    const w2 = await (await post("/versions/items", { items: [{ id: "a", input: { q: "one" }, expected_output: "uno" }, { input: "two", id: "b" }] })).json();
    expect([w2.version, w2.changed]).toEqual([2, 1]);
    const w3 = await (await post("/versions/items", { items: [{ id: "b", input: "two" }] })).json();
    expect([w3.version, w3.changed]).toEqual([2, 0]);
    await post("/versions/items", { items: [{ id: "b", input: "two", status: "archived" }] });

    const at = async (v?: number) => (await get(`/versions/items${v === undefined ? "" : `?version=${v}`}`)).body;
    expect((await at(1)).items.find((i: { id: string }) => i.id === "a")).toMatchObject({ expected_output: "1", version: 1, source: "api" });
    expect((await at(2)).items.find((i: { id: string }) => i.id === "a")).toMatchObject({ expected_output: "uno", version: 2 });
    const now = await at();
    expect([now.version, now.items.length, now.items.find((i: { id: string }) => i.id === "b").status]).toEqual([3, 3, "archived"]);
    expect((await get("/versions/items?status=active")).body.items.map((i: { id: string }) => i.id)).not.toContain("b");
    expect((await get("/versions/items?version=9")).status).toBe(404);
    const { body } = await get("/versions");
    expect([body.dataset.version, body.dataset.item_count, body.versions.map((v: { version: number; changed: number }) => [v.version, v.changed])])
      .toEqual([3, 2, [[3, 1], [2, 1], [1, 3]]]);

    // Pages by id.
    const page1 = (await get("/versions/items?limit=2")).body;
    const page2 = (await get(`/versions/items?limit=2&after=${encodeURIComponent(page1.next_after)}`)).body;
    expect([page1.items.length, page2.items.length, page2.next_after]).toEqual([2, 1, null]);
  });

  it("refuses a bad item whole, naming it, and writes nothing", async () => {
    await post("", { name: "strict" });
    const items = Array.from({ length: 5 }, (_, i) => ({ id: `i${i}`, input: i }));
    const cases: [unknown, string][] = [
      [{ items: [...items.slice(0, 3), { expected_output: 1 }] }, "items[3].input"],
      [{ items: [...items, { id: "i2", input: 1 }] }, "items[5].id"],
      [{ items: [{ id: "x\u0000", input: 1 }] }, "items[0].id"],
      [{ items: [{ input: 1, status: "deleted" }] }, "items[0].status"],
      [{ items: [{ input: 1, metadata: [1] }] }, "items[0].metadata"],
      [{ items: [{ input: JSON.parse(`${"[".repeat(80)}${"]".repeat(80)}`) }] }, "items[0].input"],
      [{ items: [{ input: "x".repeat(1_100_000) }] }, "items[0].input"],
      [{ items: [] }, "items"],
      ['{"items": [{"input": {"n": [1e309]}}]}', "items[0].input"],
      [{ item: [] }, "items"],
    ];
    for (const [body, field] of cases) {
      const res = typeof body === "string" ? await fetch(api("/strict/items"), { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body }) : await post("/strict/items", body);
      const err = (await res.json()).error;
      expect([field, res.status, err.field]).toEqual([field, 422, expect.stringMatching(new RegExp(`^${field.replace(/[[\]]/g, "\\$&")}`))]);
    }
    expect((await get("/strict")).body.dataset.version).toBe(0);
    expect((await post("/no-such/items", { items })).status).toBe(404);
    expect((await fetch(api("/strict/items"), bearer(ingestOnly))).status).toBe(403);
    expect((await get("/strict/items?after=%00")).status).toBe(422);
    expect((await get("/strict/items?version=-1")).status).toBe(422);
  });

  it("imports 1,000 JSON Lines, refuses a file with 3 bad lines whole, and maps CSV columns", async () => {
    await post("", { name: "imported" });
    const lines = Array.from({ length: 1_000 }, (_, i) => JSON.stringify({ id: `line-${i}`, input: { question: `q${i}` }, expected_output: `a${i}` }));
    const ok = await upload("/imported/import", "application/x-ndjson", lines.join("\n"));
    expect([ok.status, await ok.json()]).toEqual([201, { version: 1, imported: 1_000, changed: 1_000 }]);

    const bad = [...lines];
    bad[9] = "{oops";
    bad[499] = JSON.stringify({ id: "x" });
    bad[999] = JSON.stringify({ input: 1, metadata: "not an object" });
    const refused = await upload("/imported/import", "application/x-ndjson", bad.map((l) => l.replace('"a', '"b')).join("\n"));
    const err = (await refused.json()).error;
    expect([refused.status, err.lines.map((l: { line: number }) => l.line)]).toEqual([422, [10, 500, 1000]]);
    expect((await get("/imported")).body.dataset).toMatchObject({ version: 1, item_count: 1_000 });

    await post("", { name: "from csv" });
    const csv = 'id,question,expected\nc1,"What is 2+2?",4\nc2,"=cmd|\' /C calc\'!A0",-\n';
    const res = await upload("/from%20csv/import?input=question", "text/csv", csv);
    expect(res.status).toBe(201);
    const items = (await get("/from%20csv/items")).body.items;
    expect(items).toMatchObject([
      { id: "c1", input: { question: "What is 2+2?" }, expected_output: "4", source: "upload" },
      { id: "c2", input: { question: "=cmd|' /C calc'!A0" }, expected_output: "-" },
    ]);
    expect((await upload("/from%20csv/import?input=nope", "text/csv", csv)).status).toBe(422);
    expect((await upload("/from%20csv/import", "application/xml", "<a/>")).status).toBe(415);
    expect((await upload("/from%20csv/import", "text/csv", csv, otherKey)).status).toBe(404);
  });

  it("checks items against the dataset's JSON Schemas, and a new schema against the items it has", async () => {
    const input_schema = { type: "object", required: ["question"], properties: { question: { type: "string", maxLength: 200 } } };
    const created = await post("", { name: "typed", input_schema, expected_output_schema: { type: "string" } });
    expect([created.status, (await created.json()).dataset.input_schema]).toEqual([201, input_schema]);
    const good = await post("/typed/items", { items: [{ id: "a", input: { question: "why?" }, expected_output: "because" }, { id: "b", input: { question: "how?" } }] });
    expect(good.status).toBe(201);
    const bad = await post("/typed/items", { items: [{ id: "c", input: { question: "ok" } }, { id: "d", input: { q: 1 } }] });
    expect([bad.status, (await bad.json()).error]).toEqual([422, expect.objectContaining({ field: "items[1].input", message: expect.stringContaining("must have required property 'question'") })]);
    const badExpected = await post("/typed/items", { items: [{ id: "e", input: { question: "x" }, expected_output: 42 }] });
    expect((await badExpected.json()).error).toMatchObject({ field: "items[0].expected_output" });
    const badLine = await upload("/typed/import", "application/x-ndjson", '{"input": {"question": "fine"}}\n{"input": "not an object"}');
    expect([badLine.status, (await badLine.json()).error.field]).toEqual([422, "items[1].input"]);
    expect((await get("/typed")).body.dataset.version).toBe(1);

    const patch = (body: unknown, k = key) => fetch(api("/typed"), { method: "PATCH", headers: { authorization: `Bearer ${k}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    // A schema the current items do not fit is refused, naming the item; one they fit is kept; null removes it.
    const misfit = await patch({ input_schema: { type: "object", required: ["context"] } });
    expect([misfit.status, (await misfit.json()).error.message]).toEqual([422, expect.stringContaining('item "a"')]);
    expect((await patch({ description: "typed questions", expected_output_schema: null })).status).toBe(200);
    expect((await get("/typed")).body.dataset).toMatchObject({ description: "typed questions", input_schema, expected_output_schema: null });
    for (const [schema, words] of [[{ type: "string", pattern: "^(a+)+$" }, "pattern"], [{ type: "array", uniqueItems: true }, "uniqueItems"],
      [{ $ref: "https://example.com/s.json" }, "another document"], [{ type: 12 }, "not a valid JSON Schema"], [[1], "JSON Schema object"],
      // Postgres's jsonb cannot hold these: refused by name, not a 500.
      [{ type: "object", properties: { "a\u0000b": { type: "string" } } }, "U+0000"], [{ type: "string", description: "\ud800" }, "lone UTF-16 surrogate"]] as const) {
      const res = await patch({ input_schema: schema });
      expect([res.status, (await res.json()).error.message], JSON.stringify(schema)).toEqual([422, expect.stringContaining(words)]);
    }
    // Nested past what JSON.stringify survives (sent as text: the test cannot stringify it either).
    const deep = await fetch(api("/typed"), { method: "PATCH", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: `{"input_schema":{"type":"object","default":${"[".repeat(10_000)}${"]".repeat(10_000)}}}` });
    expect([deep.status, (await deep.json()).error.message]).toEqual([422, expect.stringContaining("nests deeper than 64 levels")]);
    // A property named like a refused keyword is a name, not the keyword.
    expect((await patch({ input_schema: { type: "object", properties: { pattern: { type: "string" }, question: { type: "string" } } } })).status).toBe(200);
    expect((await patch({ input_schema: null }, otherKey)).status).toBe(404);
  });
});
