/**
 * An OpenAI-compatible server on loopback for the framework tests: Chat Completions and the Responses API, streamed
 * and not, speaking the real wire format, so each framework runs its own client code unchanged.
 *
 * Script: a request that offers tools and carries no tool result yet is answered with one call of its first tool
 * (arguments `{"city":"Paris"}`); otherwise with the text "It is sunny in Paris." — given as the argument of a
 * `final_answer` tool when one is offered (smolagents ends a run that way). A request whose text contains
 * FAIL_MARKER is answered HTTP 500. Every answer's usage is different and recorded (`usages`), with cached input
 * tokens on the first call of a conversation, so a test can compare what was stored with what was sent.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export const FAIL_MARKER = "please-fail-500";
export const ANSWER = "It is sunny in Paris.";
export const TOOL_ARGS = { city: "Paris" };

export interface Usage {
  readonly model: string;
  readonly api: "chat" | "responses";
  readonly input: number;
  readonly cached: number;
  readonly output: number;
  readonly reasoning: number;
}

export interface FakeOpenAI {
  /** The base URL clients take (ends in /v1). */
  readonly url: string;
  /** The usage of every answered call, in order. */
  readonly usages: Usage[];
  /** Requests answered 500. */
  failures: number;
  close(): Promise<void>;
}

type Json = Record<string, any>;

const FINAL_ANSWER = "final_answer";
const toolNameOf = (tool: Json): string | undefined => tool?.function?.name ?? tool?.name;
/** The tool the first turn calls: the first offered, but not final_answer. */
const workTool = (tools: readonly Json[]): string | undefined => tools.map(toolNameOf).find((n) => n !== FINAL_ANSWER);
const offersFinalAnswer = (tools: readonly Json[]): boolean => tools.some((t) => toolNameOf(t) === FINAL_ANSWER);

export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const usages: Usage[] = [];
  let calls = 0;
  const state = { failures: 0 };
  const usageFor = (model: string, api: Usage["api"], toolTurn: boolean): Usage => {
    calls++;
    // Distinct figures per call; the first turn (the tool call) has part of its prompt cached.
    const u = { model, api, input: 100 + calls * 7, cached: toolTurn ? 64 : 0, output: 10 + calls * 3, reasoning: 0 };
    usages.push(u);
    return u;
  };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}");
      } catch {
        return send(res, 400, { error: { message: "invalid JSON", type: "invalid_request_error" } });
      }
      const text = JSON.stringify(body);
      if (text.includes(FAIL_MARKER)) {
        state.failures++;
        // x-should-retry: false, which OpenAI's own clients honour, keeps each failing case to one request.
        return send(res, 500, { error: { message: "The server had an error while processing your request.", type: "server_error" } }, { "x-should-retry": "false" });
      }
      const path = (req.url ?? "").replace(/\?.*$/, "");
      if (req.method === "POST" && path.endsWith("/chat/completions")) return chat(body, res);
      if (req.method === "POST" && path.endsWith("/responses")) return responses(body, res);
      send(res, 404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } });
    });
  });

  function chat(body: Json, res: http.ServerResponse): void {
    const model = String(body.model ?? "gpt-4o-mini");
    const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
    const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
    const toolTurn = workTool(tools) !== undefined && !messages.some((m) => m.role === "tool" || /forecast/.test(JSON.stringify(m.content ?? "")));
    const u = usageFor(model, "chat", toolTurn);
    const usage = {
      prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output,
      prompt_tokens_details: { cached_tokens: u.cached }, completion_tokens_details: { reasoning_tokens: u.reasoning },
    };
    const id = `chatcmpl-${calls}`;
    const created = Math.floor(Date.now() / 1000);
    const called = toolTurn ? workTool(tools) : offersFinalAnswer(tools) ? FINAL_ANSWER : undefined;
    const args = called === FINAL_ANSWER ? { answer: ANSWER } : TOOL_ARGS;
    const toolCall = called ? { id: `call_${calls}`, type: "function", function: { name: called, arguments: JSON.stringify(args) } } : undefined;
    if (!body.stream) {
      const message = toolCall ? { role: "assistant", content: null, tool_calls: [toolCall] } : { role: "assistant", content: ANSWER };
      return send(res, 200, {
        id, object: "chat.completion", created, model,
        choices: [{ index: 0, message, finish_reason: toolCall ? "tool_calls" : "stop", logprobs: null }], usage,
      });
    }
    const chunk = (delta: Json, finish: string | null, extra: Json = {}) =>
      ({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }], ...extra });
    const events: Json[] = [chunk({ role: "assistant", content: "" }, null)];
    if (toolCall) events.push(chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null));
    else for (const word of ANSWER.split(/(?<= )/)) events.push(chunk({ content: word }, null));
    events.push(chunk({}, toolCall ? "tool_calls" : "stop"));
    if (body.stream_options?.include_usage) events.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage });
    sse(res, events.map((e) => ({ data: e })));
  }

  function responses(body: Json, res: http.ServerResponse): void {
    const model = String(body.model ?? "gpt-4o-mini");
    const tools: Json[] = Array.isArray(body.tools) ? body.tools : [];
    const input: Json[] = Array.isArray(body.input) ? body.input : [];
    const toolTurn = workTool(tools) !== undefined && !input.some((i) => i?.type === "function_call_output");
    const u = usageFor(model, "responses", toolTurn);
    const id = `resp_${calls}`;
    const output = toolTurn
      ? [{ type: "function_call", id: `fc_${calls}`, call_id: `call_${calls}`, name: workTool(tools), arguments: JSON.stringify(TOOL_ARGS), status: "completed" }]
      : [{ type: "message", id: `msg_${calls}`, role: "assistant", status: "completed", content: [{ type: "output_text", text: ANSWER, annotations: [] }] }];
    const response = {
      id, object: "response", created_at: Math.floor(Date.now() / 1000), status: "completed", model, output,
      parallel_tool_calls: true, tool_choice: "auto", tools, error: null, incomplete_details: null, instructions: body.instructions ?? null,
      usage: {
        input_tokens: u.input, input_tokens_details: { cached_tokens: u.cached },
        output_tokens: u.output, output_tokens_details: { reasoning_tokens: u.reasoning }, total_tokens: u.input + u.output,
      },
    };
    if (!body.stream) return send(res, 200, response);
    let seq = 0;
    const ev = (type: string, rest: Json) => ({ event: type, data: { type, sequence_number: seq++, ...rest } });
    const events = [ev("response.created", { response: { ...response, status: "in_progress", output: [], usage: null } })];
    output.forEach((item, output_index) => {
      events.push(ev("response.output_item.added", { output_index, item }));
      if (item.type === "message") events.push(ev("response.output_text.delta", { output_index, item_id: item.id, content_index: 0, delta: ANSWER }));
      events.push(ev("response.output_item.done", { output_index, item }));
    });
    events.push(ev("response.completed", { response }));
    sse(res, events);
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    usages,
    get failures() { return state.failures; },
    set failures(n: number) { state.failures = n; },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-request-id": `req_${Date.now()}`, ...headers });
  res.end(text);
}

function sse(res: http.ServerResponse, events: readonly { event?: string; data: unknown }[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`);
  res.end(events.some((e) => e.event) ? "" : "data: [DONE]\n\n");
}
