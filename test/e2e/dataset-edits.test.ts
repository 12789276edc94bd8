/**
 * Changing a dataset from its page over real HTTP (docs/EVALUATION.md): the file upload the page's script sends
 * (CSRF header, size, type, bad lines, another project's dataset), archiving and restoring an item, and the settings
 * form's schemas, with hostile values.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, csrfFrom, json, loginJar, startTestServer, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;
let jar: CookieJar;
let csrf: string;

beforeAll(async () => {
  srv = await startTestServer({ env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  [alice, bob] = [await srv.account(), await srv.account()];
  for (const k of [alice.key, bob.key]) expect((await fetch(`${srv.url}/api/datasets`, json(k, { name: "cases" }))).status).toBe(201);
  await fetch(`${srv.url}/api/datasets/cases/items`, json(bob.key, { items: [{ id: "secret", input: "Bob's" }] }));
  jar = await loginJar(srv.url, alice.email);
  csrf = csrfFrom(await (await jar.fetch(`${srv.url}/datasets/cases`)).text());
});
afterAll(async () => {
  await srv?.close();
});

const upload = (body: string | Buffer, type = "application/x-ndjson", headers: Record<string, string> = { "x-csrf-token": csrf }, name = "cases") =>
  jar.fetch(`${srv.url}/datasets/${name}/upload`, { method: "POST", headers: { "content-type": type, accept: "application/json", ...headers }, body: typeof body === "string" ? body : new Uint8Array(body) });
const items = async (k = alice.key) => (await (await fetch(`${srv.url}/api/datasets/cases/items`, bearer(k))).json()).items as any[];

describe("dataset edits from the page", () => {
  it("uploads a file, refusing what is wrong with a 4xx and writing nothing", async () => {
    const ok = await upload('{"id": "a", "input": 1}\n{"id": "b", "input": 2}');
    expect([ok.status, await ok.json()]).toEqual([201, { version: 1, imported: 2, changed: 2 }]);
    const csv = await upload("input,expected_output\n=cmd|' /C calc'!A0,yes\n", "text/csv");
    expect(csv.status).toBe(201);
    expect((await items()).find((i) => i.expected_output === "yes").input).toBe("=cmd|' /C calc'!A0");

    const refusals: [Response, number][] = [
      [await upload('{"input": 1}\n{oops'), 422],
      [await upload("<xml/>", "application/xml"), 415],
      [await upload('{"input": 1}', "application/x-ndjson", {}), 403],
      [await upload('{"input": 1}', "application/x-ndjson", { "x-csrf-token": "forged" }), 403],
      [await upload(Buffer.alloc(33 * 1024 * 1024, 0x20)), 413],
      [await upload('{"input": 1}', "application/x-ndjson", { "x-csrf-token": csrf }, "nope"), 404],
    ];
    for (const [res, status] of refusals) expect(res.status).toBe(status);
    expect((await items()).length).toBe(3);
    // Bob's dataset of the same name is his alone.
    expect((await items(bob.key)).map((i) => i.id)).toEqual(["secret"]);
  });

  it("archives and restores an item, and refuses hostile ids and statuses", async () => {
    const status = (fields: Record<string, string>) => jar.form(`${srv.url}/datasets/cases/items/status`, { _csrf: csrf, ...fields });
    expect((await status({ id: "a", status: "archived" })).status).toBe(303);
    expect((await items()).find((i) => i.id === "a").status).toBe("archived");
    expect((await status({ id: "a", status: "active" })).status).toBe(303);
    for (const [fields, code] of [[{ id: "secret", status: "archived" }, 404], [{ id: "a", status: "deleted" }, 422], [{ id: "x".repeat(5000), status: "archived" }, 404], [{ id: "a\u0000", status: "archived" }, 422]] as const) {
      expect((await status(fields)).status, JSON.stringify(fields).slice(0, 80)).toBe(code);
    }
    expect((await items(bob.key))[0]).toMatchObject({ id: "secret", status: "active" });
  });

  it("saves the settings' schemas, and refuses bad JSON, a misfit and a regex naming the field", async () => {
    const settings = (fields: Record<string, string>) => jar.form(`${srv.url}/datasets/cases/settings`, { _csrf: csrf, description: "d", ...fields });
    expect((await settings({ input_schema: "{not json" })).status).toBe(422);
    expect(await (await settings({ input_schema: '{"type": "string"}' })).text()).toContain("item &quot;a&quot;");
    expect(await (await settings({ input_schema: '{"type": "number", "pattern": "(a+)+"}' })).text()).toContain("may not use pattern");
    expect((await settings({ input_schema: '{"type": ["number", "string"]}', expected_output_schema: "" })).status).toBe(303);
    const dataset = (await (await fetch(`${srv.url}/api/datasets/cases`, bearer(alice.key))).json()).dataset;
    expect([dataset.description, dataset.input_schema, dataset.expected_output_schema]).toEqual(["d", { type: ["number", "string"] }, null]);
    expect((await upload('{"input": {"an": "object"}}')).status).toBe(422);
  });
});
