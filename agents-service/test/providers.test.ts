/**
 * The three providers end to end: agents-service → real HTTP on loopback → fake servers that speak each
 * provider's documented wire format (fake-providers.ts). Covers success, 429-then-success (Retry-After honoured),
 * 5xx retry, giving up, timeouts, provider auth errors and malformed model answers (→ 502, nothing crashes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ANTHROPIC_VERSION } from "../providers/anthropic.js";
import { KEYS, PY_CODE, startHarness, type Harness } from "./harness.js";
import { PRICED_USAGE } from "./fake-providers.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h?.close());

const lastRequest = (provider: string) => h.fake.requests.filter((r) => r.provider === provider).at(-1)!;
const countRequests = (provider: string) => h.fake.requests.filter((r) => r.provider === provider).length;

// Prices per million tokens (input/output) as published and bundled in @pydantic/genai-prices.
const EXPECTED = {
  openai: { model: "gpt-4.1-mini", cost: (1200 * 0.4 + 300 * 1.6) / 1e6, completion: 300 },
  anthropic: { model: "claude-sonnet-4-5", cost: (1200 * 3 + 300 * 15) / 1e6, completion: 300 },
  // Gemini bills thinking tokens as output: candidates 300 + thoughts 50.
  gemini: { model: "gemini-2.5-flash", cost: (1200 * 0.3 + 350 * 2.5) / 1e6, completion: 350 },
} as const;

describe.each(["openai", "anthropic", "gemini"] as const)("%s", (provider) => {
  it("returns suggestions, improved code, a unified diff, usage and cost", async () => {
    const r = await h.improve({ code: PY_CODE, provider, temperature: 0.2, instructions: "Be brief." });
    expect(r.status).toBe(200);
    const b = r.body;
    expect(b.provider).toBe(provider);
    expect(b.model).toBe(EXPECTED[provider].model);
    expect(b.language).toBe("python");
    expect(b.confidence).toBeGreaterThan(0.1);
    expect(b.suggestions).toEqual([expect.objectContaining({ title: expect.any(String), severity: "low" })]);
    expect(b.improved_code).toContain("if item.get(key) is None:");
    expect(b.diff).toMatch(/^--- a\/snippet\.py\n\+\+\+ b\/snippet\.py\n@@ -1,5 \+1,5 @@/m);
    expect(b.diff).toContain("-        if item.get(key) == None:\n+        if item.get(key) is None:");
    expect(b.usage.prompt_tokens).toBe(PRICED_USAGE.prompt);
    expect(b.usage.completion_tokens).toBe(EXPECTED[provider].completion);
    expect(b.usage.cost_usd).toBeCloseTo(EXPECTED[provider].cost, 9);
  });

  it("sends the provider's documented request", async () => {
    await h.improve({ code: PY_CODE, provider, temperature: 0.3 });
    const req = lastRequest(provider);
    const prompt = JSON.stringify(req.body);
    expect(prompt).toContain("item.get(key) == None");
    if (provider === "openai") {
      expect(req.path).toBe("/v1/chat/completions");
      expect(req.headers.authorization).toBe(`Bearer ${KEYS.openai}`);
      expect(req.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
      expect(req.body.temperature).toBe(0.3);
      expect(req.body.response_format.type).toBe("json_schema");
      expect(req.body.response_format.json_schema.strict).toBe(true);
      expect(req.body.response_format.json_schema.schema.required).toEqual(["suggestions", "improved_code"]);
    } else if (provider === "anthropic") {
      expect(req.path).toBe("/v1/messages");
      expect(req.headers["x-api-key"]).toBe(KEYS.anthropic);
      expect(req.headers["anthropic-version"]).toBe(ANTHROPIC_VERSION);
      expect(typeof req.body.system).toBe("string");
      expect(req.body.max_tokens).toBeGreaterThan(1000);
      expect(req.body.tool_choice).toEqual({ type: "tool", name: req.body.tools[0].name });
      expect(req.body.tools[0].input_schema.properties.improved_code.type).toBe("string");
    } else {
      expect(req.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
      expect(req.headers["x-goog-api-key"]).toBe(KEYS.gemini);
      expect(req.body.systemInstruction.parts[0].text).toMatch(/code/);
      expect(req.body.generationConfig).toMatchObject({ temperature: 0.3, responseMimeType: "application/json" });
      expect(req.body.generationConfig.responseSchema).toMatchObject({ type: "OBJECT", required: ["suggestions", "improved_code"] });
      expect(req.body.generationConfig.responseSchema.properties.suggestions.items.properties.severity.enum).toEqual(["low", "medium", "high"]);
    }
  });

  it("retries a 429, honouring Retry-After, then succeeds", async () => {
    const before = countRequests(provider);
    // OpenAI sends retry-after-ms; Anthropic and Gemini send Retry-After in seconds.
    const headers: Record<string, string> = provider === "openai" ? { "retry-after-ms": "300" } : { "retry-after": "1" };
    h.fake.script(provider, { kind: "status", status: 429, headers });
    const t0 = performance.now();
    const r = await h.improve({ code: PY_CODE, provider });
    const waited = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(countRequests(provider) - before).toBe(2);
    expect(waited).toBeGreaterThanOrEqual(provider === "openai" ? 290 : 990);
  });

  it("retries 5xx with backoff, then succeeds", async () => {
    const before = countRequests(provider);
    h.fake.script(provider, { kind: "status", status: provider === "anthropic" ? 529 : 500 }, { kind: "status", status: 503 });
    const r = await h.improve({ code: PY_CODE, provider });
    expect(r.status).toBe(200);
    expect(countRequests(provider) - before).toBe(3);
  });

  it("gives up after the retries: 5xx → 502 provider_unavailable", async () => {
    const before = countRequests(provider);
    const n = h.settings.llmMaxRetries + 1;
    h.fake.script(provider, ...Array.from({ length: n }, () => ({ kind: "status" as const, status: 502 })));
    const r = await h.improve({ code: PY_CODE, provider });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe("provider_unavailable");
    expect(r.body.error.message).toContain(`after ${n} attempts`);
    expect(countRequests(provider) - before).toBe(n);
  });

  it("a Retry-After longer than we wait out → 503 provider_rate_limited with Retry-After", async () => {
    h.fake.script(provider, { kind: "status", status: 429, headers: { "retry-after": "120" } });
    const r = await h.improve({ code: PY_CODE, provider });
    expect(r.status).toBe(503);
    expect(r.body.error.code).toBe("provider_rate_limited");
    expect(r.headers.get("retry-after")).toBe("120");
  });

  it("a provider that does not answer in time → 504 provider_timeout", async () => {
    const t = await startHarness({ llmTimeoutMs: 300 });
    try {
      t.fake.script(provider, { kind: "delay", ms: 1500 });
      const t0 = performance.now();
      const r = await t.improve({ code: PY_CODE, provider });
      expect(r.status).toBe(504);
      expect(r.body.error.code).toBe("provider_timeout");
      expect(performance.now() - t0).toBeLessThan(1400);
    } finally {
      await t.close();
    }
  });

  it("a malformed model answer → 502 malformed_model_answer; the service keeps serving", async () => {
    h.fake.script(provider, { kind: "answer", answer: { suggestions: [{ title: "x", explanation: "y", severity: "urgent" }], improved_code: "z" } });
    const bad = await h.improve({ code: PY_CODE, provider });
    expect(bad.status).toBe(502);
    expect(bad.body.error.code).toBe("malformed_model_answer");
    expect(bad.body.error.message).toContain("suggestions.0.severity");

    h.fake.script(provider, { kind: "answer", answer: { suggestions: [] } });
    const missing = await h.improve({ code: PY_CODE, provider });
    expect(missing.status).toBe(502);
    expect(missing.body.error.message).toContain("improved_code");

    if (provider !== "anthropic") {
      h.fake.script(provider, { kind: "text", text: "Sure! Here are my suggestions: {not json" });
      const prose = await h.improve({ code: PY_CODE, provider });
      expect(prose.status).toBe(502);
      expect(prose.body.error.message).toContain("not valid JSON");
    } else {
      h.fake.script(provider, { kind: "text", text: "I cannot use tools today." });
      const noTool = await h.improve({ code: PY_CODE, provider });
      expect(noTool.status).toBe(502);
      expect(noTool.body.error.message).toContain("tool_use");
    }
    const ok = await h.improve({ code: PY_CODE, provider });
    expect(ok.status).toBe(200);
    expect((await fetch(`${h.url}/health`)).status).toBe(200);
  });

  it("a response body that is not the provider's shape → 502, not a crash", async () => {
    h.fake.script(provider, { kind: "raw", status: 200, body: { unexpected: true } });
    const r = await h.improve({ code: PY_CODE, provider });
    expect(r.status).toBe(502);
    expect(r.body.error.code).toBe("malformed_model_answer");
  });
});

describe("provider errors that are not retried", () => {
  it("a wrong API key → 502 provider_auth_failed with the provider's message, one attempt", async () => {
    const t = await startHarness({}, { ANTHROPIC_API_KEY: "sk-ant-wrong" });
    try {
      const r = await t.improve({ code: PY_CODE, provider: "anthropic" });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe("provider_auth_failed");
      expect(r.body.error.message).toContain("invalid x-api-key");
      expect(t.fake.requests.length).toBe(1);
    } finally {
      await t.close();
    }
  });

  it("a 400 from the provider → 502 provider_rejected_request naming the provider", async () => {
    h.fake.script("gemini", { kind: "status", status: 400 });
    const r = await h.improve({ code: PY_CODE, provider: "gemini" });
    expect(r.status).toBe(502);
    expect(r.body.error).toMatchObject({ code: "provider_rejected_request" });
    expect(r.body.error.message).toMatch(/^Gemini answered HTTP 400/);
  });

  it("an unreachable provider → 502 provider_unreachable after retries", async () => {
    const t = await startHarness({}, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1", AGENTS_LLM_MAX_RETRIES: "1" });
    try {
      const r = await t.improve({ code: PY_CODE, provider: "openai" });
      expect(r.status).toBe(502);
      expect(r.body.error.code).toBe("provider_unreachable");
    } finally {
      await t.close();
    }
  });
});

describe("OpenAI-compatible servers (Ollama, vLLM)", () => {
  it("work without an API key; unknown local models have cost null", async () => {
    const t = await startHarness({}, { OPENAI_API_KEY: "", OPENAI_MODEL: "llama3.1:8b" });
    try {
      const providers = await (await fetch(`${t.url}/providers`)).json();
      const openai = providers.providers.find((p: { id: string }) => p.id === "openai");
      expect(openai).toMatchObject({ configured: true, default_model: "llama3.1:8b", openai_compatible_server: true });
      expect(openai.models[0]).toEqual({ id: "llama3.1:8b", price_usd: null });

      const r = await t.improve({ code: PY_CODE, provider: "openai" });
      expect(r.status).toBe(200);
      expect(r.body.model).toBe("llama3.1:8b");
      expect(r.body.usage).toEqual({ prompt_tokens: 1200, completion_tokens: 300, cost_usd: null });
      expect(t.fake.requests[0].headers.authorization).toBeUndefined();
    } finally {
      await t.close();
    }
  });
});
