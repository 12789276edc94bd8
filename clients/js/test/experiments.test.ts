/**
 * Experiments from the JS client against a real server (`runwatch start`): a LangGraph.js graph whose model calls an
 * LLM on loopback is the task; two config versions run over the same dataset version; each item's run is an
 * ordinary run naming the experiment and the item, with its LLM call and cost; an item whose LLM call fails makes
 * that run an error and the rest go on; a resume re-runs only that item; the activation gate then lets the better
 * config version in and refuses the way back until forced with a reason.
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SystemMessage, HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError } from "../src/index.js";
import { CallbackHandler } from "../src/langchain.js";
import { FAIL_MARKER, HttpChatModel, startFakeLlm, type FakeLlm } from "./fake-llm.js";
import { dashboard, startRealServer, waitForRun, type RealServer } from "./real-server.js";

let server: RealServer;
let client: Runwatch;
let llm: FakeLlm;

beforeAll(async () => {
  [server, llm] = await Promise.all([startRealServer(), startFakeLlm(5)]);
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 50 });
}, 120_000);
afterAll(async () => {
  await client?.shutdown();
  await server?.stop();
  await llm?.close();
});

const State = Annotation.Root({ question: Annotation<string>(), answer: Annotation<string>() });

/** The agent at a config version: version 2's prompt makes the model shout, which is what the dataset expects. */
function agent(style: "echo" | "shout") {
  const model = new HttpChatModel(llm.url);
  const graph = new StateGraph(State)
    .addNode("respond", async (s) => {
      const reply = await model.invoke([new SystemMessage(`style: ${style}`), new HumanMessage(s.question)]);
      return { answer: String(reply.content) };
    })
    .addEdge(START, "respond")
    .addEdge("respond", END)
    .compile({ name: "qa-graph" });
  return async (input: unknown) => {
    const out = await graph.invoke({ question: (input as { question: string }).question }, { callbacks: [new CallbackHandler({ client })] });
    return out.answer;
  };
}

const exactMatch = ({ output, expectedOutput }: { output: unknown; expectedOutput: unknown }) => (output === expectedOutput ? 1 : 0);

