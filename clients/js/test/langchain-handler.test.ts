/** runwatch/langchain mapping details, with real LangChain/LangGraph runnables and a loopback ingest server. */
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from "@langchain/langgraph";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { RunnableLambda } from "@langchain/core/runnables";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Prompt, Runwatch } from "../src/index.js";
import { CallbackHandler, createCallbackHandler } from "../src/langchain.js";
import { LoopbackServer, accept207 } from "./loopback.js";

/** A model that reports usage only the legacy way (llmOutput.tokenUsage), like older provider packages. */
class LegacyUsageModel extends BaseChatModel {
  _llmType() {
    return "legacy";
  }
  async _generate(): Promise<ChatResult> {
    return {
      generations: [{ text: "ok", message: new AIMessage("ok") }],
      llmOutput: { tokenUsage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 }, model_name: "legacy-1" },
    };
  }
}

/** A model that asks for a tool, as a provider's tool-calling answer does. */
class ToolCallingModel extends BaseChatModel {
  _llmType() {
    return "tool-calling";
  }
  async _generate(): Promise<ChatResult> {
    const message = new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "lookup_order", args: { order_id: "A-17" } }] });
    return { generations: [{ text: "", message }] };
  }
}

let server: LoopbackServer;
let client: Runwatch;
beforeEach(async () => {
  server = await new LoopbackServer().start();
  client = new Runwatch({ apiKey: "d".repeat(64), baseUrl: server.url });
});
afterEach(async () => {
  await client.shutdown(1000);
  await server.stop();
});

const S = Annotation.Root({ x: Annotation<string>() });
const summary = (events: any[]) =>
  events.map((e) => (e.payload.phase ? `${e.payload.kind === "llm" ? "llm:" : ""}${e.payload.node_name ?? e.payload.tool_name}:${e.payload.phase}` : e.event_type));

