/**
 * A span's input and output from its log records (read-time: the span panel, web/runs/trace-reads.ts), for spans
 * whose content came as GenAI events sent as logs rather than as span attributes or span events: the
 * `gen_ai.client.inference.operation.details` event's gen_ai.input.messages / gen_ai.output.messages (with
 * gen_ai.system_instructions), else the message events (conventions.ts MESSAGE_EVENTS; the content in the body, or
 * in the attributes as span events carry it) as a list of {role, content}, and the `gen_ai.choice` events' messages.
 */
import type { LogLine } from "../stores/otel-logs.js";
import { CHOICE_EVENT, CONTENT_ATTRIBUTES, EVENT_CONTENT, MESSAGE_EVENTS } from "./conventions.js";

export const OPERATION_DETAILS_EVENT = "gen_ai.client.inference.operation.details";

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The first of `keys` in the body (when a map) or the attributes. */
function pick(line: LogLine, keys: readonly string[]): unknown {
  for (const k of keys) {
    if (isObj(line.body) && line.body[k] !== undefined) return line.body[k];
    if (line.attributes[k] !== undefined) return line.attributes[k];
  }
  return undefined;
}

/** JSON text of messages parsed (instrumentations send gen_ai.*.messages as JSON strings). */
function parsed(v: unknown): unknown {
  if (typeof v !== "string") return v;
  try {
    return JSON.parse(v) as unknown;
  } catch {
    return v;
  }
}

export function contentOfLogs(lines: readonly LogLine[]): { input?: unknown; output?: unknown } {
  const details = lines.find((l) => l.event_name === OPERATION_DETAILS_EVENT);
  if (details) {
    const input = pick(details, CONTENT_ATTRIBUTES.input.slice(0, 1));
    const system = pick(details, CONTENT_ATTRIBUTES.system);
    const output = pick(details, CONTENT_ATTRIBUTES.output.slice(0, 1));
    if (input !== undefined || output !== undefined || system !== undefined) {
      return {
        ...(input !== undefined || system !== undefined
          ? { input: system !== undefined ? { system_instructions: parsed(system), messages: parsed(input) ?? null } : parsed(input) }
          : {}),
        ...(output !== undefined ? { output: parsed(output) } : {}),
      };
    }
  }
  const messages: unknown[] = [];
  const choices: unknown[] = [];
  for (const line of lines) {
    const name = line.event_name ?? "";
    if (name === CHOICE_EVENT) {
      const message = pick(line, EVENT_CONTENT.choice);
      if (message !== undefined) choices.push(message);
      continue;
    }
    const role = MESSAGE_EVENTS[name];
    if (role === undefined) continue;
    const content = pick(line, EVENT_CONTENT.message) ?? (typeof line.body === "string" ? line.body : undefined);
    if (content !== undefined) messages.push({ role, content });
  }
  return {
    ...(messages.length ? { input: messages } : {}),
    ...(choices.length ? { output: choices.length === 1 ? choices[0] : choices } : {}),
  };
}
