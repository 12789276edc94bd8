/**
 * A real LangGraph.js graph (two nodes, a tool, a chat model with token usage, an interrupt) reports through
 * runwatch/langchain to a real Runwatch server started by the test; the read API must show the whole run.
 */
import { Annotation, Command, END, MemorySaver, START, Send, StateGraph, interrupt } from "@langchain/langgraph";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError } from "../src/index.js";
import { CallbackHandler } from "../src/langchain.js";
import { startRealServer, waitForRun, type RealServer } from "./real-server.js";

/**
 * A chat model that answers locally (no LLM endpoint is reachable here) but goes through LangChain's real
 * BaseChatModel machinery, so callbacks see the same usage_metadata / response_metadata a provider returns.
 */
class ScriptedChatModel extends BaseChatModel {
  constructor(
    private readonly usage: { input: number; output: number }[],
    private readonly modelName = "gpt-4o-mini",
  ) {
    super({});
  }
  _llmType() {
    return "scripted";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const u = this.usage.shift() ?? { input: 1, output: 1 };
    const text = `echo: ${String(messages.at(-1)?.content ?? "")}`;
    const message = new AIMessage({
      content: text,
      usage_metadata: { input_tokens: u.input, output_tokens: u.output, total_tokens: u.input + u.output },
      response_metadata: { model_name: this.modelName },
    });
    return { generations: [{ text, message }] };
  }
}

const lookup = tool(async (input: { topic: string }) => `facts about ${input.topic}`, {
  name: "lookup",
  description: "Looks a topic up",
  schema: { type: "object", properties: { topic: { type: "string" } }, required: ["topic"] },
}) as unknown as { invoke(input: { topic: string }): Promise<string> };

const State = Annotation.Root({
  topic: Annotation<string>(),
  facts: Annotation<string>(),
  draft: Annotation<string>(),
  verdict: Annotation<string>(),
});

function buildGraph(model: ScriptedChatModel, opts: { failInReview?: boolean } = {}) {
  return new StateGraph(State)
    .addNode("research", async (s) => {
      const facts = await lookup.invoke({ topic: s.topic });
      const draft = await model.invoke(`write about ${facts}`);
      return { facts: String(facts), draft: String(draft.content) };
    })
    .addNode("review", async (s) => {
      if (opts.failInReview) throw new RangeError("reviewer crashed");
      const verdict = interrupt({ question: "Publish this draft?", draft: s.draft });
      const polished = await model.invoke(`polish (${String(verdict)}): ${s.draft}`);
      return { verdict: `${String(verdict)} / ${String(polished.content)}` };
    })
    .addEdge(START, "research")
    .addEdge("research", "review")
    .addEdge("review", END)
    .compile({ checkpointer: new MemorySaver(), name: "writer-graph" });
}

let server: RealServer;
let client: Runwatch;
const errors: RunwatchError[] = [];

beforeAll(async () => {
  server = await startRealServer();
  client = new Runwatch({ apiKey: server.key, baseUrl: server.url, onError: (e) => errors.push(e), flushIntervalMs: 50 });
}, 120_000);

afterAll(async () => {
  await client?.shutdown(5_000);
  await server?.stop();
});

const types = (v: { events: { event_type: string; payload: Record<string, any> }[] }) =>
  v.events.map((e) => (e.payload.phase ? `${e.payload.kind === "llm" ? "llm" : e.event_type}:${e.payload.node_name ?? e.payload.tool_name}:${e.payload.phase}` : e.event_type));

