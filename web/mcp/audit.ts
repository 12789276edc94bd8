/**
 * Every tool call goes to the project's audit log (stores/accounts/projects.ts audit): who (the key's owner as the
 * actor, the key's id), which tool, when (the row's time), and whether it answered or was refused (with the
 * refusal's first words). Read off the request's JSON-RPC messages and the server's answer, so that a call refused
 * before its tool ran (arguments that do not fit the tool's schema, a tool that does not exist) is logged too. The
 * row is written after the answer and not awaited: a call does not wait for its audit.
 */
import { audit } from "../../stores/accounts/projects.js";
import type { WebDeps } from "../deps.js";
import type { KeyPrincipal } from "../middleware/api-key-auth.js";

export const AUDIT_ACTION = "mcp.tool_call";
const MAX_TOOL_NAME = 100;
const MAX_ERROR_CHARS = 300;

type Id = string | number;

interface Message {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: { readonly name?: unknown };
  readonly error?: { readonly message?: unknown };
  readonly result?: { readonly isError?: unknown; readonly content?: readonly { readonly text?: unknown }[] };
}

const messages = (body: unknown): Message[] =>
  (Array.isArray(body) ? body : [body]).filter((m): m is Message => typeof m === "object" && m !== null);

/** The tools/call requests of a request's body: each one's id and tool name. */
export function toolCallsOf(body: unknown): { id: Id; tool: string }[] {
  return messages(body).flatMap((m) =>
    m.method === "tools/call" && (typeof m.id === "string" || typeof m.id === "number")
      ? [{ id: m.id, tool: String(m.params?.name ?? "").slice(0, MAX_TOOL_NAME) }]
      : []);
}

/** Appends one row per call, its outcome read from the answer's text (undefined: the client went away first). */
export function auditToolCalls(deps: WebDeps, key: KeyPrincipal, calls: readonly { id: Id; tool: string }[], answerText: string | undefined): void {
  if (calls.length === 0) return;
  const outcomes = new Map<Id, { ok: boolean; error?: string }>();
  try {
    for (const m of answerText ? messages(JSON.parse(answerText)) : []) {
      if (typeof m.id !== "string" && typeof m.id !== "number") continue;
      const failed = m.error !== undefined || m.result?.isError === true;
      const text = m.error !== undefined ? m.error.message : m.result?.content?.[0]?.text;
      outcomes.set(m.id, failed ? { ok: false, error: String(text ?? "").slice(0, MAX_ERROR_CHARS) } : { ok: true });
    }
  } catch {
    // Not JSON (an HTTP-level refusal): every call counts as unanswered.
  }
  for (const call of calls) {
    const outcome = outcomes.get(call.id) ?? { ok: false, error: answerText === undefined ? "the client went away before the answer" : "no answer" };
    audit(deps.ports.sql, key.projectId, key.userId, AUDIT_ACTION, call.tool, { key_id: key.keyId, ...outcome })
      .catch((err: unknown) => deps.logger.warn("could not audit an MCP tool call", { tool: call.tool, err }));
  }
}
