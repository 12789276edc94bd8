// Every chat format a span's input or output arrives in → one message model, so the trace renders them all the same
// way (messages.js; docs/DASHBOARD.md, "Messages"):
//   [{ role: "system" | "user" | "assistant" | "tool" | <another role as sent>, name?, parts: Part[] }]
// Part shapes: message-parts.js. Read here: the Runwatch SDKs' LangChain messages ({role: "human", content},
// {type: "ai", content, tool_calls}, LangChain's serialised {lc: 1, type: "constructor", id: […, "HumanMessage"]},
// generations [[…]]), OpenAI chat (messages, choices, tool_calls, the tool role, content parts) and Responses (input
// and output items), Anthropic (content blocks), Gemini (contents[].parts, candidates) and the OpenTelemetry GenAI
// messages as Runwatch stores them (gen_ai.input.messages / output.messages as JSON text, with
// gen_ai.system_instructions: {system_instructions, messages}). Pure functions of JSON values; no DOM.
import { isContentBlock, isObj, joinedText, parseJsonPrefix, parseJsonText, partsOf, reasoning, str, text, toolCall, toolCallParts, toolResult } from "./message-parts.js";

const ROLES = {
  human: "user", user: "user", ai: "assistant", assistant: "assistant", model: "assistant", bot: "assistant", system: "system",
  developer: "system", tool: "tool", function: "tool", ipython: "tool",
};
const normRole = (r) => (typeof r === "string" ? ROLES[r.toLowerCase()] ?? r.toLowerCase() : "assistant");

/** LangChain's message `type`s ({type: "ai", content}), as the Python SDK and LangGraph state send them. */
const LC_TYPES = new Set(["human", "ai", "system", "tool", "function", "chat", "generic", "developer", "remove", "AIMessageChunk", "HumanMessageChunk"]);
const LC_CLASS = /^(Human|AI|System|Tool|Function|Chat|Remove)Message(Chunk)?$/;
const LC_CLASS_ROLES = { Human: "user", AI: "assistant", System: "system", Tool: "tool", Function: "tool" };

/** The Responses API's item types (input and output). */
const RESPONSE_ITEMS = new Set([
  "message", "function_call", "function_call_output", "reasoning", "custom_tool_call", "custom_tool_call_output", "web_search_call",
  "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call", "image_generation_call", "local_shell_call",
  "local_shell_call_output", "mcp_call", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "item_reference",
]);

const isLcConstructor = (v) => isObj(v) && v.lc === 1 && v.type === "constructor" && Array.isArray(v.id) && LC_CLASS.test(String(v.id[v.id.length - 1])) && isObj(v.kwargs);
const isGeneration = (v) => isObj(v) && typeof v.text === "string" && (isObj(v.message) || "generation_info" in v || v.type === "Generation" || v.type === "ChatGeneration");

/**
 * A message sent flattened, one field per key ({role, "tool_calls.0.tool_call.function.name": …}: OpenInference's
 * llm.output_messages as Runwatch stores them) → the nested message; any other value as it is.
 */
function unflattened(v) {
  if (!isObj(v) || typeof v.role !== "string" || !Object.keys(v).some((k) => /^[a-z_]+\.\d+\./.test(k))) return v;
  const out = {};
  for (const [key, value] of Object.entries(v)) {
    const path = key.split(".");
    let at = out;
    path.forEach((seg, i) => {
      if (i === path.length - 1) at[seg] = value;
      else at = at[seg] = isObj(at[seg]) || Array.isArray(at[seg]) ? at[seg] : /^\d+$/.test(path[i + 1]) ? [] : {};
    });
  }
  // OpenInference's content list: contents.N.message_content.{type, text, image.image.url}
  if (Array.isArray(out.contents) && out.content === undefined) out.content = out.contents.map((c) => c?.message_content ?? c);
  return out;
}