describe("runwatch/langchain", () => {
  it("is a plain object without `name`, so LangChain wraps it, and swallows garbage input", () => {
    const h = new CallbackHandler({ client });
    expect("name" in h).toBe(false);
    expect(Object.getPrototypeOf(h)).toBe(Object.prototype);
    expect(createCallbackHandler).toBeTypeOf("function");
    expect(() => {
      h.handleChainStart(null, undefined as any, "x", undefined, undefined, { thread_id: {} as any });
      h.handleChainEnd(undefined, "x");
      h.handleChainError(undefined, "nope");
      h.handleLLMEnd({ generations: "bad" }, "nope");
      h.handleToolEnd(undefined, "nope");
    }).not.toThrow();
  });

  it("a plain LCEL chain is a run (framework langchain, name from runName); legacy llmOutput usage is summed", async () => {
    const model = new LegacyUsageModel({});
    const chain = RunnableLambda.from(async (x: number) => `n=${x}`)
      .pipe(model)
      .withConfig({ runName: "math-chain" });
    await chain.invoke(3, { callbacks: [createCallbackHandler({ client })] });
    await client.flush();
    expect(summary(server.accepted)).toEqual(["run_start", "llm:LegacyUsageModel:start", "llm:LegacyUsageModel:end", "run_end"]);
    expect(server.accepted[0].agent_name).toBe("math-chain");
    expect(server.accepted[0].payload.framework).toBe("langchain");
    // The model call is an LLM span with its own usage; run_end keeps the totals for servers without spans.
    const [start, end] = [server.accepted[1], server.accepted[2]];
    expect(start.span_id).toBe(end.span_id);
    expect(end.payload).toMatchObject({ kind: "llm", prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, model: "legacy-1", output: "ok" });
    expect(server.accepted[3].payload).toMatchObject({ prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, model: "legacy-1" });
    expect(server.accepted[3].payload.output).toMatchObject({ type: "ai", content: "ok" });
  });

  it("a model call given a prompt in its metadata records the prompt's name and version; a fallback records none", async () => {
    const prompt = new Prompt("qa", 3, "Answer {{q}}", { model: "legacy-1" }, ["production"]);
    const chain = RunnableLambda.from((q: string) => prompt.compile({ q }) as string).pipe(new LegacyUsageModel({}));
    await chain.invoke("2+2?", { callbacks: [createCallbackHandler({ client })], metadata: { runwatch_prompt: prompt } });
    const fallback = new Prompt("qa", null, "Answer {{q}}", {}, [], true);
    await chain.invoke("3+3?", { callbacks: [createCallbackHandler({ client })], metadata: { runwatch_prompt: fallback } });
    await client.flush();
    const ends = server.accepted.filter((e) => e.payload.kind === "llm" && e.payload.phase === "end");
    expect(ends.map((e) => [e.payload.prompt_name, e.payload.prompt_version])).toEqual([["qa", 3], [undefined, undefined]]);
    // The handler's key is not the run's metadata.
    expect(server.accepted.find((e) => e.event_type === "run_start").metadata).toBeUndefined();
  });

  it("a model's tool calls reach its span: the calls it asked for in its output, and the calls and answers in a later input", async () => {
    // A model is traced inside a run: a chain (here the identity) is the run's root.
    const within = (model: BaseChatModel) => RunnableLambda.from((messages: unknown[]) => messages).pipe(model);
    await within(new ToolCallingModel({})).invoke([new HumanMessage("where is order A-17?")], { callbacks: [createCallbackHandler({ client })] });
    await within(new LegacyUsageModel({})).invoke(
      [
        new HumanMessage("where is order A-17?"),
        new AIMessage({ content: "", tool_calls: [{ id: "call_1", name: "lookup_order", args: { order_id: "A-17" } }] }),
        new ToolMessage({ content: "shipped", tool_call_id: "call_1", name: "lookup_order" }),
      ],
      { callbacks: [createCallbackHandler({ client })] },
    );
    await client.flush();
    const llmEnds = server.accepted.filter((e) => e.payload.kind === "llm" && e.payload.phase === "end");
    expect(llmEnds[0].payload.output).toEqual({ role: "ai", content: "", tool_calls: [{ id: "call_1", name: "lookup_order", args: { order_id: "A-17" } }] });
    expect(llmEnds[1].payload.output).toBe("ok");
    const secondStart = server.accepted.filter((e) => e.payload.kind === "llm" && e.payload.phase === "start")[1];
    expect(secondStart.payload.input).toEqual([
      { role: "human", content: "where is order A-17?" },
      { role: "ai", content: "", tool_calls: [{ id: "call_1", name: "lookup_order", args: { order_id: "A-17" } }] },
      { role: "tool", content: "shipped", tool_call_id: "call_1", name: "lookup_order" },
    ]);
  });

  it("subgraph nodes are steps too, each reported once, named parent/child and nested in the subgraph's node", async () => {
    const inner = new StateGraph(S).addNode("inner_a", async (s) => ({ x: s.x + "a" })).addEdge(START, "inner_a").addEdge("inner_a", END).compile();
    const outer = new StateGraph(S)
      .addNode("first", async (s) => ({ x: s.x + "1" }))
      .addNode("sub", inner)
      .addEdge(START, "first")
      .addEdge("first", "sub")
      .addEdge("sub", END)
      .compile({ name: "outer" });
    await outer.invoke({ x: "" }, { callbacks: [new CallbackHandler({ client, sdkRunId: "nested-1" })] });
    await client.flush();
    expect(summary(server.accepted)).toEqual(["run_start", "first:start", "first:end", "sub:start", "sub/inner_a:start", "sub/inner_a:end", "sub:end", "run_end"]);
    const sub = server.accepted[3];
    expect(server.accepted[4].parent_span_id).toBe(sub.span_id);
    expect(server.accepted[1].parent_span_id).toBeUndefined();
    expect(server.accepted.every((e) => e.sdk_run_id === "nested-1" && e.agent_name === "outer")).toBe(true);
  });

  it("waitForAnswer() takes the dashboard's answer and the resume reports who gave it", async () => {
    server.responder = (req) =>
      req.method === "GET"
        ? { status: 200, body: { response: "approve", responded_by: "grace@example.com", answered_at: new Date().toISOString() } }
        : accept207(req);
    const graph = new StateGraph(S)
      .addNode("ask", async () => ({ x: String(interrupt("Approve the refund?")) }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile({ checkpointer: new MemorySaver() });
    const handler = new CallbackHandler({ client, agentName: "refunds", sdkRunId: ({ threadId }) => `refund-${threadId}` });
    const config = { configurable: { thread_id: "t-9" }, callbacks: [handler] };
    let result: any = await graph.invoke({ x: "" }, config);
    expect(handler.sdkRunIdFor("t-9")).toBe("refund-t-9");
    while (result.__interrupt__?.length) {
      const answer = await handler.waitForAnswer("t-9", { timeoutMs: 5000 });
      result = await graph.invoke(new Command({ resume: answer.response }), config);
    }
    expect(result.x).toBe("approve");
    await client.flush();
    expect(server.requests.find((r) => r.method === "GET")!.url).toBe("/api/runs/refund-t-9/input?wait=5");
    expect(summary(server.accepted)).toEqual(["run_start", "ask:start", "ask:end", "human_input_requested", "human_input_received", "ask:start", "ask:end", "run_end"]);
    expect(server.accepted.find((e) => e.event_type === "human_input_requested").payload).toMatchObject({ question: "Approve the refund?", channel: "dashboard" });
    expect(server.accepted.find((e) => e.event_type === "human_input_received").payload).toEqual({ response: "approve", responded_by: "grace@example.com" });
    expect(new Set(server.accepted.map((e) => e.sdk_run_id))).toEqual(new Set(["refund-t-9"]));
  });
});
