/**
 * POST /judge against the three providers' real HTTP APIs on loopback (agents-service/test/fake-providers.ts): the
 * verdict schema sent as each provider's structured output (OpenAI json_schema, an Anthropic forced tool, Gemini's
 * responseSchema), the answer and its raw text returned with usage and cost; an answer that is not JSON is a 502
 * carrying the raw answer; 429/5xx retried, then 503 provider_unavailable; a bad body a 422 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verdictSchema } from "../../core/evaluation/output.js";
import { SECRET, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ llmMaxRetries: 1 });
});
afterAll(() => h?.close());

const output = { name: "verdict", description: "Submit the verdict", schema: verdictSchema({ type: "numeric", min: 0, max: 1 }) };
const judge = async (body: unknown, secret = SECRET) => {
  const res = await fetch(`${h.url}/judge`, { method: "POST", headers: { "content-type": "application/json", "x-agent-secret": secret }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};

describe("POST /judge", () => {
  for (const provider of ["openai", "anthropic", "gemini"] as const) {
    it(`asks ${provider} for the verdict in its structured-output form and returns the answer, raw text and cost`, async () => {
      h.fake.judge = (prompt) => ({ explanation: `saw ${prompt.length} characters`, score: 0.75 });
      const before = h.fake.requests.length;
      const r = await judge({ provider, system: "You are an evaluator.", user: "Is 4 right for 2+2?", output, max_tokens: 256 });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ provider, answer: { explanation: "saw 19 characters", score: 0.75 }, attempts: 1 });
      expect(JSON.parse(r.body.raw_answer)).toEqual({ explanation: "saw 19 characters", score: 0.75 });
      expect(r.body.usage.prompt_tokens).toBeGreaterThan(0);
      expect(r.body.usage.cost_usd).toBeGreaterThan(0);
      const sent = h.fake.requests[before]!.body;
      if (provider === "openai") expect(sent.response_format.json_schema).toMatchObject({ name: "verdict", strict: true, schema: output.schema });
      if (provider === "anthropic") expect([sent.tools[0].name, sent.tool_choice, sent.max_tokens]).toEqual(["verdict", { type: "tool", name: "verdict" }, 256]);
      if (provider === "gemini") expect(sent.generationConfig.responseSchema.properties.score.type).toBe("NUMBER");
    });
  }

  it("an answer that is not JSON is a 502 carrying the raw answer", async () => {
    h.fake.script("openai", { kind: "text", text: 'Sure! {"score": 1} is my answer' });
    const r = await judge({ provider: "openai", system: "", user: "judge this", output });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ code: "malformed_model_answer", raw_answer: 'Sure! {"score": 1} is my answer' });
  });

  it("retries a provider's 503 and then gives up with provider_unavailable (worth retrying later)", async () => {
    h.fake.script("gemini", { kind: "status", status: 503 }, { kind: "status", status: 503 });
    const r = await judge({ provider: "gemini", system: "", user: "judge this", output });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe("provider_unavailable");
    h.fake.script("anthropic", { kind: "status", status: 529 });
    expect((await judge({ provider: "anthropic", system: "", user: "judge this", output })).body).toMatchObject({ answer: { score: 0.75 }, attempts: 2 });
  });

  it("refuses a bad body naming the field, and a wrong secret", async () => {
    expect((await judge({ provider: "openai", system: "", user: "", output })).body.error.field).toBe("user");
    expect((await judge({ provider: "mistral", system: "", user: "x", output })).body.error.field).toBe("provider");
    expect((await judge({ system: "", user: "x", output: { name: "bad name!", description: "", schema: {} } })).body.error.field).toBe("output.name");
    expect((await judge({ system: "", user: "x", output }, "wrong-secret")).status).toBe(401);
  });
});
