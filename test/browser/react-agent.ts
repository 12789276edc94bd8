/**
 * A real LangGraph.js ReAct agent for the browser tests of the agent graph and the session transcript: an "agent"
 * node calling a chat model and a "tools" node (LangGraph's ToolNode) running get_weather, looping until the model
 * answers without a tool call, reported through the JS SDK's LangChain handler to the stack under test. The chat
 * model answers locally (no LLM is reachable here) through LangChain's real BaseChatModel machinery: it calls
 * get_weather once per city named in the question it has not looked up yet, then answers with what the tool said.
 */
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { Runwatch } from "../../clients/js/src/index.js";
import { CallbackHandler } from "../../clients/js/src/langchain.js";

const CITIES = ["Paris", "Lisbon", "Oslo"];

class WeatherModel extends BaseChatModel {
  private calls = 0;
  _llmType() {
    return "scripted-weather";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const question = String([...messages].reverse().find((m) => m instanceof HumanMessage)?.content ?? "");
    const asked = CITIES.filter((c) => question.includes(c));
    const since = messages.slice(messages.findLastIndex((m) => m instanceof HumanMessage));
    const looked = since.filter((m) => m instanceof ToolMessage).map((m) => String(m.content));
    const next = asked.find((c) => !looked.some((l) => l.startsWith(c)));
    this.calls++;
    const usage = { input_tokens: 40 + messages.length, output_tokens: 12, total_tokens: 52 + messages.length };
    const message = next
      ? new AIMessage({ content: "", tool_calls: [{ id: `call_${this.calls}`, name: "get_weather", args: { city: next }, type: "tool_call" }], usage_metadata: usage, response_metadata: { model_name: "gpt-4o-mini" } })
      : new AIMessage({ content: `Here is the weather: ${looked.join("; ")}.`, usage_metadata: usage, response_metadata: { model_name: "gpt-4o-mini" } });
    return { generations: [{ text: String(message.content), message }] };
  }
}

const getWeather = tool(async ({ city }: { city: string }) => `${city}: 18°C, sunny`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
});

/** The compiled graph with a checkpointer (a thread's turns share its messages) and a handler reporting to the stack. */
export function weatherAgent(url: string, key: string) {
  const client = new Runwatch({ apiKey: key, baseUrl: url, flushIntervalMs: 50 });
  const model = new WeatherModel({});
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (s) => ({ messages: [await model.invoke(s.messages)] }))
    .addNode("tools", new ToolNode([getWeather]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END))
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver(), name: "weather-agent" });
  let turn = 0;
  let lastRun = "";
  const handler = new CallbackHandler({ client, agentName: "weather-agent", sdkRunId: ({ threadId }) => (lastRun = `${threadId}-turn-${++turn}`) });
  return {
    client,
    /** One turn of the thread; resolves with the run's sdk_run_id once its events are sent. */
    async ask(threadId: string, question: string): Promise<string> {
      await graph.invoke({ messages: [new HumanMessage(question)] }, { configurable: { thread_id: threadId }, callbacks: [handler] });
      if (!(await client.flush(10_000))) throw new Error("the SDK could not send the run's events");
      return lastRun;
    },
  };
}
