/**
 * One loopback HTTP server that speaks the three providers' wire formats, as documented:
 * - OpenAI Chat Completions: POST /v1/chat/completions, Authorization: Bearer, {model, messages[], temperature?,
 *   response_format:{type:"json_schema", json_schema:{name, strict, schema}}} → chat.completion with usage
 *   {prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details, completion_tokens_details}.
 * - Anthropic Messages: POST /v1/messages, x-api-key, anthropic-version, {model, max_tokens, system?, messages[],
 *   tools[{name, description, input_schema}], tool_choice{type:"tool", name}} → message with a tool_use content
 *   block and usage {input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens}.
 * - Gemini generateContent: POST /v1beta/models/{model}:generateContent, x-goog-api-key,
 *   {contents[{role, parts[{text}]}], systemInstruction?, generationConfig{responseMimeType, responseSchema}} →
 *   {candidates[{content{parts[{text}], role:"model"}, finishReason}], usageMetadata{promptTokenCount,
 *   candidatesTokenCount, totalTokenCount, thoughtsTokenCount?}, modelVersion}.
 * A request that breaks the documented contract gets the provider's own 400 error shape, so a client bug fails
 * the test instead of passing silently. Behaviour per call is scripted (429s, 5xx, delays, malformed answers).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type FakeProvider = "openai" | "anthropic" | "gemini";

export interface Recorded {
  readonly provider: FakeProvider;
  readonly path: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: any;
}

/** One scripted reply. Default ("ok"): a valid improvement of the submitted code. */
export type Step =
  | { kind: "ok" }
  | { kind: "status"; status: number; headers?: Record<string, string> }
  | { kind: "delay"; ms: number }
  | { kind: "answer"; answer: unknown }
  | { kind: "text"; text: string }
  | { kind: "raw"; status: number; body: unknown };

export const PRICED_USAGE = { prompt: 1200, completion: 300, thoughts: 50 };

/** The fake "model": flags `== None` comparisons and rewrites them, a real (tiny) improvement. */
export function fakeImprovement(code: string) {
  const improved = code.replace(/ == None/g, " is None").replace(/ != None/g, " is not None");
  const suggestions =
    improved === code
      ? []
      : [{ title: "Compare with None using `is`", explanation: "`== None` calls __eq__, which objects may override; `is None` is the identity check PEP 8 asks for.", severity: "low" }];
  return { suggestions, improved_code: improved };
}

const codeFromPrompt = (prompt: string) => /<code>\n([\s\S]*)\n<\/code>/.exec(prompt)?.[1] ?? "";

function errorBody(provider: FakeProvider, status: number, message: string) {
  if (provider === "anthropic") {
    const type = status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : status === 401 ? "authentication_error" : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }
  if (provider === "gemini") {
    const st = status === 429 ? "RESOURCE_EXHAUSTED" : status >= 500 ? "UNAVAILABLE" : status === 401 ? "UNAUTHENTICATED" : "INVALID_ARGUMENT";
    return { error: { code: status, message, status: st } };
  }
  const type = status === 429 ? "requests" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: status === 429 ? "rate_limit_exceeded" : status === 401 ? "invalid_api_key" : null } };
}

