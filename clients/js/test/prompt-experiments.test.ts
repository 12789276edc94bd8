/**
 * Experiments over prompt versions from the JS client against a real server (`runwatch start`): the task compiles the
 * prompt getPrompt returned, and runExperiment names its version; two versions over the same dataset, each listed
 * with its scores; a fallback prompt (no version) is refused before anything runs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prompt, Runwatch, RunwatchError } from "../src/index.js";
import { startRealServer, type RealServer } from "./real-server.js";

let server: RealServer;
let client: Runwatch;

const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method, headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};

beforeAll(async () => {
  server = await startRealServer();
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 50 });
}, 120_000);
afterAll(async () => {
  await client?.shutdown();
  await server?.stop();
});

/** The "model": a prompt that asks to shout gets the question shouted back, which is what the dataset expects. */
const model = (prompt: string) => (prompt.startsWith("SHOUT") ? prompt.slice(6).toUpperCase() : prompt.slice(5));
const exactMatch = ({ output, expectedOutput }: { output: unknown; expectedOutput: unknown }) => (output === expectedOutput ? 1 : 0);

describe("experiments over prompt versions", () => {
  it("names the version getPrompt returned, for each of two versions", async () => {
    for (const text of ["echo {{question}}", "SHOUT {{question}}"]) expect((await api("POST", "/api/prompts/qa/versions", { prompt: text })).status).toBe(201);
    const dataset = `prompt qa ${Date.now()}`;
    await client.createDataset(dataset);
    await client.addDatasetItems(dataset, [0, 1, 2].map((i) => ({ id: `q${i}`, input: { question: `item ${i}?` }, expected_output: `ITEM ${i}?` })));

    const means: Record<number, number | null> = {};
    for (const version of [1, 2]) {
      const prompt = await client.getPrompt("qa", { version });
      const summary = await client.runExperiment({
        dataset, name: `qa v${version}`, prompt, evaluators: [exactMatch],
        task: async (input) => model(prompt.compile(input as Record<string, unknown>) as string),
      });
      expect(summary.completedCount).toBe(3);
      means[version] = summary.scores.exactMatch!.mean;
    }
    expect(means).toEqual({ 1: 0, 2: 1 });
    const listed = await api("GET", `/api/experiments?dataset=${encodeURIComponent(dataset)}`);
    expect(listed.body.experiments.map((e: any) => [e.name, e.prompt_name, e.prompt_version])).toEqual([["qa v2", "qa", 2], ["qa v1", "qa", 1]]);

    // Explicitly, by name and version.
    const explicit = await client.runExperiment({ dataset, name: "qa v1 again", promptName: "qa", promptVersion: 1, task: async () => "x" });
    expect((await api("GET", `/api/experiments/${explicit.experimentId}`)).body.experiment).toMatchObject({ prompt_name: "qa", prompt_version: 1 });

    const fallback = new Prompt("qa", null, "echo {{question}}", {}, [], true);
    const refused = await client.runExperiment({ dataset, name: "qa fallback", prompt: fallback, task: async () => "x" }).catch((e: unknown) => e);
    expect([refused instanceof RunwatchError, (refused as Error).message]).toEqual([true, expect.stringContaining("fallback")]);
  }, 120_000);
});
