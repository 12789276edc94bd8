/**
 * Experiments over real HTTP (docs/EVALUATION.md): an experiment pins a dataset version; runs sent with its id, an
 * item and a repetition in their run_start are its results (outputs, scores, errors, cost, latency) on
 * GET /api/experiments/{id}, on the dataset's experiments page and side by side on the comparison page, with the
 * regressions against the baseline marked. As an attacker: another tenant's experiment ids and runs that name them,
 * hostile ids and bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectChannel } from "../../core/ports/pubsub.js";
import { bearer, json, loginJar, startTestServer, until, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;
let jar: CookieJar;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  [alice, bob] = [await srv.account(), await srv.account()];
  jar = await loginJar(srv.url, alice.email);
});
afterAll(async () => {
  await srv?.close();
});

const get = async (path: string, key = alice.key) => {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  return { status: res.status, body: (await res.json()) as any };
};
const post = async (path: string, body: unknown, key = alice.key) => {
  const res = await fetch(`${srv.url}${path}`, json(key, body));
  return { status: res.status, body: (await res.json()) as any };
};
const t = (s: number) => new Date(Date.UTC(2026, 10, 25, 9, 0, 0, s)).toISOString();

/** One experiment run of item `item`: its output (or an error after `ms`), sent as ingest events. */
async function itemRun(key: string, experimentId: string, item: string, sdkRunId: string, outcome: { output?: unknown; error?: string; ms: number }) {
  const start = { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: "qa-bot", occurred_at: t(0),
    payload: { input: { item }, experiment_id: experimentId, dataset_item_id: item, repetition: 1 } };
  const end = outcome.error !== undefined
    ? { event_type: "error", sdk_run_id: sdkRunId, occurred_at: t(outcome.ms), payload: { error_type: "RuntimeError", error_message: outcome.error } }
    : { event_type: "run_end", sdk_run_id: sdkRunId, occurred_at: t(outcome.ms), payload: { output: outcome.output, prompt_tokens: 100, completion_tokens: 20, model: "gpt-4o-mini" } };
  const res = await post("/api/ingest/batch", { events: [start, end] }, key);
  expect(res.body).toMatchObject({ accepted: 2, rejected: 0 });
}

