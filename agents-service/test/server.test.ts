/** The HTTP surface: auth (401), validation (4xx naming the field), /health, /providers, secret handling. */
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { startAgentsService } from "../server.js";
import { loadAgentsSettings } from "../settings.js";
import { AGENT_SECRET_FILE, secretMatches } from "../../core/agents/secret.js";
import { fuzzSeed, seededRandom } from "../../test/e2e/seeded-random.js";
import { PY_CODE, SECRET, startHarness, type Harness } from "./harness.js";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ maxCodeChars: 2000, maxInstructionsChars: 100 });
});
afterAll(() => h?.close());

describe("auth", () => {
  it("401 missing_agent_secret without the header", async () => {
    const r = await h.improve({ code: PY_CODE }, { "x-agent-secret": "" });
    expect(r.status).toBe(401);
    expect(r.body.error.code).toBe("missing_agent_secret");
  });

  it("401 invalid_agent_secret with a wrong one (also same length, and a prefix)", async () => {
    for (const wrong of ["nope", SECRET.replace(/.$/, "X"), SECRET.slice(0, -1), SECRET + "0"]) {
      const r = await h.improve({ code: PY_CODE }, { "x-agent-secret": wrong });
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe("invalid_agent_secret");
    }
  });

  it("checks the secret before reading or validating the body", async () => {
    const r = await h.improve("{not json", { "x-agent-secret": "wrong" });
    expect(r.status).toBe(401);
    expect(h.fake.requests.length).toBe(0);
  });

  it("secretMatches is exact", () => {
    expect(secretMatches(SECRET, SECRET)).toBe(true);
    expect(secretMatches(undefined, SECRET)).toBe(false);
    expect(secretMatches("", SECRET)).toBe(false);
    expect(secretMatches(SECRET.toUpperCase(), SECRET)).toBe(false);
  });
});

describe("validation", () => {
  const cases: Array<[string, unknown, number, string | undefined, RegExp]> = [
    ["code missing", { language: "python" }, 422, "code", /code is required/],
    ["code empty", { code: "   \n" }, 422, "code", /must not be empty/],
    ["code not a string", { code: 42 }, 422, "code", /Expected string/],
    ["code too long", { code: "x".repeat(2001) }, 422, "code", /at most 2000 characters/],
    ["unknown provider", { code: PY_CODE, provider: "mistral" }, 422, "provider", /one of openai, anthropic, gemini/],
    ["temperature out of range", { code: PY_CODE, temperature: 2.5 }, 422, "temperature", /between 0 and 2/],
    ["temperature not a number", { code: PY_CODE, temperature: "hot" }, 422, "temperature", /Expected number/],
    ["temperature above Anthropic's maximum", { code: PY_CODE, provider: "anthropic", temperature: 1.5 }, 422, "temperature", /between 0 and 1 for anthropic/],
    ["model with spaces", { code: PY_CODE, model: "gpt 4" }, 422, "model", /model name/],
    ["language with spaces", { code: PY_CODE, language: "python 3" }, 422, "language", /language name/],
    ["instructions too long", { code: PY_CODE, instructions: "y".repeat(101) }, 422, "instructions", /at most 100/],
    ["unknown field", { code: PY_CODE, prompt: "hi" }, 422, "prompt", /not a known field/],
    ["an array body", [1, 2], 400, undefined, /JSON object/],
  ];
  it.each(cases)("%s → %i naming the field", async (_name, body, status, field, message) => {
    const r = await h.improve(body);
    expect(r.status).toBe(status);
    expect(r.body.error.field).toBe(field);
    expect(r.body.error.message).toMatch(message);
  });

  it("malformed JSON → 400 malformed_json", async () => {
    const r = await h.improve('{"code": "x",');
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("malformed_json");
  });

  it("a non-JSON content type → 415", async () => {
    const res = await fetch(`${h.url}/improve`, { method: "POST", headers: { "x-agent-secret": SECRET, "content-type": "text/plain" }, body: "print(1)" });
    expect(res.status).toBe(415);
    expect((await res.json()).error.code).toBe("unsupported_media_type");
  });

  it("a body over the byte limit → 413 without buffering it", async () => {
    const r = await h.improve({ code: "x".repeat(200_000) });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("payload_too_large");
  });

  it("a provider that is not configured → 400 provider_not_configured", async () => {
    const t = await startHarness({}, { GEMINI_API_KEY: "" });
    try {
      const r = await t.improve({ code: PY_CODE, provider: "gemini" });
      expect(r.status).toBe(400);
      expect(r.body.error).toMatchObject({ code: "provider_not_configured", field: "provider" });
    } finally {
      await t.close();
    }
  });

  it("no provider configured at all → 503 no_provider_configured", async () => {
    const t = await startHarness({}, { OPENAI_API_KEY: "", OPENAI_BASE_URL: "", ANTHROPIC_API_KEY: "", GEMINI_API_KEY: "" });
    try {
      const r = await t.improve({ code: PY_CODE });
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe("no_provider_configured");
      const health = await (await fetch(`${t.url}/health`)).json();
      expect(health.providers).toEqual({ openai: false, anthropic: false, gemini: false });
    } finally {
      await t.close();
    }
  });
});

