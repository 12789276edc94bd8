/**
 * The baseline of an experiment comparison over real HTTP (docs/EVALUATION.md, In the dashboard): two experiments of
 * an agent, the newer one worse on one item. Picked as the experiments list sends them (newest first) or as the
 * agent's "Compare the two experiments" link does (the active version's first), the page compares the same way and
 * counts the regression; its Baseline control (?baseline=) picks the other, an id that is not compared is a 422
 * naming `baseline`, and the experiment of the agent's active config version is the default baseline. Every cell
 * lists its scores in one order.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activateVersion, addVersion, createAgent } from "../../stores/agent-registry.js";
import { json, loginJar, startTestServer, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let jar: CookieJar;
let older: string;
let newer: string;

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${srv.url}${path}`, json(alice.key, body));
  return { status: res.status, body: (await res.json()) as any };
};

/** An experiment of config `version` whose items i0..i2 score `correct` as given, and three more scores in the order given per item. */
async function experiment(name: string, version: number, correct: number[]): Promise<string> {
  const id = (await post("/api/experiments", { dataset: "faq", name, agent_name: "faq-bot", config_version: version })).body.experiment.id as string;
  const events = correct.flatMap((_, i) => [
    { event_type: "run_start", sdk_run_id: `${name}-${i}`, agent_name: "faq-bot", config_version: version, payload: { input: i, experiment_id: id, dataset_item_id: `i${i}`, repetition: 1 } },
    { event_type: "run_end", sdk_run_id: `${name}-${i}`, payload: { output: `answer ${i}` } },
  ]);
  expect((await post("/api/ingest/batch", { events })).body).toMatchObject({ rejected: 0 });
  const names = ["tone", "correct", "brevity", "accuracy"];
  for (let i = 0; i < correct.length; i++) {
    // Each item's scores are given in another order: the page's order must not follow it.
    const order = [...names.slice(i % names.length), ...names.slice(0, i % names.length)];
    const scores = order.map((n) => ({ sdk_run_id: `${name}-${i}`, name: n, value: n === "correct" ? correct[i] : 0.5 }));
    for (let tries = 0; ; tries++) {
      const res = await post("/api/scores/batch", { scores });
      if (res.status === 207 && res.body.results.every((r: { status: number }) => r.status === 201)) break;
      if (tries > 100) throw new Error(`scores not stored: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return id;
}

const comparison = async (query: string) => {
  const res = await jar.fetch(`${srv.url}/datasets/faq/compare?${query}`);
  return { status: res.status, html: await res.text() };
};
const regressed = (html: string) => Number(/Show only the <span id="regression-count">(\d+)<\/span>/.exec(html)?.[1] ?? /Show only the (\d+) regressed/.exec(html)?.[1]);
const baselineOption = (html: string) => /<option value="([0-9a-f-]+)" selected>/.exec(html)?.[1];
const firstColumn = (html: string) => /<tr data-experiment="([0-9a-f-]+)">/.exec(html)?.[1];

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  alice = await srv.account();
  jar = await loginJar(srv.url, alice.email);
  await post("/api/datasets", { name: "faq" });
  await post("/api/datasets/faq/items", { items: [0, 1, 2].map((i) => ({ id: `i${i}`, input: i })) });
  // Alice's personal project has her id.
  await createAgent(srv.ports.sql, alice.id, { name: "faq-bot" });
  for (const n of [1, 2]) await addVersion(srv.ports.sql, alice.id, "faq-bot", { config: JSON.stringify({ prompt: `v${n}` }) });
  older = await experiment("v1", 1, [1, 1, 1]);
  newer = await experiment("v2", 2, [1, 0, 1]);
  // Both experiments' scores are stored before the pages are read.
  for (let tries = 0; ; tries++) {
    const body = (await (await fetch(`${srv.url}/api/experiments/${newer}`, { headers: { authorization: `Bearer ${alice.key}` } })).json()) as any;
    if (body.experiment.scores?.correct?.count === 3) break;
    if (tries > 200) throw new Error(`scores not counted: ${JSON.stringify(body.experiment)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe("the baseline of a comparison", () => {
  it("is the older experiment whichever order they were picked in, and the worse version's regression is counted", async () => {
    // The experiments list sends them newest first.
    const list = await (await jar.fetch(`${srv.url}/datasets/faq/experiments`)).text();
    expect(list.indexOf(newer)).toBeLessThan(list.indexOf(older));
    const fromList = await comparison(`experiments=${newer}&experiments=${older}`);
    const fromLink = await comparison(`experiments=${older},${newer}`);
    for (const page of [fromList, fromLink]) {
      expect(page.status).toBe(200);
      expect(regressed(page.html)).toBe(1);
      expect(baselineOption(page.html)).toBe(older);
      expect(firstColumn(page.html)).toBe(older);
      expect(page.html).toMatch(/<tr data-item="i1" class="regressed">/);
    }
    // The links of the page keep the baseline.
    expect(fromList.html).toContain(`compare?experiments=${older},${newer}&amp;baseline=${older}&amp;only=regressions`);
  });

  it("is the one the page's control picks, and an experiment not compared is refused naming the field", async () => {
    const picked = await comparison(`experiments=${older},${newer}&baseline=${newer}`);
    expect([picked.status, regressed(picked.html), baselineOption(picked.html), firstColumn(picked.html)]).toEqual([200, 0, newer, newer]);
    const only = await comparison(`experiments=${older},${newer}&baseline=${older}&only=regressions`);
    expect([...only.html.matchAll(/<tr data-item="(i\d)"/g)].map((m) => m[1])).toEqual(["i1"]);
    for (const bad of ["00000000-0000-7000-8000-000000000000", "nope"]) {
      const res = await comparison(`experiments=${older},${newer}&baseline=${bad}`);
      expect(res.status).toBe(422);
      expect(res.html).toContain("baseline must be one of the experiments compared");
    }
  });

  it("is by default the experiment of the agent's active config version", async () => {
    await activateVersion(srv.ports.sql, alice.id, "faq-bot", 2);
    for (const q of [`experiments=${older},${newer}`, `experiments=${newer},${older}`]) {
      const page = await comparison(q);
      expect([regressed(page.html), baselineOption(page.html), firstColumn(page.html)]).toEqual([0, newer, newer]);
      expect(page.html).toMatch(/config v2 \(active\)/);
    }
    await activateVersion(srv.ports.sql, alice.id, "faq-bot", 1);
    expect(baselineOption((await comparison(`experiments=${newer},${older}`)).html)).toBe(older);
  });

  it("lists the scores of every cell in one order", async () => {
    const page = await comparison(`experiments=${older},${newer}`);
    const cells = [...page.html.matchAll(/<td class="compare-cell[^"]*"[^>]*>([\s\S]*?)<\/td>/g)].map((m) => [...m[1]!.matchAll(/data-score="([^"]+)"/g)].map((s) => s[1]));
    expect(cells).toHaveLength(6);
    for (const c of cells) expect(c).toEqual(["accuracy", "brevity", "correct", "tone"]);
  });
});
