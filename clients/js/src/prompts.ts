/**
 * Prompts (docs/PROMPTS.md): `client.getPrompt(name, {label})` returns a Prompt to `compile(vars)`, with its model
 * config. An agent must never fail or wait because Runwatch is slow or down, so:
 *
 * - answers are cached in the process for `cacheTtlS` (default 60 s); a fresh entry is returned without a request;
 * - a stale entry is returned at once and refreshed once in the background (stale-while-revalidate), revalidated with
 *   the ETag the server gave (a 304 costs no body); a failed refresh keeps the stale entry;
 * - without an entry, one request with a short timeout (`timeoutMs`, default 2 s) — calls for the same prompt at once
 *   share it — and when it fails, the caller's `fallback` (a Prompt marked `isFallback`) or a RunwatchError.
 */
import { RunwatchError, describe } from "./errors.js";
import type { ApiHost } from "./api-call.js";

export type PromptRole = "system" | "developer" | "user" | "assistant" | "tool";
export interface PromptMessage { role: PromptRole; content: string }
export type PromptContent = string | PromptMessage[];

export interface PromptConfig {
  provider?: string;
  model?: string;
  parameters?: Record<string, unknown>;
  tools?: unknown[];
  response_format?: unknown;
}

export interface GetPromptOptions {
  /** Default "production"; ignored when `version` is given. "latest" is the newest version. */
  label?: string;
  version?: number;
  /** What to use when the server cannot answer and nothing is cached: the prompt's text or messages, and a config. */
  fallback?: PromptContent | { prompt: PromptContent; config?: PromptConfig };
  /** How long an answer is used without asking again. Default 60; 0 revalidates on every call (in the background). */
  cacheTtlS?: number;
  /** How long a call without a cached answer waits for the server. Default 2000. */
  timeoutMs?: number;
}

/** compile() was not given every variable the prompt names. */
export class PromptVariableError extends Error {
  override readonly name = "PromptVariableError";
  constructor(readonly prompt: string, readonly missing: readonly string[]) {
    super(`prompt "${prompt}" needs variable${missing.length > 1 ? "s" : ""} ${missing.join(", ")}: pass ${missing.map((m) => `${m}: …`).join(", ")} to compile()`);
  }
}

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** The variables a prompt names, each once, in the order they first appear. */
export function promptVariables(content: PromptContent): string[] {
  const seen = new Set<string>();
  for (const text of typeof content === "string" ? [content] : content.map((m) => m.content)) for (const m of text.matchAll(VARIABLE)) seen.add(m[1]!);
  return [...seen];
}

export class Prompt {
  readonly variables: readonly string[];
  constructor(
    readonly name: string,
    /** null for a fallback. */
    readonly version: number | null,
    readonly prompt: PromptContent,
    readonly config: PromptConfig,
    readonly labels: readonly string[],
    /** True when the caller's fallback stands in for a server that did not answer. */
    readonly isFallback = false,
  ) {
    this.variables = promptVariables(prompt);
  }

  get type(): "text" | "chat" {
    return typeof this.prompt === "string" ? "text" : "chat";
  }

  /** The prompt with `{{variables}}` filled in (values that are not strings as JSON); throws PromptVariableError naming any missing. */
  compile(vars: Record<string, unknown> = {}): PromptContent {
    const missing = this.variables.filter((v) => vars[v] === undefined);
    if (missing.length) throw new PromptVariableError(this.name, missing);
    const fill = (text: string) => text.replace(VARIABLE, (_all, name: string) => (typeof vars[name] === "string" ? (vars[name] as string) : JSON.stringify(vars[name])));
    return typeof this.prompt === "string" ? fill(this.prompt) : this.prompt.map((m) => ({ role: m.role, content: fill(m.content) }));
  }

  /** What an LLM span records to link the call to this version (the SDK's LLM-call API takes it as `prompt`). */
  get reference(): { name: string; version: number | null } {
    return { name: this.name, version: this.version };
  }
}

interface Entry {
  prompt: Prompt;
  etag: string | null;
  fetchedAt: number;
  refreshing: Promise<void> | null;
}

interface Wire { name: string; version: number; prompt: PromptContent; config: PromptConfig; labels: string[] }

export class PromptCache {
  private readonly entries = new Map<string, Entry>();
  private readonly firstFetches = new Map<string, Promise<Entry>>();
  /** Requests made (for tests and benchmarks): first fetches and background refreshes. */
  requests = 0;

  constructor(private readonly host: ApiHost & { readonly enabled: boolean }) {}

  async get(name: string, options: GetPromptOptions = {}): Promise<Prompt> {
    const query = options.version !== undefined ? `version=${options.version}` : `label=${encodeURIComponent(options.label ?? "production")}`;
    const key = `${name}?${query}`;
    const ttlMs = Math.max(0, options.cacheTtlS ?? 60) * 1000;
    const timeoutMs = options.timeoutMs ?? 2_000;
    const entry = this.entries.get(key);
    if (entry) {
      if (Date.now() - entry.fetchedAt >= ttlMs && !entry.refreshing) {
        entry.refreshing = this.fetch(name, query, entry.etag, timeoutMs)
          .then((fresh) => { if (fresh) this.entries.set(key, { ...fresh, refreshing: null }); else entry.fetchedAt = Date.now(); })
          .catch(() => { /* keep serving the stale entry; the next call past the TTL tries again */ })
          .finally(() => { entry.refreshing = null; });
      }
      return entry.prompt;
    }
    try {
      let pending = this.firstFetches.get(key);
      if (!pending) {
        pending = this.fetch(name, query, null, timeoutMs).then((fresh) => {
          const made: Entry = { ...fresh!, refreshing: null };
          this.entries.set(key, made);
          return made;
        }).finally(() => this.firstFetches.delete(key));
        this.firstFetches.set(key, pending);
      }
      return (await pending).prompt;
    } catch (err) {
      if (options.fallback === undefined) throw err;
      const fb = options.fallback;
      const [content, config] = typeof fb === "string" || Array.isArray(fb) ? [fb, {}] : [fb.prompt, fb.config ?? {}];
      return new Prompt(name, null, content, config, [], true);
    }
  }

  /** One request; null when the server answered 304 (the entry holds). */
  private async fetch(name: string, query: string, etag: string | null, timeoutMs: number): Promise<Omit<Entry, "refreshing"> | null> {
    if (!this.host.enabled) throw new RunwatchError("config", `Runwatch is disabled (no API key); cannot get prompt "${name}"`);
    const path = `/api/prompts/${encodeURIComponent(name)}?${query}`;
    this.requests++;
    let res: Response;
    try {
      res = await this.host.fetchImpl(`${this.host.baseUrl}${path}`, {
        headers: { authorization: `Bearer ${this.host.apiKey}`, ...(etag ? { "if-none-match": etag } : {}) },
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      throw new RunwatchError("network", `GET ${path} failed (${describe(err)})`, { cause: err });
    }
    if (res.status === 304) return null;
    const text = await res.text();
    if (res.status !== 200) throw new RunwatchError("http", `GET ${path} was refused (HTTP ${res.status}): ${text.slice(0, 500)}`, { status: res.status, body: text });
    const { prompt: w } = JSON.parse(text) as { prompt: Wire };
    return { prompt: new Prompt(w.name, w.version, w.prompt, w.config ?? {}, w.labels ?? []), etag: res.headers.get("etag"), fetchedAt: Date.now() };
  }
}