/** Whether one item of a list is a message of some format. */
export function isMessageItem(value) {
  const v = unflattened(value);
  if (!isObj(v)) return false;
  if (isLcConstructor(v) || isGeneration(v)) return true;
  if (typeof v.role === "string") return "content" in v || Array.isArray(v.parts) || Array.isArray(v.tool_calls) || isObj(v.function_call);
  if (typeof v.type === "string") return (LC_TYPES.has(v.type) && "content" in v) || RESPONSE_ITEMS.has(v.type);
  return false;
}

/** A role-based message (OpenAI chat, Anthropic, Gemini content, OTel GenAI, LangChain role/content pairs). */
function roleMessage(m, roleHint) {
  const role = normRole(roleHint ?? m.role);
  let parts = Array.isArray(m.parts) ? partsOf(m.parts) : partsOf(m.content);
  const think = str(m.reasoning_content) ?? str(m.reasoning) ?? str(m.thinking);
  if (think) parts.unshift(reasoning(think));
  if (str(m.refusal)) parts.push(text(m.refusal, { refusal: true }));
  parts.push(...toolCallParts(m.tool_calls));
  if (isObj(m.function_call)) parts.push(toolCall(undefined, m.function_call.name, m.function_call.arguments));
  if (isObj(m.audio) && str(m.audio.transcript)) parts.push(text(m.audio.transcript));
  const callId = str(m.tool_call_id);
  if (role === "tool" && !parts.every((p) => p.type === "tool_result")) parts = [toolResult(callId, m.name, m.content ?? m.parts)];
  else if (role === "user" && parts.length > 0 && parts.every((p) => p.type === "tool_result")) return { role: "tool", parts };
  return withName({ role, parts }, role === "tool" ? undefined : m.name);
}

const withName = (msg, name) => (str(name) ? { role: msg.role, name, parts: msg.parts } : msg);

/** LangChain's serialised message ({lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs}). */
function lcMessage(v) {
  const cls = LC_CLASS.exec(String(v.id[v.id.length - 1]));
  const kw = v.kwargs;
  const extra = isObj(kw.additional_kwargs) ? kw.additional_kwargs : {};
  const role = LC_CLASS_ROLES[cls[1]] ?? kw.role ?? "assistant";
  return roleMessage({
    ...kw, role, reasoning_content: extra.reasoning_content,
    tool_calls: Array.isArray(kw.tool_calls) && kw.tool_calls.length > 0 ? kw.tool_calls : extra.tool_calls,
    function_call: extra.function_call,
  });
}

/** A Responses API item → a message (assistant items are merged with their neighbours later). */
function responseItem(v) {
  switch (v.type) {
    case "message":
      return roleMessage(v);
    case "function_call":
      return { role: "assistant", parts: [toolCall(v.call_id ?? v.id, v.name, v.arguments)], merge: true };
    case "custom_tool_call":
      return { role: "assistant", parts: [toolCall(v.call_id ?? v.id, v.name, v.input)], merge: true };
    case "reasoning": {
      const t = joinedText(v.summary) || joinedText(v.content);
      return { role: "assistant", parts: [reasoning(t ?? "", !t)], merge: true };
    }
    case "function_call_output": case "custom_tool_call_output": case "computer_call_output": case "local_shell_call_output":
      return { role: "tool", parts: [toolResult(v.call_id, undefined, v.output)] };
    case "mcp_call": {
      const call = { role: "assistant", parts: [toolCall(v.id, v.name, v.arguments)], merge: true };
      if (v.output === undefined && v.error === undefined) return call;
      return [call, { role: "tool", parts: [toolResult(v.id, v.name, v.output ?? v.error, v.error !== undefined && v.error !== null)] }];
    }
    case "item_reference":
      return { role: "assistant", parts: [{ type: "json", value: v }] };
    default: { // a built-in tool's call: web_search_call, file_search_call, computer_call, code_interpreter_call, …
      const { type, id, status, ...rest } = v;
      return { role: "assistant", parts: [toolCall(v.call_id ?? id, type.replace(/_call$/, ""), v.action ?? v.arguments ?? rest)], merge: true };
    }
  }
}

