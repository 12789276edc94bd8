/**
 * What the LangGraph.js handler costs a small support graph, against a no-op handler (LangChain's own callback
 * dispatch) and no handler at all.
 *
 *   node --import tsx clients/js/bench/graph-overhead.ts [cycles=40] [rounds=8]
 *
 * A cycle is one conversation turn of a weather agent (agent → tool → agent → review, which interrupts) and its
 * resume: about 40 events. Conditions: no handler; a no-op handler receiving every callback the Runwatch handler
 * receives; Runwatch's handler with the server down (nothing listens: each batch fails and the queue drops) and
 * up (an ingest server in another process, so its work is not counted). The figure is the process's CPU time per
 * cycle (the graph, the handler and the client share the one JS thread); conditions alternate round by round, so
 * the machine's drift hits all alike. "long conversation" gives every turn 200 earlier messages: the handler's
 * cost should not grow with the conversation.
 */
import { fork } from "node:child_process";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt, messagesStateReducer } from "@langchain/langgraph";
import { Runwatch } from "../src/index.js";
import { CallbackHandler } from "../src/langchain.js";


/** Calls the weather tool first, then answers; usage like a provider's. */
class WeatherModel extends BaseChatModel {
  _llmType() {
    return "scripted";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const toolDone = messages.some((m) => m instanceof ToolMessage);
    const message = toolDone
      ? new AIMessage({ content: "It is sunny in Paris, 21°C.", usage_metadata: { input_tokens: 180, output_tokens: 12, total_tokens: 192 }, response_metadata: { model_name: "gpt-4o-mini" } })
      : new AIMessage({
          content: "",
          tool_calls: [{ id: "call_1", name: "weather", args: { city: "Paris" }, type: "tool_call" }],
          usage_metadata: { input_tokens: 120, output_tokens: 9, total_tokens: 129 },
          response_metadata: { model_name: "gpt-4o-mini" },
        });
    return { generations: [{ text: String(message.content), message }] };
  }
}

const weather = tool(async (input: { city: string }) => JSON.stringify({ city: input.city, forecast: "sunny", celsius: 21 }), {
  name: "weather",
  description: "Today's weather in a city",
  schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
});

const State = Annotation.Root({ messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }), verdict: Annotation<string>() });

function buildGraph() {
  const model = new WeatherModel({});
  return new StateGraph(State)
    .addNode("agent", async (s) => ({ messages: [await model.invoke(s.messages)] }))
    .addNode("tools", async (s) => {
      const call = (s.messages.at(-1) as AIMessage).tool_calls![0]!;
      const result = await (weather as unknown as { invoke(a: unknown): Promise<string> }).invoke(call.args);
      return { messages: [new ToolMessage({ content: result, tool_call_id: call.id! })] };
    })
    .addNode("review", async () => ({ verdict: String(interrupt({ question: "Send this answer?" })) }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : "review"))
    .addEdge("tools", "agent")
    .addEdge("review", END)
    .compile({ checkpointer: new MemorySaver(), name: "support-graph" });
}

/** Every callback the Runwatch handler takes, doing nothing. */
const noop = () => undefined;
const noopHandler = {
  handleChainStart: noop, handleChainEnd: noop, handleChainError: noop, handleChatModelStart: noop, handleLLMStart: noop,
  handleLLMEnd: noop, handleLLMError: noop, handleToolStart: noop, handleToolEnd: noop, handleToolError: noop,
};

const HISTORY: BaseMessage[] = Array.from({ length: 100 }, (_, i) => [
  new HumanMessage(`earlier question ${i} ${"q".repeat(200)}`),
  new AIMessage(`earlier answer ${i} ${"a".repeat(400)}`),
]).flat();

async function cycle(graph: ReturnType<typeof buildGraph>, handler: unknown, n: number, history: BaseMessage[]): Promise<void> {
  const config = { configurable: { thread_id: `bench-${n}` }, ...(handler ? { callbacks: [handler] } : {}) } as never;
  await graph.invoke({ messages: [...history, new HumanMessage("What is the weather in Paris?")] }, config);
  await graph.invoke(new Command({ resume: "yes, send it" }), config);
}

async function main(): Promise<void> {
  const cycles = Number(process.argv[2] ?? 40);
  const rounds = Number(process.argv[3] ?? 8);
  const serverProcess = fork(new URL(import.meta.url).pathname, ["--serve"], { execArgv: process.execArgv, stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const port = await new Promise<number>((resolve) => serverProcess.once("message", (m) => resolve(Number(m))));
  const up = new Runwatch({ apiKey: "f".repeat(64), baseUrl: `http://127.0.0.1:${port}`, onError: noop });
  const down = new Runwatch({ apiKey: "f".repeat(64), baseUrl: "http://127.0.0.1:9", onError: noop });
  const conditions: [string, () => unknown, BaseMessage[]][] = [
    ["no handler", () => undefined, []],
    ["no-op handler", () => noopHandler, []],
    ["runwatch, server down", () => new CallbackHandler({ client: down }), []],
    ["runwatch, server up", () => new CallbackHandler({ client: up }), []],
    ["long conversation: no-op handler", () => noopHandler, HISTORY],
    ["long conversation: runwatch, server down", () => new CallbackHandler({ client: down }), HISTORY],
    ["long conversation: runwatch, server up", () => new CallbackHandler({ client: up }), HISTORY],
  ];
  const samples = new Map<string, number[]>(conditions.map(([name]) => [name, []]));
  let n = 0;
  for (let round = 0; round <= rounds; round++) {
    for (const [name, make, history] of conditions) {
      const graph = buildGraph();
      const handler = make();
      global.gc?.();
      const t0 = process.cpuUsage();
      for (let i = 0; i < cycles; i++) await cycle(graph, handler, n++, history);
      await up.flush(30_000); // what the handler queued is sent inside the measurement
      const used = process.cpuUsage(t0);
      if (round > 0) samples.get(name)!.push((used.user + used.system) / 1000 / cycles); // round 0 warms up
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(samples.get("no-op handler")!);
  const longBase = median(samples.get("long conversation: no-op handler")!);
  console.log(`CPU ms per cycle (median of ${rounds} rounds of ${cycles} cycles), Node.js ${process.version}`);
  for (const [name] of conditions) {
    const m = median(samples.get(name)!);
    const ref = name.startsWith("long") ? longBase : base;
    console.log(`${name.padEnd(42)} ${m.toFixed(2).padStart(7)} ms  ${name.includes("runwatch") ? `${((m / ref - 1) * 100).toFixed(1).padStart(5)}% over the no-op handler` : ""}`);
  }
  console.log(`RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
  await Promise.all([up.shutdown(5_000), down.shutdown(1_000)]);
  serverProcess.kill();
}

if (process.argv[2] === "--serve") {
  // The ingest server, in its own process.
  const { LoopbackServer } = await import("../test/loopback.js");
  const server = await new LoopbackServer().start();
  setInterval(() => (server.requests.length = 0, server.accepted.length = 0), 1000);
  process.send!(server.port);
} else {
  await main();
}