async function settled(id: string, count: number, key = alice.key) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { body } = await get(`/api/experiments/${id}`, key);
    if (body.experiment.completed_count >= count) return body;
    if (Date.now() > deadline) throw new Error(`experiment ${id} did not settle: ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("experiments", () => {
  let baseline: string;
  let candidate: string;

  it("are created on a dataset version, once per name, and refuse what is wrong naming the field", async () => {
    expect((await post("/api/datasets", { name: "qa" })).status).toBe(201);
    expect((await post("/api/experiments", { dataset: "qa", name: "too soon" })).body.error).toMatchObject({ code: "empty_dataset" });
    await post("/api/datasets/qa/items", { items: ["a", "b", "c"].map((id) => ({ id, input: { q: id }, expected_output: id.toUpperCase() })) });

    const created = await post("/api/experiments", { dataset: "qa", name: "prompt v1", agent_name: "qa-bot", config_version: 1, metadata: { model: "gpt-4o-mini" } });
    expect(created.status).toBe(201);
    expect(created.body.experiment).toMatchObject({
      name: "prompt v1", dataset: "qa", dataset_version: 1, status: "running", item_count: 3, expected_count: 3, repetitions: 1,
      completed_count: 0, error_count: 0, scores: {}, agent_name: "qa-bot", config_version: 1, metadata: { model: "gpt-4o-mini" },
    });
    baseline = created.body.experiment.id;
    candidate = (await post("/api/experiments", { dataset: "qa", name: "prompt v2", agent_name: "qa-bot", config_version: 2 })).body.experiment.id;

    const refusals: [unknown, number, string][] = [
      [{ dataset: "qa", name: "prompt v1" }, 409, "name"],
      [{ dataset: "qa" }, 422, "name"],
      [{ dataset: "qa", name: "x", repetitions: 0 }, 422, "repetitions"],
      [{ dataset: "qa", name: "x", dataset_version: 9 }, 422, "dataset_version"],
      [{ dataset: "qa", name: "bad\u0000name" }, 422, "name"],
      [{ dataset: "qa", name: "x", metadata: [1] }, 422, "metadata"],
      [{ dataset: "qa", name: "x", config_version: 1.5 }, 422, "config_version"],
      [[], 422, "body"],
    ];
    for (const [body, status, field] of refusals) {
      const res = await post("/api/experiments", body);
      expect([res.status, res.body.error?.field ?? "body"], JSON.stringify(body)).toEqual([status, field]);
    }
    expect((await post("/api/experiments", { dataset: "nope", name: "x" })).status).toBe(404);
    // Bob's project has no dataset "qa".
    expect((await post("/api/experiments", { dataset: "qa", name: "x" }, bob.key)).status).toBe(404);
  });

  it("gathers the runs that name it into results and aggregates", async () => {
    await itemRun(alice.key, baseline, "a", "v1-a", { output: "A", ms: 100 });
    await itemRun(alice.key, baseline, "b", "v1-b", { output: "B", ms: 300 });
    await itemRun(alice.key, baseline, "c", "v1-c", { output: "wrong", ms: 200 });
    await itemRun(alice.key, candidate, "a", "v2-a", { output: "A", ms: 150 });
    await itemRun(alice.key, candidate, "b", "v2-b", { output: "b?", ms: 250 });
    await itemRun(alice.key, candidate, "c", "v2-c", { error: "the model timed out", ms: 400 });
    await settled(baseline, 3);
    await settled(candidate, 3);
    // Open comparisons hear of the scores given to the experiments' runs (realtime `experiment_scores`).
    const announced: string[][] = [];
    const stopListening = await srv.ports.pubsub.subscribePrefix(projectChannel(alice.id), (channel, message) => {
      const m = JSON.parse(message) as { type: string; experiment_ids: string[] };
      if (channel === projectChannel(alice.id) && m.type === "experiment_scores") announced.push(m.experiment_ids);
    });
    for (const [run, value] of [["v1-a", 1], ["v1-b", 1], ["v1-c", 0], ["v2-a", 1], ["v2-b", 0]] as const) {
      expect((await post("/api/scores", { sdk_run_id: run, name: "correct", value })).status).toBe(201);
    }
    // Many scores in one request, each stored or refused on its own; Bob's runs are not Alice's to score.
    await itemRun(bob.key, candidate, "a", "bob-b", { output: "x", ms: 1 });
    const batch = await post("/api/scores/batch", { scores: [
      { sdk_run_id: "v1-a", name: "fluent", value: true }, { sdk_run_id: "v1-a", name: "", value: 1 }, { sdk_run_id: "nope", name: "x", value: 1 },
      { sdk_run_id: "bob-b", name: "x", value: 1 }, { sdk_run_id: "v2-a", name: "fluent", value: 1, comment: "short" },
    ] });
    expect([batch.status, batch.body.results.map((r: any) => r.status)]).toEqual([207, [201, 422, 404, 404, 201]]);
    expect(batch.body.results[1].error.field).toBe("name");
    expect((await post("/api/scores/batch", { scores: Array.from({ length: 1_001 }, () => ({ sdk_run_id: "v1-a", name: "x", value: 1 })) })).body.error.field).toBe("scores");
    await until("the scores announced", () => announced.length, (n) => n >= 6, 10_000);
    expect(announced).toEqual([[baseline], [baseline], [baseline], [candidate], [candidate], [baseline, candidate]]);
    await stopListening();

    // Bob sends runs that name Alice's experiment: they stay his, and her results do not change.
    await itemRun(bob.key, baseline, "a", "bob-a", { output: "HIJACK", ms: 1 });

    const { status, body } = await get(`/api/experiments/${baseline}`);
    expect(status).toBe(200);
    expect(body.experiment).toMatchObject({ completed_count: 3, error_count: 0, scores: { correct: { mean: 2 / 3, count: 3 } }, latency_ms: { p50: 200, p95: 300 } });
    expect(body.experiment.cost_usd).toBeGreaterThan(0);
    expect(body.items.map((i: any) => [i.item_id, i.repetition, i.sdk_run_id, i.status, i.output, i.scores])).toEqual([
      ["a", 1, "v1-a", "success", "A", { correct: 1, fluent: true }],
      ["b", 1, "v1-b", "success", "B", { correct: 1 }],
      ["c", 1, "v1-c", "success", "wrong", { correct: 0 }],
    ]);
    const other = (await get(`/api/experiments/${candidate}`)).body;
    expect(other.experiment).toMatchObject({ completed_count: 3, error_count: 1, scores: { correct: { mean: 0.5, count: 2 } } });
    expect(other.items.find((i: any) => i.item_id === "c")).toMatchObject({ status: "error", error: "the model timed out", output: null });

    // The runs are ordinary runs that name the experiment and the item.
    expect((await get("/api/runs/v1-b")).body.run).toMatchObject({ experiment_id: baseline, dataset_item_id: "b", repetition: 1 });
    expect((await get("/api/runs/bob-a", bob.key)).body.run).toMatchObject({ experiment_id: baseline, dataset_item_id: "a" });

    const listed = (await get("/api/experiments?dataset=qa")).body.experiments;
    expect(listed.map((e: any) => [e.name, e.completed_count])).toEqual([["prompt v2", 3], ["prompt v1", 3]]);
    expect((await get("/api/experiments?dataset=qa&name=prompt%20v1")).body.experiments.map((e: any) => e.id)).toEqual([baseline]);
    const done = await post(`/api/experiments/${baseline}/complete`, {});
    expect([done.status, done.body.experiment.status]).toEqual([200, "completed"]);
  });

  it("answers 404 for another tenant's experiment and malformed ids, and 422 for hostile run fields", async () => {
    for (const path of [`/api/experiments/${baseline}`, `/api/experiments?dataset=qa`]) expect((await get(path, bob.key)).status).toBe(404);
    expect((await post(`/api/experiments/${baseline}/complete`, {}, bob.key)).status).toBe(404);
    for (const id of ["nope", "%00", "x".repeat(5_000), "00000000-0000-0000-0000-000000000000", `${baseline}%27`]) {
      expect((await get(`/api/experiments/${id}`)).status, id).toBe(404);
    }
    expect((await get("/api/experiments")).body.error).toMatchObject({ field: "dataset" });
    const bad = [
      [{ experiment_id: "nope" }, "payload.experiment_id"],
      [{ experiment_id: baseline, repetition: 0 }, "payload.repetition"],
      [{ experiment_id: baseline, dataset_item_id: "x".repeat(201) }, "payload.dataset_item_id"],
    ] as const;
    for (const [payload, field] of bad) {
      const res = await post("/api/ingest/batch", { events: [{ event_type: "run_start", sdk_run_id: "hostile", agent_name: "a", payload }] });
      expect(res.body.results?.[0]?.error?.field ?? res.body.error?.field, JSON.stringify(payload)).toBe(field);
    }
  });

  it("shows the experiments of a dataset, and compares them side by side with regressions marked", async () => {
    const list = await jar.fetch(`${srv.url}/datasets/qa/experiments`);
    const html = await list.text();
    expect(list.status).toBe(200);
    expect(html).toContain("prompt v1");
    expect(html).toContain("prompt v2");
    expect(html).toContain("config v2");

    const compare = await jar.fetch(`${srv.url}/datasets/qa/compare?experiments=${baseline},${candidate}`);
    const page = await compare.text();
    expect(compare.status).toBe(200);
    const rows = [...page.matchAll(/<tr data-item="([^"]+)"( class="regressed")?/g)].map((m) => [m[1], Boolean(m[2])]);
    expect(rows).toEqual([["a", false], ["b", true], ["c", true]]);
    expect(page).toContain("−1"); // b's correct dropped from 1 to 0
    expect(page).toContain("the model timed out");
    expect(page).toMatch(/href="\/p\/[a-z0-9-]+\/dashboard\/v2-a"/);
    expect(page).toContain('Show only the <span id="regression-count">2</span> regressed items');

    const only = await (await jar.fetch(`${srv.url}/datasets/qa/compare?experiments=${baseline},${candidate}&only=regressions`)).text();
    expect([...only.matchAll(/<tr data-item="([^"]+)"/g)].map((m) => m[1])).toEqual(["b", "c"]);
    const fragment = await (await jar.fetch(`${srv.url}/datasets/qa/compare?experiments=${baseline}&fragment=table`)).text();
    expect(fragment.startsWith("<div class=\"table-wrap\">")).toBe(true);

    // Bob's session cannot reach them.
    const bobJar = await loginJar(srv.url, bob.email);
    expect((await bobJar.fetch(`${srv.url}/datasets/qa/compare?experiments=${baseline}`)).status).toBe(404);
    await post("/api/datasets", { name: "qa" }, bob.key);
    expect((await bobJar.fetch(`${srv.url}/datasets/qa/compare?experiments=${baseline}`)).status).toBe(404);
    for (const q of ["", "experiments=", `experiments=${"x,".repeat(10)}`]) {
      expect((await jar.fetch(`${srv.url}/datasets/qa/compare?${q}`)).status, q).toBeLessThan(500);
    }
  });
});
