/**
 * A run's input and output as text: the previews the runs table shows (RunRecord input_preview, output_preview) and
 * the text free-text search reads (agent_events.search_text, pipeline/search-text.ts).
 *
 * A string stays itself; a chat (a list of messages, or an object with `messages`, in the shapes OpenAI, Anthropic,
 * LangChain and OpenTelemetry's GenAI conventions send; also such a list sent as JSON text) is, for an input, its last
 * user message's content and, for an output, its last assistant message's, when it has one; anything else is compact
 * JSON.
 */

import type { PipelineEvent } from "./schema.js";

/** Characters of a run's input and output preview (a cut preview ends with "…", within the count). */
export const RUN_PREVIEW_CHARS = 300;
/** Characters of each text kept for search. */
export const RUN_TEXT_CHARS = 4096;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** `s` cut to `max` characters, never splitting a surrogate pair; with `ellipsis`, a cut text ends with "…". */
export function cutText(s: string, max: number, ellipsis = false): string {
  if (s.length <= max) return s;
  let end = ellipsis ? max - 1 : max;
  const c = s.charCodeAt(end - 1);
  if (c >= 0xd800 && c <= 0xdbff) end--;
  return ellipsis ? `${s.slice(0, end)}…` : s.slice(0, end);
}

/** A message's content as text: a string, or the text parts of a list of parts. */
function contentText(c: unknown): string | undefined {
  if (typeof c === "string") return c;
  if (!Array.isArray(c)) return undefined;
  const parts: string[] = [];
  for (const p of c) {
    if (typeof p === "string") parts.push(p);
    else if (isObj(p) && typeof p.text === "string") parts.push(p.text);
    else if (isObj(p) && typeof p.content === "string") parts.push(p.content);
  }
  return parts.length > 0 ? parts.join(" ") : undefined;
}

/** Whose message speaks for an input (the user's question) and for an output (the answer). */
const ROLES = {
  input: new Set(["user", "human", "HumanMessage", "HumanMessageChunk"]),
  output: new Set(["assistant", "ai", "AIMessage", "AIMessageChunk"]),
} as const;
export type TextSide = keyof typeof ROLES;

/** The role of a message: `role`, a LangChain serialised message's class, or its `type` ("human"). */
function roleOf(m: Obj): unknown {
  if (typeof m.role === "string") return m.role;
  if (Array.isArray(m.id) && m.id.length > 0) return m.id[m.id.length - 1];
  return m.type;
}

/** The content of a chat's last message from the user (input) or the assistant (output); undefined when none. */
export function lastMessage(v: unknown, side: TextSide): string | undefined {
  const roles: ReadonlySet<unknown> = ROLES[side];
  let list = isObj(v) && Array.isArray(v.messages) ? v.messages : v;
  // LangChain's chat model start: a list of message lists, one per prompt.
  if (Array.isArray(list) && Array.isArray(list[list.length - 1])) list = list[list.length - 1];
  if (!Array.isArray(list)) return undefined;
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (!isObj(m) || !roles.has(roleOf(m))) continue;
    const text = contentText(m.content ?? (isObj(m.kwargs) ? m.kwargs.content : undefined) ?? (isObj(m.data) ? m.data.content : undefined));
    if (text !== undefined) return text;
  }
  return undefined;
}

/** JSON text that may hold a chat ("[{"role":…}]"), parsed; undefined when it is not JSON. */
function parsedJson(s: string): unknown {
  const c = s.charCodeAt(0);
  if (c !== 0x5b && c !== 0x7b) return undefined; // [ {
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
}

/** The value as text (see the file's comment); "" for none. */
export function valueText(v: unknown, side: TextSide): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return lastMessage(parsedJson(v), side) ?? v;
  return lastMessage(v, side) ?? safeJson(v);
}

/** A run's input or output preview. */
export const previewText = (v: unknown, side: TextSide): string => cutText(valueText(v, side), RUN_PREVIEW_CHARS, true);

/**
 * What search keeps of a value: for a chat its last user (assistant) message first (a long system prompt would otherwise fill the
 * text), then the whole value as text (a string as it is, anything else as JSON); lower-cased, at most RUN_TEXT_CHARS.
 */
export function searchText(v: unknown, side: TextSide): string {
  if (v === undefined || v === null) return "";
  const whole = typeof v === "string" ? v : safeJson(v);
  const chat = lastMessage(typeof v === "string" ? parsedJson(v) : v, side);
  return cutText(chat !== undefined && chat !== whole ? `${chat}\n${whole}` : whole, RUN_TEXT_CHARS).toLowerCase();
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? "";
  } catch {
    return "";
  }
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * The text an event gives its run for free-text search, lower-cased and cut; "" for none: a run_start's input, a
 * run_end's output, an error's type and message, a step's node_name, a tool call's tool_name.
 */
export function eventSearchText(e: Pick<PipelineEvent, "event_type" | "payload">): string {
  const p = e.payload;
  if (typeof p !== "object" || p === null) return "";
  switch (e.event_type) {
    case "run_start":
      return searchText(p.input, "input");
    case "run_end":
      return searchText(p.output, "output");
    case "error":
      return cutText([str(p.error_type), str(p.error_message)].filter(Boolean).join(": "), RUN_TEXT_CHARS).toLowerCase();
    case "step":
      return cutText(str(p.node_name), RUN_TEXT_CHARS).toLowerCase();
    case "tool_call":
      return cutText(str(p.tool_name), RUN_TEXT_CHARS).toLowerCase();
    default:
      return "";
  }
}