/** One item of a list → its message(s). */
function itemMessages(value) {
  const v = unflattened(value);
  if (isLcConstructor(v)) return [lcMessage(v)];
  if (isGeneration(v)) return isObj(v.message) && isMessageItem(v.message) ? itemMessages(v.message) : [{ role: "assistant", parts: partsOf(v.text) }];
  if (typeof v.role === "string" && !(v.type === "message")) return [roleMessage(v)];
  if (typeof v.type === "string" && LC_TYPES.has(v.type) && "content" in v) {
    const role = v.type === "chat" || v.type === "generic" ? v.role : v.type.replace(/MessageChunk$/, "").toLowerCase();
    return [roleMessage(v, role === "aimessagechunk" ? "ai" : role)];
  }
  const r = responseItem(v);
  return Array.isArray(r) ? r : [r];
}

/** Consecutive assistant items of the Responses API (reasoning, text, function calls) read as one turn. */
function merged(list) {
  const out = [];
  for (const m of list) {
    const prev = out[out.length - 1];
    if (prev && prev.role === "assistant" && m.role === "assistant" && (m.merge || prev.merge) && !m.name && !prev.name) {
      out[out.length - 1] = { role: "assistant", parts: [...prev.parts, ...m.parts], merge: true };
    } else out.push(m);
  }
  return out.map(({ merge, ...m }) => m);
}

/**
 * A list of messages, or null when any item is not one. Lists of lists (LangChain's batches, generations) are flattened
 * once. In a value cut short, the last item may be a message's beginning without its content: it is left out.
 */
function listMessages(list, defaultRole, cut = false) {
  let flat = list.length > 0 && list.every(Array.isArray) ? list.flat() : list;
  if (cut && flat.length > 1 && !isMessageItem(flat[flat.length - 1]) && !isContentBlock(flat[flat.length - 1])) flat = flat.slice(0, -1);
  if (flat.length === 0) return null;
  if (flat.every(isMessageItem)) return merged(flat.flatMap(itemMessages));
  if (flat.every(isContentBlock)) return [{ role: defaultRole, parts: partsOf(flat) }];
  return null;
}

/** JSON text → its value; text cut short → what its complete part holds, noted in `state.cut`. */
function jsonOf(text, state) {
  const whole = parseJsonText(text);
  if (whole !== undefined) return whole;
  const part = parseJsonPrefix(text);
  if (part !== undefined) state.cut = true;
  return part;
}

/** A value that is messages, or JSON text of them (how OTLP attributes are stored, cut to a preview's length). */
function messagesIn(v, defaultRole, state) {
  const value = typeof v === "string" ? jsonOf(v, state) ?? v : v;
  if (Array.isArray(value)) return listMessages(value, defaultRole, state.cut);
  if (isObj(value) && isMessageItem(value)) return merged(itemMessages(value));
  return null;
}

/** System instructions in any shape: text, blocks, Gemini content ({parts}), OTel parts (as JSON text or not). */
function systemMessage(v, state) {
  if (v === undefined || v === null || v === "") return [];
  const value = typeof v === "string" ? jsonOf(v, state) ?? v : v;
  const parts = isObj(value) && Array.isArray(value.parts) ? partsOf(value.parts) : partsOf(value);
  return parts.length ? [{ role: "system", parts }] : [];
}

/** The fields a single message's parts are read from (splitMessages leaves them out of `rest`). */
const MESSAGE_KEYS = ["role", "content", "parts", "tool_calls", "tool_call_id", "name", "type", "function_call", "reasoning_content", "reasoning", "refusal", "audio", "thinking"];

const without = (obj, keys) => {
  const rest = {};
  for (const [k, v] of Object.entries(obj)) if (!keys.includes(k)) rest[k] = v;
  return Object.keys(rest).length ? rest : undefined;
};

