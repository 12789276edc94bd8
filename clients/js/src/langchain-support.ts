/**
 * What the LangChain.js handler (langchain.ts) reads from LangChain's objects: LangGraph interrupts and resumes,
 * plain values for previews, a root run's own tags and metadata, the model and the token usage of a model call.
 * No @langchain/core import.
 */
import { preview } from "./json.js";

export const MAX_WAITING_THREADS = 10_000;
export const now = (): number => (typeof performance !== "undefined" && typeof performance.now === "function" ? performance.now() : Date.now());
export const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object";
export const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** LangGraph control-flow exceptions: they travel through callbacks as chain errors but are not failures. */
export const INTERRUPT_ERRORS = new Set(["GraphInterrupt", "NodeInterrupt"]);
export const CONTROL_FLOW_ERRORS = new Set(["GraphBubbleUp", "ParentCommand", ...INTERRUPT_ERRORS]);
export const errName = (err: unknown): string => (isObj(err) ? String((err as { name?: unknown }).name ?? (err as object).constructor?.name ?? "") : "");
export const isInterrupt = (err: unknown): boolean => INTERRUPT_ERRORS.has(errName(err)) || (isObj(err) && Array.isArray(err.interrupts));

// What LangChain and LangGraph add to a run's tags and metadata themselves (a node's step, LangSmith's flags, the
// thread and checkpoint, the integration and model names), and the handler's own keys: not the user's.
const INTERNAL_TAG = /^(?:seq|graph):step:\d+$|^langsmith:/;
const INTERNAL_KEYS = new Set(["thread_id", "checkpoint_ns", "checkpoint_id"]);
const INTERNAL_KEY = /^(?:langgraph_|ls_|lc_|runwatch_|__)/;

/** The tags a root run's config gave (`{ tags: [...] }`), without LangChain's own. */
export const runTags = (tags: readonly string[] | undefined): string[] => (tags ?? []).filter((t) => typeof t === "string" && !INTERNAL_TAG.test(t));

/** The metadata a root run's config gave (`{ metadata: {...} }`), without LangChain's and LangGraph's own keys (thread_id is the session already). */
export function runMetadata(metadata: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(metadata ?? {})) if (!INTERNAL_KEYS.has(k) && !INTERNAL_KEY.test(k)) out[k] = v;
  return out;
}

/** A prompt version a model call used: `{ name, version }`, as a Prompt from getPrompt is. */
export interface PromptRef { readonly name: string; readonly version: number | null }

/**
 * The prompt a model call used, given as `metadata: { runwatch_prompt: prompt }` in its config (a Prompt from
 * client.getPrompt); undefined when none is, or it is a fallback (no version).
 */
export function promptOf(metadata: Record<string, unknown> | undefined): PromptRef | undefined {
  const p = metadata?.runwatch_prompt as { name?: unknown; version?: unknown } | undefined;
  return isObj(p) && typeof p.name === "string" && typeof p.version === "number" && Number.isInteger(p.version) && p.version >= 1 ? { name: p.name, version: p.version } : undefined;
}

/** new Command({ resume }) as it reaches handleChainStart. */
export function resumeValue(inputs: unknown): { resume: unknown } | undefined {
  if (!isObj(inputs) || !("resume" in inputs)) return undefined;
  const isCommand = inputs.lg_name === "Command" || (inputs as object).constructor?.name === "Command";
  return isCommand && inputs.resume !== undefined ? { resume: inputs.resume } : undefined;
}

