/**
 * How fast runExperiment gets through a dataset when the LLM is slow: a LangGraph.js graph whose model calls an LLM
 * server on loopback that answers after 50 ms, over a dataset of ITEMS items, at concurrency 1 and 16 alternately
 * (ROUNDS rounds each), against `runwatch start` on this machine. The figure is items per second from the first
 * run to the summary (every run stored and scored); the yardstick is the bound the LLM's delay sets
 * (concurrency / 50 ms), measured in the same run by the concurrency-1 round.
 *
 *   node --import tsx clients/js/bench/experiment-throughput.ts [items=320] [rounds=2]
 */
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { HumanMessage, SystemMessage } from "@langchain/core/messages";
import { Runwatch } from "../src/index.js";
import { CallbackHandler } from "../src/langchain.js";
import { HttpChatModel, startFakeLlm } from "../test/fake-llm.js";
import { startRealServer } from "../test/real-server.js";

const ITEMS = Number(process.argv[2] ?? 320);
const ROUNDS = Number(process.argv[3] ?? 2);
const DELAY_MS = 50;

const [server, llm] = await Promise.all([startRealServer(), startFakeLlm(DELAY_MS)]);
const client = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 50 });
try {
  const SMALL = Math.min(ITEMS, 40); // concurrency 1 is slow by design: fewer items
  for (const [name, n] of [["throughput", ITEMS], ["throughput-small", SMALL]] as const) {
    await client.createDataset(name);
    await client.addDatasetItems(name, Array.from({ length: n }, (_, i) => ({ id: `i${i}`, input: { question: `question ${i}` }, expected_output: `QUESTION ${i}` })));
  }
  const model = new HttpChatModel(llm.url);
  const State = Annotation.Root({ question: Annotation<string>(), answer: Annotation<string>() });
  const graph = new StateGraph(State)
    .addNode("respond", async (s) => ({ answer: String((await model.invoke([new SystemMessage("style: shout"), new HumanMessage(s.question)])).content) }))
    .addEdge(START, "respond").addEdge("respond", END).compile();
  const task = async (input: unknown) => (await graph.invoke({ question: (input as { question: string }).question }, { callbacks: [new CallbackHandler({ client })] })).answer;
  const correct = ({ output, expectedOutput }: { output: unknown; expectedOutput: unknown }) => (output === expectedOutput ? 1 : 0);

  const rates: Record<number, number[]> = { 1: [], 16: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const concurrency of [1, 16]) {
      const items = concurrency === 1 ? SMALL : ITEMS;
      const t0 = performance.now();
      const summary = await client.runExperiment({
        dataset: concurrency === 1 ? "throughput-small" : "throughput", name: `c${concurrency} r${round}`, task, evaluators: [correct], maxConcurrency: concurrency,
      });
      const seconds = (performance.now() - t0) / 1000;
      if (summary.errorCount || summary.completedCount !== items || summary.scores.correct?.mean !== 1) throw new Error(`unexpected summary ${JSON.stringify(summary).slice(0, 400)}`);
      rates[concurrency]!.push(items / seconds);
      console.log(`round ${round + 1}, concurrency ${String(concurrency).padStart(2)}: ${items} LLM items in ${seconds.toFixed(2)} s → ${(items / seconds).toFixed(1)} items/s (bound ${(concurrency * 1000 / DELAY_MS).toFixed(0)})`);
    }
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median: concurrency 1 ${med(rates[1]!).toFixed(1)} items/s, 16 ${med(rates[16]!).toFixed(1)} items/s: ${(med(rates[16]!) / med(rates[1]!)).toFixed(1)}× (the delay's bound is 16×); peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
} finally {
  await client.shutdown();
  await server.stop();
  await llm.close();
}
