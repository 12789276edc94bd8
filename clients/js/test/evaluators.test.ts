/**
 * Server-side evaluators from the JS client against `runwatch start` (docs/EVALUATION.md), its agents-service
 * pointed at a fake OpenAI server on loopback (OPENAI_BASE_URL): list the project's evaluators, run an LLM judge on a
 * run (the rendered prompt, the raw answer, the score, the cost; nothing stored), and attach it to an experiment so
 * that each of its runs is judged on the server as it ends — the judge's scores land beside the SDK's own.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch } from "../src/index.js";
import { JUDGE_FAIL_MARKER, startFakeLlm, type FakeLlm } from "./fake-llm.js";
import { ownScaleStores, startRealServer, waitForRun, type RealServer } from "./real-server.js";

let llm: FakeLlm;
let server: RealServer;
let client: Runwatch;

beforeAll(async () => {
  llm = await startFakeLlm();
  server = await startRealServer({
    OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test", RUNWATCH_EVALUATION_POLL_MS: "100", RUNWATCH_EVALUATION_CONCURRENCY: "8",
    ...(await ownScaleStores()),
  });
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 50 });
  const created = await fetch(`${server.url}/api/evaluators`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "correctness", type: "llm_judge", provider: "openai", prompt: "Expected {{expected_output}}; got {{output}}. Correct?", output: { type: "boolean" } }),
  });
  expect(created.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await client?.shutdown();
  await server?.stop();
  await llm?.close();
});

describe("server-side evaluators", () => {
  it("lists the project's evaluators and runs one on a run, storing nothing", async () => {
    expect((await client.listEvaluators()).map((e) => [e.name, e.type, e.version])).toEqual([["correctness", "llm_judge", 1]]);
    const sdkRunId = `eval-js-${Date.now()}`;
    await client.run({ agentName: "qa-bot", sdkRunId, input: { question: "Capital of France?" } }, async () => "Paris");
    await client.flush();
    await waitForRun(server, sdkRunId, (v) => v.run.status === "success");
    const result = await client.runEvaluator("correctness", { sdkRunId });
    // The output as the run stored it (the client sends a bare value as {"value": …}).
    expect(result.prompt).toBe(`Expected (none); got {"value":"Paris"}. Correct?`);
    expect(JSON.parse(result.raw_answer!)).toEqual({ explanation: "The answer is right.", score: true });
    expect(result.score).toEqual({ name: "correctness", value: true, comment: "The answer is right." });
    expect(result.error).toBeNull();
    const scores = await (await fetch(`${server.url}/api/runs/${sdkRunId}/scores`, { headers: { authorization: `Bearer ${server.key}` } })).json();
    expect(scores.scores).toEqual([]);
    await expect(client.runEvaluator("nope", { sdkRunId })).rejects.toThrow(/no evaluator named "nope"/);
  });

  it("judges every run of an experiment on the server when the experiment names it", async () => {
    await client.createDataset("capitals-js");
    await client.addDatasetItems("capitals-js", [
      { id: "fr", input: "France", expected_output: "Paris" },
      { id: "de", input: "Germany", expected_output: "Berlin" },
      { id: "it", input: "Italy", expected_output: "Rome" },
    ]);
    const answers: Record<string, string> = { France: "Paris", Germany: JUDGE_FAIL_MARKER, Italy: "Rome" };
    const summary = await client.runExperiment({
      dataset: "capitals-js", name: "judged", agentName: "capitals", task: async (input) => answers[input as string],
      evaluators: [function exact({ output, expectedOutput }) { return output === expectedOutput; }], serverEvaluators: ["correctness"],
    });
    expect(summary.completedCount).toBe(3);
    const deadline = Date.now() + 30_000;
    let items: { item_id: string; scores: Record<string, unknown> }[] = [];
    while (Date.now() < deadline) {
      items = (await (await fetch(`${server.url}/api/experiments/${summary.experimentId}`, { headers: { authorization: `Bearer ${server.key}` } })).json()).items;
      if (items.every((i) => "correctness" in i.scores)) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(Object.fromEntries(items.map((i) => [i.item_id, i.scores]))).toEqual({
      fr: { exact: true, correctness: true }, de: { exact: false, correctness: false }, it: { exact: true, correctness: true },
    });
    // Resuming keeps the attachment (one rule), and judges only what is new.
    await client.runExperiment({ dataset: "capitals-js", name: "judged", task: async (input) => answers[input as string], resume: true, serverEvaluators: ["correctness"] });
  }, 90_000);
});