/** Contract checks from the providers' API references; returns the first violation. */
function violation(provider: FakeProvider, path: string, h: http.IncomingHttpHeaders, b: any, keys: Record<FakeProvider, string | undefined>): string | undefined {
  if (!String(h["content-type"]).startsWith("application/json")) return "content-type must be application/json";
  if (provider === "openai") {
    if (keys.openai && h.authorization !== `Bearer ${keys.openai}`) return "401";
    if (typeof b?.model !== "string") return "model: required string";
    if (!Array.isArray(b.messages) || !b.messages.every((m: any) => ["system", "developer", "user", "assistant"].includes(m.role) && typeof m.content === "string")) return "messages: invalid";
    const rf = b.response_format;
    if (rf === undefined) return undefined; // a plain chat completion (the playground)
    if (rf?.type !== "json_schema" || typeof rf.json_schema?.name !== "string" || rf.json_schema.schema?.type !== "object") return "response_format: invalid json_schema";
    if (rf.json_schema.strict && rf.json_schema.schema.additionalProperties !== false) return "strict schemas need additionalProperties: false";
    if (b.temperature !== undefined && (typeof b.temperature !== "number" || b.temperature < 0 || b.temperature > 2)) return "temperature: 0..2";
  } else if (provider === "anthropic") {
    if (path !== "/v1/messages") return `unknown path ${path}`;
    if (h["x-api-key"] !== keys.anthropic) return "401";
    if (!h["anthropic-version"]) return "anthropic-version: header is required";
    if (typeof b?.model !== "string" || !Number.isInteger(b.max_tokens) || b.max_tokens < 1) return "model and max_tokens are required";
    if (!Array.isArray(b.messages) || b.messages[0]?.role !== "user") return "messages: first message must use the user role";
    if (b.messages.some((m: any) => m.role === "system")) return "messages: system goes in the top-level system parameter";
    if (b.temperature !== undefined && (b.temperature < 0 || b.temperature > 1)) return "temperature: 0..1";
    if (b.system !== undefined && typeof b.system !== "string" && !Array.isArray(b.system)) return "system: must be a string or text blocks";
    if (b.messages.some((m: any, i: number) => m.role !== (i % 2 === 0 ? "user" : "assistant"))) return "messages: roles must alternate user, assistant";
    if (b.tools === undefined) return undefined; // a plain message (the playground)
    const tool = b.tools?.[0];
    if (!tool || typeof tool.name !== "string" || tool.input_schema?.type !== "object") return "tools.0.input_schema: invalid";
    if (b.tool_choice && !(b.tool_choice.type === "tool" && b.tools.some((t: any) => t.name === b.tool_choice.name)) && !["auto", "any", "none"].includes(b.tool_choice.type)) return "tool_choice: invalid";
  } else {
    if (!/^\/v1beta\/models\/[\w.-]+:generateContent$/.test(path)) return `unknown path ${path}`;
    if (h["x-goog-api-key"] !== keys.gemini) return "401";
    if (!Array.isArray(b?.contents) || !b.contents.every((c: any) => Array.isArray(c.parts) && c.parts.every((p: any) => typeof p.text === "string"))) return "contents: invalid";
    const gc = b.generationConfig ?? {};
    if (gc.responseSchema && gc.responseMimeType !== "application/json") return "responseSchema requires responseMimeType application/json";
    const types = new Set(["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"]);
    const check = (s: any): boolean => types.has(s?.type) && !("additionalProperties" in s) && (!s.properties || Object.values(s.properties).every(check)) && (!s.items || check(s.items));
    if (gc.responseSchema && !check(gc.responseSchema)) return "generationConfig.responseSchema: invalid Schema";
  }
  return undefined;
}

/** What the fake judge answers a judge request (one that asks for a "verdict"): its prompt in, the answer's JSON out (or a promise of it: a slow judge). */
export type JudgeAnswer = (prompt: string) => unknown;

/** A judge request asks for the verdict schema (evaluation/judging/evaluate.ts): by name, or Gemini's by its properties. */
const isJudgeRequest = (provider: FakeProvider, b: any): boolean =>
  provider === "openai" ? b?.response_format?.json_schema?.name === "verdict"
  : provider === "anthropic" ? b?.tools?.[0]?.name === "verdict"
  : Boolean(b?.generationConfig?.responseSchema?.properties?.score);

/** What the fake answers a plain chat completion (no answer schema asked): the request's body in, the text out. */
export type ChatAnswer = (provider: FakeProvider, body: any) => string | Promise<string>;

/** A plain chat request asks for no structured answer (agents-service/complete.ts). */
const isChatRequest = (provider: FakeProvider, b: any): boolean =>
  provider === "openai" ? b?.response_format === undefined : provider === "anthropic" ? b?.tools === undefined : !b?.generationConfig?.responseSchema;

export interface FakeProviders {
  readonly url: string;
  readonly requests: Recorded[];
  /** How the fake chats (default: "answer to: " and the last message). */
  chat: ChatAnswer;
  /** How the fake judges (default: score 1, "looks right"). */
  judge: JudgeAnswer;
  /** Queue replies for the next calls of one provider (then "ok" again). */
  script(provider: FakeProvider, ...steps: Step[]): void;
  close(): Promise<void>;
}