/** Messages become {type, content, tool_calls}; everything else is kept as plain JSON, depth-limited. */
export function simplify(value: unknown, depth = 0): unknown {
  if (!isObj(value)) return value;
  if (depth > 6) return preview(value, 200);
  const v = value as Record<string, unknown> & { getType?: () => string; _getType?: () => string };
  if (typeof v.getType === "function" || typeof v._getType === "function") {
    let type = "message";
    try {
      type = (v.getType ?? v._getType)!.call(v);
    } catch {
      /* keep default */
    }
    const out: Record<string, unknown> = { type, content: simplify(v.content, depth + 1) };
    if (Array.isArray(v.tool_calls) && v.tool_calls.length > 0) out.tool_calls = simplify(v.tool_calls, depth + 1);
    if (str(v.name)) out.name = v.name;
    return out;
  }
  if (v.lg_name === "Command") return { command: true, resume: simplify(v.resume, depth + 1), goto: simplify(v.goto, depth + 1) };
  if (Array.isArray(value)) return value.map((x) => simplify(x, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null && typeof v.toJSON === "function") {
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(value)) out[k] = simplify(x, depth + 1);
  return out;
}

/** The question and context of one interrupt() value. */
export function describeInterrupt(value: unknown): { question: string; context: Record<string, unknown>; channel?: string } {
  if (typeof value === "string") return { question: value, context: {} };
  if (isObj(value) && !Array.isArray(value)) {
    const question = str(value.question) ?? str(value.message) ?? str(value.prompt) ?? str(value.text);
    const { question: _q, channel, ...rest } = value;
    if (question !== undefined) return { question, context: simplify(rest) as Record<string, unknown>, channel: str(channel) };
    return { question: preview(value), context: simplify(value) as Record<string, unknown>, channel: str(channel) };
  }
  return { question: preview(value), context: {} };
}

export function modelFromStart(extraParams: Record<string, unknown> | undefined, metadata: Record<string, unknown> | undefined): string | undefined {
  const inv = isObj(extraParams?.invocation_params) ? extraParams.invocation_params : undefined;
  return str(inv?.model) ?? str(inv?.model_name) ?? str(inv?.modelName) ?? str(metadata?.ls_model_name);
}

/** Token usage of one model call: usage_metadata on the messages, else llmOutput.tokenUsage / usage. */
export function usageOf(output: unknown): { prompt: number; completion: number; total: number; cached: number; cacheWrite: number; reasoning: number; model?: string; found: boolean } {
  let prompt = 0;
  let completion = 0;
  let total = 0;
  let cached = 0;
  let cacheWrite = 0;
  let reasoning = 0;
  let found = false;
  let model: string | undefined;
  const gens = isObj(output) && Array.isArray(output.generations) ? output.generations : [];
  for (const list of gens) {
    for (const gen of Array.isArray(list) ? list : [list]) {
      const msg = isObj(gen) && isObj(gen.message) ? gen.message : undefined;
      const um = msg && isObj(msg.usage_metadata) ? msg.usage_metadata : undefined;
      if (um) {
        found = true;
        const p = num(um.input_tokens);
        const c = num(um.output_tokens);
        prompt += p;
        completion += c;
        total += num(um.total_tokens) || p + c;
        const inDetails = isObj(um.input_token_details) ? um.input_token_details : undefined;
        const outDetails = isObj(um.output_token_details) ? um.output_token_details : undefined;
        cached += num(inDetails?.cache_read);
        cacheWrite += num(inDetails?.cache_creation);
        reasoning += num(outDetails?.reasoning);
      }
      const rm = msg && isObj(msg.response_metadata) ? msg.response_metadata : undefined;
      model ??= str(rm?.model_name) ?? str(rm?.model);
    }
  }
  const llmOutput = isObj(output) && isObj(output.llmOutput) ? output.llmOutput : undefined;
  if (!found && llmOutput) {
    const tu = [llmOutput.tokenUsage, llmOutput.token_usage, llmOutput.usage, llmOutput.estimatedTokenUsage].find(isObj);
    if (tu) {
      found = true;
      prompt = num(tu.promptTokens) || num(tu.prompt_tokens) || num(tu.input_tokens);
      completion = num(tu.completionTokens) || num(tu.completion_tokens) || num(tu.output_tokens);
      total = num(tu.totalTokens) || num(tu.total_tokens) || prompt + completion;
    }
  }
  model ??= str(llmOutput?.model_name) ?? str(llmOutput?.model);
  return { prompt, completion, total, cached, cacheWrite, reasoning, model, found };
}

/** "outer/inner" for a node of a subgraph (from langgraph_checkpoint_ns, as the Python client names it), else the node. */
export function nodePath(metadata: Record<string, unknown> | undefined, node: string): string {
  const ns = metadata?.langgraph_checkpoint_ns;
  if (typeof ns === "string" && ns.includes("|")) {
    const parts = ns.split("|").filter(Boolean).map((p) => p.split(":")[0]!);
    if (parts.length > 0 && parts[parts.length - 1] === node) return parts.join("/");
  }
  return node;
}

/** A chat model's messages ([[BaseMessage]]) as role/content pairs; prompts as they are. */
export function messagesOf(input: unknown): unknown {
  if (!Array.isArray(input) || !Array.isArray(input[0])) return input;
  return (input as unknown[][]).flat().map((m) => {
    const o = isObj(m) ? m : {};
    const role = typeof o._getType === "function" ? String((o._getType as () => string).call(m)) : str(o.type) ?? str(o.role) ?? "message";
    return { role, content: o.content ?? String(m), ...toolFieldsOf(o) };
  });
}

/** A message's tool calls (an AI message) or the call it answers (a tool message), when it has them. */
function toolFieldsOf(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (Array.isArray(o.tool_calls) && o.tool_calls.length > 0) {
    out.tool_calls = o.tool_calls.map((c) => (isObj(c) ? { id: c.id, name: c.name, args: c.args } : c));
  }
  if (typeof o.tool_call_id === "string") out.tool_call_id = o.tool_call_id;
  if (typeof o.name === "string" && o.name) out.name = o.name;
  return out;
}

/**
 * What a model call's first generation says (the span's output): its text, or — when the model called tools — the
 * message with its tool calls, so the trace shows which tools it asked for.
 */
export function firstGenerationText(output: unknown): unknown {
  const gens = isObj(output) && Array.isArray(output.generations) ? output.generations : [];
  const first = Array.isArray(gens[0]) ? gens[0][0] : gens[0];
  if (!isObj(first)) return undefined;
  const msg = isObj(first.message) ? first.message : undefined;
  const tools = msg ? toolFieldsOf(msg) : {};
  if (msg && tools.tool_calls) return { role: "ai", content: msg.content ?? "", tool_calls: tools.tool_calls };
  return msg?.content ?? first.text;
}