describe("hostile bodies", () => {
  it("random fields and values (NUL, lone surrogates, prototype names, huge numbers, wrong types) never get a 5xx", async () => {
    const seed = fuzzSeed();
    const r = seededRandom(seed);
    const value = (): unknown => r.pick([
      () => PY_CODE, () => "", () => "a\u0000b", () => "x\ud800", () => "__proto__", () => "constructor", () => "toString", () => "gpt-4.1-mini",
      () => "python", () => "openai", () => "anthropic", () => "gemini", () => "z".repeat(r.int(3000)), () => "😀".repeat(r.int(50)),
      () => r.pick([0, -1, 0.5, 1, 2, 2.0001, 1e308, -1e308, 2 ** 53]), () => null, () => true, () => [PY_CODE], () => ({ code: PY_CODE }),
    ])();
    const fields = ["code", "language", "provider", "model", "temperature", "instructions", "__proto__", "constructor", "prompt"];
    const problems: string[] = [];
    for (let i = 0; i < 120; i++) {
      const body: Record<string, unknown> = {};
      for (const f of fields) if (r.next() < (f === "code" ? 0.8 : 0.35)) Object.defineProperty(body, f, { value: value(), enumerable: true });
      const res = await h.improve(body);
      if (res.status >= 500 && res.status !== 502 && res.status !== 503) problems.push(`${JSON.stringify(body).slice(0, 200)} → ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
      else if (res.status >= 400 && typeof res.body?.error?.message !== "string") problems.push(`${res.status} without an error message`);
    }
    expect(problems, `seed ${seed}`).toEqual([]);
  });
});

describe("/improve behaviour", () => {
  it("uses the default provider and its default model when none is named", async () => {
    const r = await h.improve({ code: PY_CODE });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ provider: "openai", model: "gpt-4.1-mini" });
  });

  it("a language named by the caller is normalised and not detected", async () => {
    const r = await h.improve({ code: PY_CODE, language: "py", provider: "gemini", model: "gemini-2.5-pro" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ language: "python", confidence: 1, detection: { method: "caller" }, model: "gemini-2.5-pro" });
  });

  it("unchanged code gives an empty diff and no suggestions", async () => {
    const r = await h.improve({ code: "const add = (a, b) => a + b;\nconsole.log(add(1, 2));\n", provider: "anthropic" });
    expect(r.status).toBe(200);
    expect(r.body.language).toBe("javascript");
    expect(r.body.suggestions).toEqual([]);
    expect(r.body.diff).toBe("");
  });

  it("503 busy beyond maxConcurrent", async () => {
    const t = await startHarness({ maxConcurrent: 1 });
    try {
      t.fake.script("openai", { kind: "delay", ms: 400 });
      const slow = t.improve({ code: PY_CODE });
      await new Promise((r) => setTimeout(r, 100));
      const busy = await t.improve({ code: PY_CODE });
      expect(busy.status).toBe(503);
      expect(busy.body.error.code).toBe("busy");
      expect(busy.headers.get("retry-after")).toBe("5");
      expect((await slow).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe("/health, /providers, routing", () => {
  it("GET /health reports status, version, uptime and providers", async () => {
    const res = await fetch(`${h.url}/health`);
    expect(res.status).toBe(200);
    const b = await res.json();
    expect(b).toMatchObject({ status: "ok", service: "agents", version: expect.stringMatching(/^\d+\.\d+\.\d+/), providers: { openai: true, anthropic: true, gemini: true } });
    expect(b.uptime_s).toBeGreaterThanOrEqual(0);
    expect(["idle", "loading", "ready"]).toContain(b.language_detector);
  });

  it("GET /providers lists the three providers with models, prices and configured flags", async () => {
    const b = await (await fetch(`${h.url}/providers`)).json();
    expect(b.default_provider).toBe("openai");
    expect(b.providers.map((p: { id: string }) => p.id)).toEqual(["openai", "anthropic", "gemini"]);
    for (const p of b.providers) {
      expect(p.configured).toBe(true);
      expect(p.models.length).toBeGreaterThan(2);
      expect(p.models[0].id).toBe(p.default_model);
    }
    const sonnet = b.providers[1].models.find((m: { id: string }) => m.id === "claude-sonnet-4-5");
    expect(sonnet.price_usd).toEqual({ input_per_mtok: 3, output_per_mtok: 15 });
  });

  it("404 and 405 as JSON", async () => {
    const nf = await fetch(`${h.url}/nope`);
    expect(nf.status).toBe(404);
    expect((await nf.json()).error.code).toBe("not_found");
    const na = await fetch(`${h.url}/improve`);
    expect(na.status).toBe(405);
    expect((await na.json()).error.message).toContain("POST");
  });
});

describe("the agent secret", () => {
  const base = () => ({ ...loadConfig({ NODE_ENV: "production" }), logLevel: "error" as const });
  const opts = { port: 0, host: "127.0.0.1", settings: loadAgentsSettings({}), logger: createLogger("error") };

  it("production refuses to start without AGENT_SECRET, or with a short one", async () => {
    await expect(startAgentsService({ ...base(), agentSecret: undefined }, opts)).rejects.toThrow(/AGENT_SECRET is required/);
    await expect(startAgentsService({ ...base(), agentSecret: "short" }, opts)).rejects.toThrow(/at least 16/);
  });

  it("development generates one per data dir (0600) and keeps it across restarts", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "agents-secret-"));
    try {
      const config = { ...loadConfig({ NODE_ENV: "development" }), dataDir, agentSecret: undefined, logLevel: "error" as const };
      const a = await startAgentsService(config, opts);
      const secret = (await readFile(path.join(dataDir, AGENT_SECRET_FILE), "utf8")).trim();
      expect(secret).toMatch(/^[0-9a-f]{64}$/);
      expect((await stat(path.join(dataDir, AGENT_SECRET_FILE))).mode & 0o777).toBe(0o600);
      const ok = await fetch(`${a.url}/improve`, { method: "POST", headers: { "x-agent-secret": secret, "content-type": "application/json" }, body: "{}" });
      expect(ok.status).toBe(422); // past auth
      await a.close();
      const b = await startAgentsService(config, opts);
      expect((await readFile(path.join(dataDir, AGENT_SECRET_FILE), "utf8")).trim()).toBe(secret);
      await b.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
