/**
 * POST /judge against the three providers' real HTTP APIs on loopback (agents-service/test/fake-providers.ts): the
 * verdict schema sent as each provider's structured output (OpenAI json_schema, an Anthropic forced tool, Gemini's
 * responseSchema), the answer and its raw text returned with usage and cost; an answer that is not JSON is a 502
 * carrying the raw answer; 429/5xx retried, then 503 provider_unavailable; a bad body a 422 naming the field; a
 * project's own key and server used for its call instead of the service's, and a private server refused unless the
 * operator allows it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verdictSchema } from "../../evaluation/model/output.js";
import { startFakeProviders } from "./fake-providers.js";
import { KEYS, SECRET, startHarness, type Harness } from "./harness.js";

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

  it("uses a project's own key and server for the call, instead of the service's", async () => {
    const theirs = await startFakeProviders({ openai: "sk-project-own", anthropic: undefined, gemini: undefined });
    const open = await startHarness({ allowPrivateProviderUrls: true });
    try {
      const ask = async (body: Record<string, unknown>) => {
        const res = await fetch(`${open.url}/judge`, { method: "POST", headers: { "content-type": "application/json", "x-agent-secret": SECRET }, body: JSON.stringify(body) });
        return { status: res.status, body: (await res.json()) as any };
      };
      const connection = { api_key: "sk-project-own", base_url: `${theirs.url}/openai/v1` };
      const r = await ask({ provider: "openai", model: "gpt-4o-mini", system: "", user: "judge this", output, connection });
      expect(r.status).toBe(200);
      expect(theirs.requests).toHaveLength(1);
      expect(theirs.requests[0]!.headers.authorization).toBe("Bearer sk-project-own");
      expect(open.fake.requests.filter((q) => q.headers.authorization === `Bearer ${KEYS.openai}`)).toHaveLength(0);
      // A wrong project key is the provider's 401, not a fall back to the service's key.
      const wrong = await ask({ provider: "openai", system: "", user: "judge this", output, connection: { ...connection, api_key: "sk-wrong" } });
      expect(wrong.status).toBeGreaterThanOrEqual(400);
      expect(open.fake.requests).toHaveLength(0);
      expect((await ask({ system: "", user: "x", output, connection })).body.error.field).toBe("provider");
    } finally {
      await open.close();
      await theirs.close();
    }
    // Without the operator's permission, a project's server on a private or loopback address is refused.
    const refused = await judge({ provider: "openai", system: "", user: "x", output, connection: { api_key: "k", base_url: "http://127.0.0.1:9/v1" } });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: "provider_url_refused", field: "connection.base_url" });
    expect((await judge({ provider: "openai", system: "", user: "x", output, connection: { api_key: "k", base_url: "http://169.254.169.254/latest" } })).body.error.code).toBe("provider_url_refused");
    expect((await judge({ provider: "openai", system: "", user: "x", output, connection: { api_key: "k", base_url: "file:///etc/passwd" } })).body.error.field).toBe("connection.base_url");
  });
});
