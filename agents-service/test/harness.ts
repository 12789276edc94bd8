/** Starts agents-service on an ephemeral loopback port with a temp data dir and the fake providers. */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig, type Config } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { startAgentsService, type AgentsServiceOptions } from "../server.js";
import { loadAgentsSettings, type AgentsSettings } from "../settings.js";
import { startFakeProviders, type FakeProviders } from "./fake-providers.js";

export const KEYS = { openai: "sk-test-openai", anthropic: "sk-ant-test", gemini: "AIza-test-gemini" };
export const SECRET = "test-agent-secret-0123456789";

export interface Harness {
  readonly url: string;
  readonly fake: FakeProviders;
  readonly settings: AgentsSettings;
  readonly dataDir: string;
  improve(body: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

export async function startHarness(
  overrides: Partial<AgentsSettings> = {},
  env: Record<string, string> = {},
  opts: Partial<AgentsServiceOptions> = {},
): Promise<Harness> {
  // A keyless OpenAI-compatible server (OPENAI_API_KEY="") accepts requests without Authorization, as Ollama does.
  const fake = await startFakeProviders({ ...KEYS, openai: env.OPENAI_API_KEY === "" ? undefined : KEYS.openai });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), "agents-test-"));
  const base = loadAgentsSettings({
    OPENAI_API_KEY: KEYS.openai,
    OPENAI_BASE_URL: `${fake.url}/openai/v1`,
    ANTHROPIC_API_KEY: KEYS.anthropic,
    ANTHROPIC_BASE_URL: `${fake.url}/anthropic`,
    GEMINI_API_KEY: KEYS.gemini,
    GEMINI_BASE_URL: `${fake.url}/gemini`,
    OPENAI_MODEL: "gpt-4.1-mini",
    AGENTS_LLM_RETRY_BASE_MS: "20",
    AGENTS_LLM_TIMEOUT_MS: "5000",
    ...env,
  });
  const settings = { ...base, ...overrides };
  const config: Config = { ...loadConfig({ NODE_ENV: "test" }), dataDir, agentSecret: SECRET, logLevel: "error" };
  const svc = await startAgentsService(config, { port: 0, host: "127.0.0.1", settings, logger: createLogger("error"), ...opts });
  return {
    url: svc.url,
    fake,
    settings,
    dataDir,
    async improve(body, headers = {}) {
      const res = await fetch(`${svc.url}/improve`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-agent-secret": SECRET, ...headers },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json(), headers: res.headers };
    },
    async close() {
      await svc.close();
      await fake.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const PY_CODE = "def find(items, key):\n    for item in items:\n        if item.get(key) == None:\n            return item\n    return None\n";
