// The message model of the trace view (web/static/trace/message-formats.js): every format a span's input or output
// arrives in reads as the same roles and parts.
import { describe, expect, it } from "vitest";
import { normalizeMessages, splitMessages, type Message } from "../static/trace/message-formats.js";
import { CITY, FIXTURES } from "./fixtures/message-fixtures.js";

const txt = (text: string) => ({ type: "text", text });
const call = (id: string | undefined, args: unknown = CITY) => ({ type: "tool_call", ...(id ? { id } : {}), name: "get_weather", arguments: args });
const result = (id: string | undefined, content: unknown[], name?: string) => ({ type: "tool_result", ...(id ? { id } : {}), ...(name ? { name } : {}), content });
const sys = { role: "system", parts: [txt("You are terse.")] };
/** Roles and part types in order: the shape a reader sees. */
const outline = (ms: Message[] | null) => ms?.map((m) => `${m.role}: ${m.parts.map((p) => (p.type === "media" ? `media(${p.modality})` : p.type)).join(", ")}`);

describe("normalizeMessages", () => {
  it("the JS SDK's LangChain messages: human/ai/tool roles, content blocks with a tool_use", () => {
    expect(normalizeMessages(FIXTURES.sdkLangchainJsInput)).toEqual([
      sys,
      { role: "user", parts: [txt('Weather in Paris? <img src=x onerror="window.__pwned=1">')] },
      { role: "assistant", parts: [txt("Let me check."), { type: "tool_call", id: "toolu_1", name: "get_weather", arguments: CITY }] },
      { role: "tool", parts: [result(undefined, [txt("18°C, sunny")])] },
    ]);
  });

  it("the Python SDK's LLM output: one AIMessage with LangChain tool_calls", () => {
    expect(normalizeMessages(FIXTURES.sdkPythonLlmOutput)).toEqual([{ role: "assistant", parts: [call("call_1")] }]);
  });

  it("LangGraph state: the messages, the state's other keys kept apart", () => {
    const split = splitMessages(FIXTURES.langgraphState);
    expect(split?.messages).toEqual([
      { role: "user", parts: [txt("Weather in Paris?")] },
      { role: "assistant", parts: [call("call_1")] },
      { role: "tool", parts: [result("call_1", [txt("18°C, sunny")], "get_weather")] },
      { role: "assistant", parts: [txt("It is 18°C and sunny.")] },
    ]);
    expect(split?.rest).toEqual({ turn: 3 });
  });

  it("LangChain's serialised constructors and nested generations", () => {
    expect(normalizeMessages(FIXTURES.langchainSerialised)).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris?")] },
      { role: "assistant", parts: [call("call_1")] }, // tool_calls, not additional_kwargs' copy as well
      { role: "tool", parts: [result("call_1", [txt("18°C, sunny")], "get_weather")] },
    ]);
    expect(normalizeMessages(FIXTURES.langchainGenerations)).toEqual([{ role: "assistant", parts: [txt("It is 18°C and sunny.")] }]);
  });

  it("OpenAI chat: developer as system, an image part with its size, JSON-text arguments parsed, the tool role", () => {
    const split = splitMessages(FIXTURES.openaiChatRequest);
    expect(split?.messages).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris, and what is in this photo?"), { type: "media", modality: "image", mime: "image/png", size: 70 }] },
      { role: "assistant", parts: [call("call_1")] },
      { role: "tool", parts: [result("call_1", [txt("18°C, sunny")])] },
    ]);
    expect(split?.rest).toEqual({ model: "gpt-4o", temperature: 0 });
    const response = splitMessages(FIXTURES.openaiChatResponse);
    expect(response?.messages).toEqual([{ role: "assistant", parts: [call("call_1")] }]);
    expect(response?.rest).toMatchObject({ id: "chatcmpl-1", model: "gpt-4o-2024-08-06" });
  });

  it("OpenAI Responses: instructions, input items, reasoning + function_call as one assistant turn, function_call_output", () => {
    expect(normalizeMessages(FIXTURES.openaiResponsesRequest)).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris?"), { type: "media", modality: "image", url: "https://example.com/paris.png" }] },
      { role: "assistant", parts: [{ type: "reasoning", text: "The weather tool answers this." }, call("call_1")] },
      { role: "tool", parts: [result("call_1", [txt("18°C, sunny")])] },
    ]);
    expect(normalizeMessages(FIXTURES.openaiResponsesResponse)).toEqual([
      { role: "assistant", parts: [{ type: "reasoning", text: "", redacted: true }, txt("It is 18°C and sunny.")] },
    ]);
  });

  it("Anthropic: system blocks, image, thinking, tool_use; a user turn of tool_results reads as the tool's", () => {
    expect(normalizeMessages(FIXTURES.anthropicRequest)).toEqual([
      sys,
      { role: "user", parts: [{ type: "media", modality: "image", mime: "image/jpeg", size: 13 }, txt("Weather in Paris?")] },
      { role: "assistant", parts: [{ type: "reasoning", text: "The weather tool answers this." }, { type: "tool_call", id: "toolu_1", name: "get_weather", arguments: CITY }] },
      { role: "tool", parts: [result("toolu_1", [txt("18°C, sunny")])] },
    ]);
    const response = splitMessages(FIXTURES.anthropicResponse);
    expect(response?.messages).toEqual([{ role: "assistant", parts: [txt("It is 18°C and sunny.")] }]);
    expect(response?.rest).toMatchObject({ id: "msg_1", stop_reason: "end_turn", usage: { input_tokens: 30, output_tokens: 9 } });
  });

  it("Gemini: systemInstruction, inlineData audio, functionCall, functionResponse; thoughts as reasoning", () => {
    expect(normalizeMessages(FIXTURES.geminiRequest)).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris?"), { type: "media", modality: "audio", mime: "audio/wav", size: 12 }] },
      { role: "assistant", parts: [call(undefined)] },
      { role: "tool", parts: [result(undefined, [{ type: "json", value: { temp_c: 18, sky: "sunny" } }], "get_weather")] },
    ]);
    const response = splitMessages(FIXTURES.geminiResponse);
    expect(response?.messages).toEqual([{ role: "assistant", parts: [{ type: "reasoning", text: "The tool said 18°C." }, txt("It is 18°C and sunny.")] }]);
    expect(response?.rest).toMatchObject({ modelVersion: "gemini-2.5-flash" });
  });

  it("OTel GenAI as stored from OTLP: JSON text, system_instructions, blob/uri/file parts, tool_call_response", () => {
    expect(normalizeMessages(FIXTURES.otelInput)).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris?"), { type: "media", modality: "image", mime: "image/png", size: 8 }] },
      { role: "assistant", parts: [{ type: "reasoning", text: "The weather tool answers this." }, call("call_1")] },
      { role: "tool", parts: [result("call_1", [txt("18°C, sunny")])] },
    ]);
    expect(normalizeMessages(FIXTURES.otelOutput)).toEqual([{
      role: "assistant",
      parts: [txt("It is 18°C and sunny."), { type: "media", modality: "image", mime: "image/png", url: "https://example.com/chart.png" }, { type: "media", modality: "file", mime: "application/pdf", name: "file-1" }],
    }]);
    // Only system instructions (no messages attribute), as otlp/mapping.ts stores them.
    expect(normalizeMessages(JSON.stringify({ system_instructions: "Be brief.", messages: null }))).toEqual([{ role: "system", parts: [txt("Be brief.")] }]);
  });

  it("GenAI events (Strands: Bedrock blocks as JSON text) and OpenInference's flattened messages", () => {
    expect(normalizeMessages(FIXTURES.strandsEvents)).toEqual([
      sys,
      { role: "user", parts: [txt("Weather in Paris?")] },
      { role: "assistant", parts: [{ type: "tool_call", id: "tooluse_1", name: "get_weather", arguments: CITY }] },
      { role: "tool", parts: [result("tooluse_1", [txt("18°C, sunny")])] },
    ]);
    expect(normalizeMessages('[{"text": "Sunny."}]')).toEqual([{ role: "assistant", parts: [txt("Sunny.")] }]);
    expect(normalizeMessages('[{"text": "Weather?"}]', { defaultRole: "user" })).toEqual([{ role: "user", parts: [txt("Weather?")] }]);
    expect(normalizeMessages(FIXTURES.openInferenceOutput)).toEqual([{ role: "assistant", parts: [call("call_1")] }]);
  });

  it("a value the server cut short (a preview ending in …) reads as the messages its complete part holds", () => {
    const cut = (text: string, n: number) => `${text.slice(0, n)}…`;
    // OTLP content as the preview plugin leaves it: JSON text inside JSON text, cut inside the inner one.
    const otel = FIXTURES.otelInput as string;
    const inner = otel.indexOf("Weather in Paris?");
    const split = splitMessages(cut(otel, inner + 7));
    expect(split?.cut).toBe(true);
    expect(split?.messages).toEqual([sys, { role: "user", parts: [txt("Weather")] }]);
    // A chat list cut in a string, in a key, after a colon: the complete messages, the open text closed.
    const chat = JSON.stringify([{ role: "user", content: "Weather in Paris?" }, { role: "assistant", content: "It is 18°C and sunny today." }]);
    expect(normalizeMessages(cut(chat, chat.indexOf("sunny")))).toEqual([{ role: "user", parts: [txt("Weather in Paris?")] }, { role: "assistant", parts: [txt("It is 18°C and ")] }]);
    expect(normalizeMessages(cut(chat, chat.indexOf("content", 40) + 3))).toEqual([{ role: "user", parts: [txt("Weather in Paris?")] }]);
    expect(normalizeMessages(cut(chat, chat.indexOf(":", 40) + 1))).toEqual([{ role: "user", parts: [txt("Weather in Paris?")] }]);
    // Whole JSON is not marked; text that only looks like JSON stays text.
    expect(splitMessages(chat)?.cut).toBeUndefined();
    for (const v of ["[INFO] started…", "{not json at all…", '[{"role": "us…']) expect(normalizeMessages(v), v).toBeNull();
  });

  it("every fixture reads as a conversation with a tool call or its result", () => {
    for (const [name, value] of Object.entries(FIXTURES)) {
      const shape = outline(normalizeMessages(value));
      expect(shape, name).toBeTruthy();
      expect(shape!.join(" | "), name).toMatch(/tool_call|tool_result|text/);
    }
  });

  it("values that are not messages: null, so they render as JSON or text", () => {
    for (const v of [null, undefined, "plain text", '{"a": 1}', "[1, 2]", 42, [1, 2], [], {}, { input: "what is 2+2?" }, { a: { role: 1 } }, [{ role: "user" }], [{ type: "text", text: "x" }, { foo: 1 }], "[{broken json"]) {
      expect(normalizeMessages(v), JSON.stringify(v)).toBeNull();
    }
  });
});