/** An object that holds messages under a provider's key: request and response bodies, LangGraph state, OTLP content. */
function wrapped(o, defaultRole, state) {
  if (Array.isArray(o.choices) && o.choices.length > 0 && o.choices.every((c) => isObj(c) && (isObj(c.message) || isObj(c.delta) || typeof c.text === "string"))) {
    const messages = o.choices.flatMap((c) => (isObj(c.message) || isObj(c.delta) ? itemMessages({ role: "assistant", ...(c.message ?? c.delta) }) : [{ role: "assistant", parts: partsOf(c.text) }]));
    return { messages, rest: without(o, ["choices"]) };
  }
  if (Array.isArray(o.candidates) && o.candidates.length > 0 && o.candidates.every((c) => isObj(c) && isObj(c.content))) {
    return { messages: o.candidates.map((c) => roleMessage({ role: c.content.role ?? "model", parts: c.content.parts ?? [] })), rest: without(o, ["candidates"]) };
  }
  if (Array.isArray(o.generations)) {
    const messages = listMessages(o.generations, "assistant");
    if (messages) return { messages, rest: without(o, ["generations"]) };
  }
  const gemSystem = o.systemInstruction ?? o.system_instruction ?? (isObj(o.config) ? o.config.systemInstruction ?? o.config.system_instruction : undefined);
  if (o.contents !== undefined && (Array.isArray(o.contents) || typeof o.contents === "string")) {
    const contents = typeof o.contents === "string" ? [{ role: "user", parts: [{ text: o.contents }] }] : o.contents;
    const messages = listMessages(contents.map((c) => (isObj(c) && Array.isArray(c.parts) && !c.role ? { role: "user", ...c } : c)), "user");
    if (messages) return { messages: [...systemMessage(gemSystem, state), ...messages], rest: without(o, ["contents", "systemInstruction", "system_instruction"]) };
  }
  if (Array.isArray(o.output) && o.output.length > 0 && o.output.every((i) => isObj(i) && RESPONSE_ITEMS.has(i.type))) {
    return { messages: merged(o.output.flatMap(itemMessages)), rest: without(o, ["output"]) };
  }
  if (o.input !== undefined && (typeof o.instructions === "string" || typeof o.model === "string" || Array.isArray(o.input))) {
    const input = typeof o.input === "string" ? [{ role: "user", parts: [text(o.input)] }] : messagesIn(o.input, "user", state);
    if (input) return { messages: [...systemMessage(o.instructions, state), ...input], rest: without(o, ["input", "instructions"]) };
  }
  if ("system_instructions" in o || "messages" in o) {
    const messages = o.messages === null || o.messages === undefined ? [] : messagesIn(o.messages, defaultRole, state);
    const system = systemMessage(o.system_instructions ?? o.system, state);
    if (messages && (messages.length > 0 || system.length > 0)) return { messages: [...system, ...messages], rest: without(o, ["messages", "system", "system_instructions"]) };
  }
  return null;
}

/**
 * The messages a value holds and what else it holds (`rest`: the other fields of a request or response body), or
 * null when it holds none. `defaultRole` is the role of a role-less list of content blocks (an output: "assistant").
 * JSON text is read as the value it encodes; text the server cut short (a preview) as what its complete part holds,
 * with `cut: true`.
 */
export function splitMessages(value, { defaultRole = "assistant" } = {}) {
  const state = { cut: false };
  const v = typeof value === "string" ? jsonOf(value, state) : value;
  const found = split(v, defaultRole, state);
  return found && state.cut ? { ...found, cut: true } : found;
}

function split(v, defaultRole, state) {
  if (v === undefined || v === null) return null;
  if (Array.isArray(v)) {
    const messages = listMessages(v, defaultRole, state.cut);
    return messages ? { messages } : null;
  }
  if (!isObj(v)) return null;
  if (isMessageItem(v)) {
    const messages = merged(itemMessages(v));
    // A single message's other fields (an Anthropic response's id, model, stop_reason and usage) are shown beside it.
    const plain = typeof v.role === "string" || LC_TYPES.has(v.type);
    return { messages, rest: plain ? without(v, MESSAGE_KEYS) : undefined };
  }
  return wrapped(v, defaultRole, state);
}

/** The messages a value holds, in the one model; null when it is not messages. */
export function normalizeMessages(value, options) {
  return splitMessages(value, options)?.messages ?? null;
}
