/**
 * One shape for a dataset item's input (docs/EVALUATION.md, Import): a CSV's input is an object keyed by column name,
 * one column or several, as a run's input is when "Add to dataset" takes it ({"question": …}), so a task written for
 * one reads the other; a column named `input` is the input itself, so a CSV export imports back as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportItems } from "../../stores/datasets/export.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, waitForRun, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let jar: CookieJar;

const items = async (dataset: string) => (await (await fetch(`${srv.url}/api/datasets/${dataset}/items`, bearer(alice.key))).json()).items as any[];
const upload = async (dataset: string, csv: string, query = "") => {
  const res = await fetch(`${srv.url}/api/datasets/${dataset}/import${query}`, { method: "POST", headers: { authorization: `Bearer ${alice.key}`, "content-type": "text/csv" }, body: csv });
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  alice = await srv.account();
  jar = await loginJar(srv.url, alice.email);
  for (const name of ["faq", "copy"]) expect((await fetch(`${srv.url}/api/datasets`, json(alice.key, { name }))).status).toBe(201);
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(alice.key, { events: [
    { event_type: "run_start", sdk_run_id: "r-1", agent_name: "helper", payload: { input: { question: "Where is my order?" } } },
    { event_type: "run_end", sdk_run_id: "r-1", payload: { output: "On its way." } },
  ] }));
  expect(res.status).toBe(207);
  await waitForRun(srv.url, alice.key, "r-1", (b) => b.run.status === "success");
});
afterAll(async () => {
  await srv?.close();
});

describe("a dataset item's input", () => {
  it("is an object keyed by column name from a one-column CSV, as it is from a run", async () => {
    const page = await (await jar.fetch(`${srv.url}/dashboard/r-1`)).text();
    expect((await jar.form(`${srv.url}/datasets/add-run`, { _csrf: csrfFrom(page), sdk_run_id: "r-1", dataset: "faq" })).status).toBe(303);
    expect((await upload("faq", "id,question\nc1,Do you ship to Norway?\n")).status).toBe(201);
    expect((await upload("faq", "id,question,context,expected\nc2,Can I pay later?,billing,Yes\n")).status).toBe(201);
    expect((await upload("faq", "id,question,context\nc3,What is 2+2?,math\n", "?input=question")).status).toBe(201);
    const byId = new Map((await items("faq")).map((i) => [i.source === "upload" ? i.id : "from run", i.input]));
    expect(Object.fromEntries(byId)).toEqual({
      "from run": { question: "Where is my order?" },
      c1: { question: "Do you ship to Norway?" },
      c2: { question: "Can I pay later?", context: "billing" },
      c3: { question: "What is 2+2?" },
    });
  });

  it("comes back as it was from a CSV export, from the column named input", async () => {
    const before = await items("faq");
    const csv = exportItems(before, "csv");
    expect((await upload("copy", csv)).status).toBe(201);
    const after = await items("copy");
    expect(after.map((i) => [i.id, i.input])).toEqual(before.map((i) => [i.id, i.input]));
  });
});