export async function startFakeProviders(keys: Record<FakeProvider, string | undefined>): Promise<FakeProviders> {
  const requests: Recorded[] = [];
  const scripts: Record<FakeProvider, Step[]> = { openai: [], anthropic: [], gemini: [] };

  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const provider: FakeProvider = path.startsWith("/openai/") ? "openai" : path.startsWith("/gemini/") ? "gemini" : "anthropic";
    const subPath = path.replace(/^\/(openai|gemini|anthropic)/, "");
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = undefined;
    }
    requests.push({ provider, path: subPath, headers: req.headers, body });
    const reply = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      if (res.destroyed) return;
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(json));
    };

    const v = violation(provider, subPath === "/v1/chat/completions" || provider !== "openai" ? subPath : "bad", req.headers, body, keys);
    if (provider === "openai" && subPath !== "/v1/chat/completions") return reply(404, errorBody(provider, 404, `unknown path ${subPath}`));
    if (v === "401") return reply(401, errorBody(provider, 401, "invalid x-api-key / API key"));
    if (v) return reply(400, errorBody(provider, 400, v));

    let step = scripts[provider].shift() ?? { kind: "ok" };
    while (step.kind === "delay") {
      await new Promise((r) => setTimeout(r, (step as { ms: number }).ms));
      step = scripts[provider].shift() ?? { kind: "ok" };
    }
    if (step.kind === "status") return reply(step.status, errorBody(provider, step.status, `scripted ${step.status}`), step.headers);
    if (step.kind === "raw") return reply(step.status, step.body);

    const prompt: string =
      provider === "gemini" ? body.contents.at(-1).parts.map((p: any) => p.text).join("") : provider === "anthropic" ? body.messages.at(-1).content : body.messages.at(-1).content;
    const chat = isChatRequest(provider, body);
    const answer = chat ? undefined : step.kind === "answer" ? step.answer : isJudgeRequest(provider, body) ? await fakes.judge(prompt) : fakeImprovement(codeFromPrompt(prompt));
    const text = step.kind === "text" ? step.text : chat ? await fakes.chat(provider, body) : JSON.stringify(answer);
    const { prompt: pt, completion: ct, thoughts } = PRICED_USAGE;

    if (provider === "openai") {
      return reply(200, {
        id: "chatcmpl-fake1", object: "chat.completion", created: Math.floor(Date.now() / 1000), model: body.model,
        choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null, annotations: [] }, logprobs: null, finish_reason: "stop" }],
        usage: {
          prompt_tokens: pt, completion_tokens: ct, total_tokens: pt + ct,
          prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
        },
        service_tier: "default", system_fingerprint: "fp_fake",
      });
    }
    if (provider === "anthropic") {
      const input = step.kind === "text" || chat ? undefined : answer;
      return reply(200, {
        id: "msg_fake1", type: "message", role: "assistant", model: body.model,
        content: input === undefined ? [{ type: "text", text }] : [{ type: "tool_use", id: "toolu_fake1", name: body.tools[0].name, input }],
        stop_reason: input === undefined ? "end_turn" : "tool_use", stop_sequence: null,
        usage: { input_tokens: pt, output_tokens: ct, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, service_tier: "standard" },
      });
    }
    const model = decodeURIComponent(/models\/([^:]+):/.exec(subPath)![1]);
    return reply(200, {
      candidates: [{ content: { parts: [{ text }], role: "model" }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: pt, candidatesTokenCount: ct, thoughtsTokenCount: thoughts, totalTokenCount: pt + ct + thoughts,
        promptTokensDetails: [{ modality: "TEXT", tokenCount: pt }],
      },
      modelVersion: model, responseId: "fake-response-1",
    });
  });
  server.keepAliveTimeout = 100;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const fakes: FakeProviders = {
    url: `http://127.0.0.1:${port}`,
    requests,
    judge: () => ({ explanation: "looks right", score: 1 }),
    chat: (_provider, body) => `answer to: ${body.contents ? body.contents.at(-1).parts[0].text : body.messages.at(-1).content}`,
    script: (p, ...steps) => scripts[p].push(...steps),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return fakes;
}
