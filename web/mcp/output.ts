/**
 * Bounded answers: a model reads every character a tool returns, and a client may hold the whole answer in memory.
 * Each string longer than MAX_STRING_CHARS is cut with a marker saying how much was left out; the answer as a whole
 * is cut at MAX_ANSWER_CHARS (lists page long before that: each tool's limit). Errors become tool errors whose text
 * is the message the HTTP API would answer (the field, the limit, the id not found), never a stack or an internal name.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "../../core/logger.js";
import { toHttpError } from "../http-errors.js";

export const MAX_STRING_CHARS = 2_000;
export const MAX_ANSWER_CHARS = 200_000;

/** `value` with every string longer than `max` characters cut, and a marker saying so. */
export function clipStrings(value: unknown, max = MAX_STRING_CHARS): unknown {
  if (typeof value === "string") return value.length > max ? `${value.slice(0, max)}…[cut: ${value.length - max} more characters]` : value;
  if (Array.isArray(value)) return value.map((v) => clipStrings(v, max));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = clipStrings(v, max);
    return out;
  }
  return value;
}

/** An answer as the JSON text of one text content. */
export function answer(value: unknown): CallToolResult {
  let text = JSON.stringify(value) ?? "null";
  if (text.length > MAX_ANSWER_CHARS) {
    text = `${text.slice(0, MAX_ANSWER_CHARS)}…[answer cut at ${MAX_ANSWER_CHARS} characters: ask for fewer items with a smaller limit]`;
  }
  return { content: [{ type: "text", text }] };
}

/** A refusal or failure as a tool error a model can act on; an unexpected one is logged and named only as such. */
export function toolError(err: unknown, tool: string, logger: Logger): CallToolResult {
  const e = toHttpError(err);
  if (e.status >= 500 && e.status !== 503) logger.error("mcp tool failed", { tool, err });
  const { message, field } = e.body.error as { message: string; field?: string };
  return { isError: true, content: [{ type: "text", text: field && !message.includes(field) ? `${field}: ${message}` : message }] };
}
