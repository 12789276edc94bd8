/**
 * POST /complete against the providers' real HTTP APIs on loopback (fake-providers.ts): the messages sent as each
 * provider takes them (OpenAI's roles as given; Anthropic's system apart, developer folded into it; Gemini's
 * systemInstruction and model turns), the text answer returned with usage, cost and the answering model; a bad body
 * a 422 naming the field; a provider error a 502/503 with its code; a slow provider a 504.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ llmMaxRetries: 0, llmTimeoutMs: 400 });
});
afterAll(() => h?.close());

const complete = async (body: unknown, secret = SECRET) => {
  const res = await fetch(`${h.url}/complete`, { method: "POST", headers: { "content-type": "application/json", "x-agent-secret": secret }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

const messages = [
  { role: "system", content: "You are brief." },
  { role: "developer", content: "Answer in French." },
  { role: "user", content: "Hello there" },
];

describe("POST /complete", () => {
  for (const provider of ["openai", "anthropic", "gemini"] as const) {
    it(`sends the messages to ${provider} in its own form and returns the text, usage and cost`, async () => {
      h.fake.chat = (p, body) => `${p} says hi to ${JSON.stringify(body.messages?.at(-1)?.content ?? body.contents.at(-1).parts[0].text)}`;
      const before = h.fake.requests.length;
      const r = await complete({ provider, messages, temperature: 0.5, max_tokens: 100 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ provider, text: `${provider} says hi to "Hello there"`, attempts: 1 });
      expect(r.body.usage.prompt_tokens).toBeGreaterThan(0);
      expect(r.body.usage.cost_usd).toBeGreaterThan(0);
      const sent = h.fake.requests[before]!.body;
      if (provider === "openai") {
        expect(sent.messages).toEqual(messages);
        expect(sent.response_format).toBeUndefined();
        expect(sent.max_completion_tokens).toBe(100);
      }
      if (provider === "anthropic") {
        expect(sent.system).toBe("You are brief.\n\nAnswer in French.");
        expect(sent.messages).toEqual([{ role: "user", content: "Hello there" }]);
        expect([sent.tools, sent.max_tokens]).toEqual([undefined, 100]);
      }
      if (provider === "gemini") {
        expect(sent.systemInstruction.parts).toEqual([{ text: "You are brief." }, { text: "Answer in French." }]);
        expect(sent.contents).toEqual([{ role: "user", parts: [{ text: "Hello there" }] }]);
      }
    });
  }

  it("refuses a bad body naming the field, and a bad secret", async () => {
    expect((await complete({ messages: [] })).body.error.field).toBe("messages");
    expect((await complete({ messages: [{ role: "tool", content: "x" }] })).body.error.field).toBe("messages.0.role");
    expect((await complete({ messages, temperature: 3 })).body.error.field).toBe("temperature");
    expect((await complete({ messages, provider: "mistral" })).body.error.field).toBe("provider");
    const r = await complete({ messages: [{ role: "assistant", content: "Hi" }], provider: "anthropic" });
    expect([r.status, r.body.error.field]).toEqual([422, "messages"]);
    expect((await complete({ messages }, "wrong")).status).toBe(401);
  });

  it("a provider's error or a slow provider is a clear 5xx, not a hang", async () => {
    h.fake.script("openai", { kind: "status", status: 400 });
    const bad = await complete({ provider: "openai", messages });
    expect(bad.status).toBe(502);
    expect(bad.body.error.message).toContain("OpenAI");
    h.fake.script("anthropic", { kind: "delay", ms: 1_500 });
    const slow = await complete({ provider: "anthropic", messages });
    expect(slow.status).toBe(504);
    expect(slow.body.error.code).toBe("provider_timeout");
  });
});
