/**
 * An LLM on loopback for the experiment tests and bench: an HTTP server answering OpenAI Chat Completions
 * (`POST /v1/chat/completions`, not streamed) and a LangChain chat model that calls it over HTTP, so a LangGraph
 * graph's model calls cross the network as a provider's would and report real usage.
 *
 * Script: the answer is the last user message, upper-cased when the system message says "style: shout"; a message
 * containing FAIL_MARKER is answered HTTP 500; every answer waits `delayMs` first. A judge's request (structured
 * output named "verdict", as Runwatch's evaluators ask) is answered with a verdict: false (or the lowest score) when
 * the prompt contains JUDGE_FAIL_MARKER, else true (or the highest).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

export const FAIL_MARKER = "please-fail-500";
export const JUDGE_FAIL_MARKER = "WRONG";

/** The fake judge's verdict for a prompt, in the score type the request's schema asks for. */
function verdict(schema: { properties?: { score?: { type?: string; enum?: string[] } } } | undefined, prompt: string): string {
  const bad = prompt.includes(JUDGE_FAIL_MARKER);
  const s = schema?.properties?.score;
  const score = s?.enum ? (bad ? s.enum.at(-1) : s.enum[0]) : s?.type === "boolean" ? !bad : bad ? 0 : 1;
  return JSON.stringify({ explanation: bad ? "The answer is wrong." : "The answer is right.", score });
}

export interface FakeLlm {
  readonly url: string;
  calls: number;
  close(): Promise<void>;
}

export async function startFakeLlm(delayMs = 0): Promise<FakeLlm> {
  const state = { calls: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
        model: string; messages: { role: string; content: string }[]; response_format?: { json_schema?: { name?: string; schema?: Parameters<typeof verdict>[0] } };
      };
      const user = [...body.messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const shout = body.messages.some((m) => m.role === "system" && m.content.includes("style: shout"));
      setTimeout(() => {
        state.calls++;
        if (user.includes(FAIL_MARKER)) {
          res.writeHead(500, { "content-type": "application/json" });
          res.end(JSON.stringify({ error: { message: "the model is overloaded", type: "server_error" } }));
          return;
        }
        const judging = body.response_format?.json_schema?.name === "verdict";
        const content = judging ? verdict(body.response_format!.json_schema!.schema, user) : shout ? user.toUpperCase() : user;
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({
          id: `chatcmpl-${state.calls}`, object: "chat.completion", created: Math.floor(Date.now() / 1000), model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
          usage: { prompt_tokens: 20 + user.length, completion_tokens: 5 + content.length, total_tokens: 25 + user.length + content.length },
        }));
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return {
    url,
    get calls() {
      return state.calls;
    },
    set calls(n: number) {
      state.calls = n;
    },
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

/** A LangChain chat model that calls a Chat Completions endpoint over HTTP (the fake above, or any compatible server). */
export class HttpChatModel extends BaseChatModel {
  constructor(private readonly baseUrl: string, private readonly model = "gpt-4o-mini") {
    super({});
  }
  _llmType() {
    return "http-chat-completions";
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const role = (m: BaseMessage) => (m._getType() === "human" ? "user" : m._getType() === "ai" ? "assistant" : "system");
    const res = await fetch(`${this.baseUrl}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: this.model, messages: messages.map((m) => ({ role: role(m), content: String(m.content) })) }),
    });
    if (res.status !== 200) throw new Error(`the LLM answered HTTP ${res.status}: ${await res.text()}`);
    const body = (await res.json()) as { model: string; choices: { message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
    const text = body.choices[0]!.message.content;
    const message = new AIMessage({
      content: text,
      usage_metadata: { input_tokens: body.usage.prompt_tokens, output_tokens: body.usage.completion_tokens, total_tokens: body.usage.total_tokens },
      response_metadata: { model_name: body.model },
    });
    return { generations: [{ text, message }] };
  }
}