describe("experiments", () => {
  it("runs two config versions over a dataset, survives a failing item, and resumes only that item", async () => {
    const dataset = `qa ${Date.now()}`;
    await client.createDataset(dataset);
    const items = Array.from({ length: 12 }, (_, i) => ({ id: `q${String(i).padStart(2, "0")}`, input: { question: `what is item ${i}?` }, expected_output: `WHAT IS ITEM ${i}?` }));
    items.push({ id: "q99", input: { question: `${FAIL_MARKER} now` }, expected_output: "never" });
    await client.addDatasetItems(dataset, items);

    const v1 = await client.runExperiment({
      dataset, name: "echo prompt", task: agent("echo"), evaluators: [exactMatch], agentName: "qa-bot", configVersion: 1, maxConcurrency: 4,
    });
    expect([v1.ran, v1.completedCount, v1.errorCount, v1.taskErrors.map((e) => e.itemId)]).toEqual([13, 13, 1, ["q99"]]);
    expect(v1.scores.exactMatch).toEqual({ mean: 0, count: 12 });
    expect(v1.costUsd).toBeGreaterThan(0);
    expect(v1.latencyMs.p50).not.toBeNull();
    expect(v1.url).toBe(`${server.url}/datasets/${encodeURIComponent(dataset)}/compare?experiments=${v1.experimentId}`);

    const v2 = await client.runExperiment({
      dataset, name: "shout prompt", task: agent("shout"), evaluators: [{ name: "correct", evaluate: exactMatch }, exactMatch], agentName: "qa-bot", configVersion: 2, maxConcurrency: 8,
    });
    expect([v2.completedCount, v2.errorCount]).toEqual([13, 1]);
    expect(v2.scores.correct).toEqual({ mean: 1, count: 12 });

    // Each result is an ordinary run naming the experiment and the item, with its LLM call.
    const first = v2.items.find((i) => i.item_id === "q00")!;
    expect(first).toMatchObject({ status: "success", output: { value: "WHAT IS ITEM 0?" }, scores: { correct: 1, exactMatch: 1 } });
    const { run } = await waitForRun(server, first.sdk_run_id, (v) => v.run.status === "success");
    expect(run).toMatchObject({ experiment_id: v2.experimentId, dataset_item_id: "q00", repetition: 1, agent_name: "qa-bot", config_version: 2, llm_calls: 1 });
    const failed = v2.items.find((i) => i.item_id === "q99")!;
    expect([failed.status, failed.error]).toEqual(["error", expect.stringContaining("HTTP 500")]);

    // A resume runs the failed item again (now with a question the model answers) and keeps the rest.
    const resumed = await client.runExperiment({
      dataset, name: "echo prompt", resume: true, agentName: "qa-bot", configVersion: 1, evaluators: [exactMatch],
      task: async (input, ctx) => (ctx.item.id === "q99" ? "never" : agent("echo")(input)),
    });
    expect([resumed.experimentId, resumed.ran, resumed.skipped, resumed.errorCount, resumed.completedCount]).toEqual([v1.experimentId, 1, 12, 0, 13]);
    expect(resumed.scores.exactMatch).toEqual({ mean: 1 / 13, count: 13 });

    // The gate: a rule on exactMatch lets version 2 (mean 1) replace version 1 (1/13), and refuses the way back
    // unless forced with a reason.
    const ui = await dashboard(server);
    // The agent is in the registry already: its runs put it there.
    for (const [prompt, activate] of [["echo", "on"], ["shout", ""]]) {
      expect((await ui.form("/agents/qa-bot/configs", { config: JSON.stringify({ prompt }), changelog: prompt, ...(activate ? { activate } : {}) })).status).toBe(303);
    }
    expect((await ui.form("/agents/qa-bot/gate", { score_name: "exactMatch", max_drop: "0.05" })).status).toBe(303);
    const up = await client.activateConfigVersion("qa-bot", 2);
    expect([up.forced, up.gate.active_version, up.gate.candidate_experiment?.scores.exactMatch?.mean]).toEqual([false, 1, 1]);
    const back = await client.activateConfigVersion("qa-bot", 1).catch((e: unknown) => e);
    expect(back).toBeInstanceOf(RunwatchError);
    expect([(back as RunwatchError).details.status, (back as RunwatchError).message]).toEqual([409, expect.stringMatching(/"exactMatch" mean would drop from 1 .* to 0\.0769/)]);
    const forced = await client.activateConfigVersion("qa-bot", 1, { force: true, reason: "the echo prompt is what support asked for" });
    expect([forced.forced, forced.gate.violations.map((v) => v.score)]).toEqual([true, ["exactMatch"]]);

    const listed = await (await fetch(`${server.url}/api/experiments?dataset=${encodeURIComponent(dataset)}`, { headers: { authorization: `Bearer ${server.key}` } })).json();
    expect(listed.experiments.map((e: { name: string; status: string }) => [e.name, e.status])).toEqual([["shout prompt", "completed"], ["echo prompt", "completed"]]);
  }, 120_000);

  it("runs each item as many times as the experiment's repetitions, and a resume re-runs only the repetition that failed", async () => {
    const dataset = `reps ${Date.now()}`;
    await client.createDataset(dataset);
    await client.addDatasetItems(dataset, ["a", "b", "c"].map((id) => ({ id, input: { id }, expected_output: id })));
    const all = ["a", "b", "c"].flatMap((id) => [1, 2, 3].map((r) => `${id}#${r}`));

    const seen: string[] = [];
    const first = await client.runExperiment({
      dataset, name: "three times", repetitions: 3, maxConcurrency: 4, evaluators: [exactMatch],
      task: async (_input, { item, repetition }) => {
        seen.push(`${item.id}#${repetition}`);
        if (item.id === "b" && repetition === 2) throw new Error("a flaky tool");
        return item.id;
      },
    });
    expect(seen.sort()).toEqual(all);
    expect([first.ran, first.completedCount, first.errorCount, first.taskErrors]).toEqual([9, 9, 1, [{ itemId: "b", repetition: 2, message: "a flaky tool" }]]);
    expect(first.scores.exactMatch).toEqual({ mean: 1, count: 8 });
    expect(first.items.map((i) => `${i.item_id}#${i.repetition} ${i.status}`).sort()).toEqual(all.map((k) => `${k} ${k === "b#2" ? "error" : "success"}`));
    expect(new Set(first.items.map((i) => i.sdk_run_id)).size).toBe(9);

    // The resume names no repetitions: it follows the experiment's own three. It has no evaluators, so no score
    // waits for the re-run to be stored: the summary itself must wait for it, though the count was complete before.
    const again: string[] = [];
    const resumed = await client.runExperiment({
      dataset, name: "three times", resume: true,
      task: async (_input, { item, repetition }) => {
        again.push(`${item.id}#${repetition}`);
        return item.id;
      },
    });
    expect(again).toEqual(["b#2"]);
    expect([resumed.experimentId, resumed.ran, resumed.skipped, resumed.errorCount, resumed.completedCount]).toEqual([first.experimentId, 1, 8, 0, 9]);
    expect(resumed.scores.exactMatch).toEqual({ mean: 1, count: 8 });
  }, 60_000);
});