describe("LangGraph.js against a real Runwatch server", () => {
  it("two nodes, a tool and an interrupt: steps, tool calls, human input and run_end with tokens; status success", async () => {
    const handler = new CallbackHandler({ client, agentName: "writer" });
    const graph = buildGraph(new ScriptedChatModel([{ input: 12, output: 30 }, { input: 40, output: 8 }]));
    const threadId = `thread-${Date.now()}`;
    const config = { configurable: { thread_id: threadId }, callbacks: [handler] };

    const first = await graph.invoke({ topic: "otters" }, config);
    expect((first as { __interrupt__?: { value: unknown }[] }).__interrupt__?.[0]?.value).toMatchObject({ question: "Publish this draft?" });
    expect(await client.flush(10_000)).toBe(true);
    // One run per invocation, the thread its session: the handler knows the paused run's id.
    const runId = handler.sdkRunIdFor(threadId)!;
    expect(runId).not.toBe(threadId);

    const waiting = await waitForRun(server, runId, (v) => v.run.status === "waiting_for_input");
    expect(waiting.run.session_id).toBe(threadId);
    expect(waiting.run.pending_question).toContain("Publish this draft?");

    const final = await graph.invoke(new Command({ resume: "yes, ship it" }), config);
    expect(final.verdict).toContain("yes, ship it");
    expect(await client.flush(10_000)).toBe(true);

    const v = await waitForRun(server, runId, (x) => x.run.status === "success" && x.events.some((e) => e.event_type === "run_end"));
    expect(types(v)).toEqual([
      "run_start",
      "step:research:start",
      "tool_call:lookup:start",
      "tool_call:lookup:end",
      "llm:ScriptedChatModel:start",
      "llm:ScriptedChatModel:end",
      "step:research:end",
      "step:review:start",
      "step:review:end",
      "human_input_requested",
      "human_input_received",
      "step:review:start",
      "llm:ScriptedChatModel:start",
      "llm:ScriptedChatModel:end",
      "step:review:end",
      "run_end",
    ]);
    const ev = (t: string, pred: (p: Record<string, any>) => boolean = () => true) => v.events.find((e) => e.event_type === t && pred(e.payload))!.payload;
    expect(ev("run_start")).toMatchObject({ framework: "langgraph", input: { topic: "otters" } });
    expect(v.run.agent_name).toBe("writer");
    expect(ev("tool_call", (p) => p.phase === "start")).toMatchObject({ tool_name: "lookup", input_preview: '{"topic":"otters"}' });
    expect(ev("tool_call", (p) => p.phase === "end")).toMatchObject({ tool_name: "lookup", output_preview: "facts about otters" });
    expect(typeof ev("tool_call", (p) => p.phase === "end").duration_ms).toBe("number");
    expect(ev("step", (p) => p.node_name === "research" && p.phase === "end").output).toMatchObject({ facts: "facts about otters" });
    expect(ev("human_input_requested")).toMatchObject({ question: "Publish this draft?", context: { draft: "echo: write about facts about otters" } });
    expect(ev("human_input_received")).toMatchObject({ response: "yes, ship it" });
    // Usage of both model calls — before and after the interrupt — summed into one run_end.
    expect(ev("run_end")).toMatchObject({ prompt_tokens: 52, completion_tokens: 38, total_tokens: 90, model: "gpt-4o-mini" });
    expect(v.run).toMatchObject({ status: "success", prompt_tokens: 52, completion_tokens: 38, total_tokens: 90, model: "gpt-4o-mini", llm_calls: 2 });
    // The spans nest as the graph ran: the tool and the model call under their nodes.
    const spans = (await (await fetch(`${server.url}/api/runs/${encodeURIComponent(runId)}/spans`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { spans: Record<string, any>[] };
    const byId = new Map(spans.spans.map((s) => [s.span_id, s]));
    const llms = spans.spans.filter((s) => s.kind === "llm");
    expect(llms.map((s) => [byId.get(s.parent_span_id)?.name, s.prompt_tokens, s.completion_tokens, s.model])).toEqual([
      ["research", 12, 30, "gpt-4o-mini"],
      ["review", 40, 8, "gpt-4o-mini"],
    ]);
    expect(byId.get(spans.spans.find((s) => s.kind === "tool")!.parent_span_id)?.name).toBe("research");
    expect(errors.filter((e) => e.code !== "network")).toEqual([]);
  });

  it("a node that throws ends the run in error with the stack (runIdFromThread: the thread id is the run id)", async () => {
    const handler = new CallbackHandler({ client, agentName: "writer", runIdFromThread: true });
    const graph = buildGraph(new ScriptedChatModel([{ input: 5, output: 5 }]), { failInReview: true });
    const threadId = `thread-err-${Date.now()}`;
    await expect(graph.invoke({ topic: "crashes" }, { configurable: { thread_id: threadId }, callbacks: [handler] })).rejects.toThrow("reviewer crashed");
    expect(await client.flush(10_000)).toBe(true);
    const v = await waitForRun(server, threadId, (x) => x.run.status === "error");
    expect(types(v)).toEqual(["run_start", "step:research:start", "tool_call:lookup:start", "tool_call:lookup:end", "llm:ScriptedChatModel:start", "llm:ScriptedChatModel:end", "step:research:end", "step:review:start", "step:review:end", "error"]);
    const err = v.events.at(-1)!.payload;
    expect(err).toMatchObject({ error_type: "RangeError", error_message: "reviewer crashed" });
    expect(err.traceback).toContain("langgraph.test.ts");
    expect(v.events.find((e) => e.payload.node_name === "review" && e.payload.phase === "end")!.payload.error).toBe("RangeError: reviewer crashed");
  });

  it("concurrent invocations in one process stay separate runs", async () => {
    const handler = new CallbackHandler({ client, agentName: "parallel", runIdFromThread: true });
    const ids = [1, 2, 3].map((i) => `thread-par-${i}-${Date.now()}`);
    await Promise.all(
      ids.map((id, i) =>
        buildGraph(new ScriptedChatModel([{ input: i + 1, output: 1 }]), { failInReview: i === 2 })
          .invoke({ topic: `t${i}` }, { configurable: { thread_id: id }, callbacks: [handler] })
          .catch(() => undefined),
      ),
    );
    expect(await client.flush(10_000)).toBe(true);
    const [a, b, c] = await Promise.all([
      waitForRun(server, ids[0]!, (x) => x.run.status === "waiting_for_input"),
      waitForRun(server, ids[1]!, (x) => x.run.status === "waiting_for_input"),
      waitForRun(server, ids[2]!, (x) => x.run.status === "error"),
    ]);
    expect(a.events.find((e) => e.event_type === "run_start")!.payload.input).toEqual({ topic: "t0" });
    expect(b.events.find((e) => e.event_type === "run_start")!.payload.input).toEqual({ topic: "t1" });
    for (const v of [a, b, c]) expect(v.events.filter((e) => e.event_type === "run_start").length).toBe(1);
  });

  it("chat turns on one thread: one run per invocation in the thread's session, each with its own tokens; runIdFromThread keeps one run", async () => {
    const Chat = Annotation.Root({ question: Annotation<string>(), answer: Annotation<string>() });
    const chat = (model: ScriptedChatModel) =>
      new StateGraph(Chat)
        .addNode("reply", async (s) => ({ answer: String((await model.invoke(s.question)).content) }))
        .addEdge(START, "reply")
        .addEdge("reply", END)
        .compile({ checkpointer: new MemorySaver(), name: "chat" });
    const sessionOf = async (id: string) =>
      (await (await fetch(`${server.url}/api/sessions/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as {
        session: { run_count: number; total_tokens: number };
        runs: { sdk_run_id: string; total_tokens: number; status: string; session_id: string }[];
      };

    const threadId = `chat-${Date.now()}`;
    const graph = chat(new ScriptedChatModel([{ input: 10, output: 5 }, { input: 30, output: 7 }]));
    const handler = new CallbackHandler({ client, agentName: "chat-bot" });
    const config = { configurable: { thread_id: threadId }, callbacks: [handler] };
    await graph.invoke({ question: "hello" }, config);
    await new Promise((r) => setTimeout(r, 5)); // turns of the same millisecond would sort by id
    await graph.invoke({ question: "and again" }, config);
    expect(await client.flush(10_000)).toBe(true);
    let s = await sessionOf(threadId);
    for (let i = 0; i < 100 && !(s.runs?.length === 2 && s.runs.every((r) => r.status === "success")); i++) {
      await new Promise((r) => setTimeout(r, 100));
      s = await sessionOf(threadId);
    }
    expect(s.runs.map((r) => [r.total_tokens, r.status, r.session_id])).toEqual([[15, "success", threadId], [37, "success", threadId]]);
    expect(new Set(s.runs.map((r) => r.sdk_run_id)).size).toBe(2);
    expect(s.session).toMatchObject({ run_count: 2, total_tokens: 52 });
    const second = await waitForRun(server, s.runs[1]!.sdk_run_id, () => true);
    expect(second.events.find((e) => e.event_type === "run_start")!.payload.input).toEqual({ question: "and again" });

    const oldThread = `chat-old-${Date.now()}`;
    const old = chat(new ScriptedChatModel([{ input: 10, output: 5 }, { input: 30, output: 7 }]));
    const oldConfig = { configurable: { thread_id: oldThread }, callbacks: [new CallbackHandler({ client, agentName: "chat-bot", runIdFromThread: true })] };
    await old.invoke({ question: "hello" }, oldConfig);
    await old.invoke({ question: "and again" }, oldConfig);
    expect(await client.flush(10_000)).toBe(true);
    const v = await waitForRun(server, oldThread, (x) => x.events.filter((e) => e.event_type === "run_end").length === 2);
    expect(v.events.filter((e) => e.event_type === "run_start").length).toBe(2);
    expect((await sessionOf(oldThread)).runs.map((r) => r.sdk_run_id)).toEqual([oldThread]);
  });

  it("the framework-agnostic API against the same server", async () => {
    const sdkRunId = `plain-${Date.now()}`;
    await client.run({ agentName: "plain", sdkRunId, input: { q: "2+2" } }, async (run) => {
      await run.step("think", async () => ({ plan: "add" }));
      const sum = await run.toolCall("calculator", { a: 2, b: 2 }, ({ a, b }) => a + b);
      run.setUsage({ promptTokens: 9, completionTokens: 1, model: "gpt-4o-mini" });
      return { sum };
    });
    expect(await client.flush(10_000)).toBe(true);
    const v = await waitForRun(server, sdkRunId, (x) => x.run.status === "success");
    expect(types(v)).toEqual(["run_start", "step:think:start", "step:think:end", "tool_call:calculator:start", "tool_call:calculator:end", "run_end"]);
    expect(v.run).toMatchObject({ agent_name: "plain", prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 });
  });

  it("two models, a tool under its node, three parallel Send branches, a subgraph, an interrupt resumed by a new handler: spans nest, the run sums every call", async () => {
    const gpt = new ScriptedChatModel([{ input: 120, output: 15 }, { input: 40, output: 8 }], "gpt-4o");
    const claude = new ScriptedChatModel([{ input: 50, output: 10 }, { input: 50, output: 10 }, { input: 50, output: 10 }, { input: 70, output: 20 }], "claude-3-5-haiku");
    const Trip = Annotation.Root({
      notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
      text: Annotation<string>(),
      verdict: Annotation<string>(),
    });
    const writer = new StateGraph(Trip)
      .addNode("draft", async (s) => ({ text: String((await claude.invoke(`draft from ${s.notes.join("; ")}`)).content) }))
      .addEdge(START, "draft")
      .addEdge("draft", END)
      .compile({ name: "writer" });
    const graph = new StateGraph(Trip)
      .addNode("agent", async () => {
        const facts = await lookup.invoke({ topic: "Lisbon" });
        await gpt.invoke(`plan with ${facts}`);
        return {};
      })
      .addNode("research", async (b: { topic: string }) => ({ notes: [`${b.topic}: ${String((await claude.invoke(`research ${b.topic}`)).content)}`] }))
      .addNode("writer", writer)
      .addNode("review", async (s) => {
        const verdict = interrupt({ question: "Book this trip?", draft: s.text });
        return { verdict: String((await gpt.invoke(`polish (${String(verdict)})`)).content) };
      })
      .addEdge(START, "agent")
      .addConditionalEdges("agent", () => ["flights", "hotels", "weather"].map((topic) => new Send("research", { topic })), ["research"])
      .addEdge("research", "writer")
      .addEdge("writer", "review")
      .addEdge("review", END)
      .compile({ checkpointer: new MemorySaver(), name: "trip-planner" });
    const threadId = `js-react-${Date.now()}`;
    // The resume gets a new handler and a new client, as another process would: only the server knows the paused run.
    const first = new CallbackHandler({ client, agentName: "trip" });
    await graph.invoke({ notes: [] }, { configurable: { thread_id: threadId }, callbacks: [first] });
    expect(await client.flush(10_000)).toBe(true);
    const runId = first.sdkRunIdFor(threadId)!;
    await waitForRun(server, runId, (v) => v.run.status === "waiting_for_input");
    const other = new Runwatch({ apiKey: server.key, baseUrl: server.url, flushIntervalMs: 50 });
    const resumer = new CallbackHandler({ client: other, agentName: "trip" });
    expect(resumer.sdkRunIdFor(threadId)).toBeUndefined();
    expect(await resumer.findWaitingRun(threadId)).toBe(runId);
    await graph.invoke(new Command({ resume: "yes" }), { configurable: { thread_id: threadId }, callbacks: [resumer] });
    expect(await other.shutdown(10_000)).toBe(true);
    const v = await waitForRun(server, runId, (x) => x.run.status === "success" && x.run.llm_calls === 6);
    const session = (await (await fetch(`${server.url}/api/sessions/${encodeURIComponent(threadId)}`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { runs: { sdk_run_id: string }[] };
    expect(session.runs.map((r) => r.sdk_run_id)).toEqual([runId]); // the resume made no second run
    expect(v.run).toMatchObject({ prompt_tokens: 120 + 150 + 70 + 40, completion_tokens: 15 + 30 + 20 + 8 });
    const { spans } = (await (await fetch(`${server.url}/api/runs/${encodeURIComponent(runId)}/spans`, { headers: { authorization: `Bearer ${server.key}` } })).json()) as { spans: Record<string, any>[] };
    const byId = new Map(spans.map((s) => [s.span_id, s]));
    const parentName = (s: Record<string, any>) => (s.parent_span_id ? byId.get(s.parent_span_id)?.name : null);
    expect(spans.filter((s) => s.kind === "llm").map((s) => `${parentName(s)} ${s.model}`).sort()).toEqual(
      ["agent gpt-4o", "research claude-3-5-haiku", "research claude-3-5-haiku", "research claude-3-5-haiku", "review gpt-4o", "writer/draft claude-3-5-haiku"].sort(),
    );
    const research = spans.filter((s) => s.name === "research");
    expect(new Set(research.map((s) => s.span_id)).size).toBe(3); // three parallel branches, told apart
    expect(parentName(spans.find((s) => s.kind === "tool")!)).toBe("agent");
    expect(parentName(spans.find((s) => s.name === "writer/draft")!)).toBe("writer");
  });
});
