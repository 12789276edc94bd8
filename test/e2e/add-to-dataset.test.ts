/**
 * "Add to dataset" from the dashboard over real HTTP (docs/EVALUATION.md): from a span of a run's trace (its input,
 * its output prefilled as the expected output) and from several runs selected on the dashboard at once (each run's
 * input, its output as the expected output); another project's runs and spans are not found.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, csrfFrom, json, loginJar, startTestServer, waitForRun, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;
let jar: CookieJar;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  [alice, bob] = [await srv.account(), await srv.account()];
  jar = await loginJar(srv.url, alice.email);
  for (const [key, run, question] of [[alice.key, "a-1", "first"], [alice.key, "a-2", "second"], [bob.key, "b-1", "Bob's secret"]] as const) {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [
      { event_type: "run_start", sdk_run_id: run, agent_name: "helper", payload: { input: { question } } },
      { event_type: "step", sdk_run_id: run, span_id: "retrieve", payload: { node_name: "retrieve", phase: "start", input: { query: `${question} docs` } } },
      { event_type: "step", sdk_run_id: run, span_id: "retrieve", payload: { node_name: "retrieve", phase: "end", output: ["doc-1", "doc-2"] } },
      { event_type: "run_end", sdk_run_id: run, payload: { output: `answer to ${question}` } },
    ] }));
    expect(res.status).toBe(207);
    await waitForRun(srv.url, key, run, (b) => b.run.status === "success");
  }
  const page = await (await jar.fetch(`${srv.url}/datasets`)).text();
  expect((await jar.form(`${srv.url}/datasets`, { _csrf: csrfFrom(page), name: "picked" })).status).toBe(303);
});
afterAll(async () => {
  await srv?.close();
});

const items = async () => (await (await fetch(`${srv.url}/api/datasets/picked/items`, bearer(alice.key))).json()).items as any[];

describe("add to dataset from the dashboard", () => {
  it("adds a span of a run with its input, and the corrected output", async () => {
    const page = await (await jar.fetch(`${srv.url}/dashboard/a-1?span=retrieve`)).text();
    expect(page).toContain('name="span_id" value="retrieve"');
    expect(page).toContain("span “retrieve”");
    expect(page).toMatch(/<textarea name="expected_output"[^>]*>\[\n {2}&quot;doc-1&quot;/);
    // The trace's panel offers the same form for any span it opens (its <template>, filled in by the page's script).
    expect(page).toMatch(/<template id="span-actions">[\s\S]*action="[^"]*\/datasets\/add-run"[\s\S]*name="span_id"[\s\S]*<\/template>/);
    const res = await jar.form(`${srv.url}/datasets/add-run`, { _csrf: csrfFrom(page), sdk_run_id: "a-1", span_id: "retrieve", dataset: "picked", expected_output: '["doc-1"]' });
    expect(res.status).toBe(303);
    expect(await items()).toMatchObject([{ input: { query: "first docs" }, expected_output: ["doc-1"], source: "span", source_sdk_run_id: "a-1", source_span_id: "retrieve" }]);
    // A span the run does not have, and another project's run, are not found.
    expect((await jar.form(`${srv.url}/datasets/add-run`, { _csrf: csrfFrom(page), sdk_run_id: "a-1", span_id: "nope", dataset: "picked" })).status).toBe(404);
    expect((await jar.form(`${srv.url}/datasets/add-run`, { _csrf: csrfFrom(page), sdk_run_id: "b-1", span_id: "retrieve", dataset: "picked" })).status).toBe(404);
  });

  it("adds the runs selected on the dashboard, each with its output as the expected output", async () => {
    const dashboard = await (await jar.fetch(`${srv.url}/dashboard`)).text();
    expect(dashboard).toContain('<input type="checkbox" name="sdk_run_id" value="a-2" form="add-runs"');
    expect(dashboard).toMatch(/action="\/p\/[a-z0-9-]+\/datasets\/add-runs"/);
    const body = new URLSearchParams([["_csrf", csrfFrom(dashboard)], ["dataset", "picked"], ["sdk_run_id", "a-1"], ["sdk_run_id", "a-2"]]);
    const res = await jar.fetch(`${srv.url}/datasets/add-runs`, { method: "POST", body });
    expect(res.status).toBe(303);
    const added = (await items()).filter((i) => i.source === "run").map((i) => [i.source_sdk_run_id, i.input, i.expected_output]).sort();
    expect(added).toEqual([["a-1", { question: "first" }, "answer to first"], ["a-2", { question: "second" }, "answer to second"]]);
    const versions = (await (await fetch(`${srv.url}/api/datasets/picked`, bearer(alice.key))).json()).versions;
    expect(versions[0]).toMatchObject({ change: "runs", changed: 2 });

    // Nothing selected, another project's run, or a dataset that is not the project's: refused, nothing written.
    const before = (await items()).length;
    for (const pairs of [[["dataset", "picked"]], [["dataset", "picked"], ["sdk_run_id", "b-1"]], [["dataset", "nope"], ["sdk_run_id", "a-1"]]]) {
      const r = await jar.fetch(`${srv.url}/datasets/add-runs`, { method: "POST", body: new URLSearchParams([["_csrf", csrfFrom(dashboard)], ...pairs]) });
      expect([r.status === 422 || r.status === 404, r.status], JSON.stringify(pairs)).toEqual([true, r.status]);
    }
    expect((await items()).length).toBe(before);
  });
});
