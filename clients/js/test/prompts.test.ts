/**
 * getPrompt from the JS client against a real server (`runwatch start`), reached through a forwarding proxy on
 * loopback that can hang (answers nothing) or go down (closes its port): compile and the model config; the cache's
 * TTL (no request while fresh); stale-while-revalidate (the stale version at once, one background refresh, a 304 when
 * nothing changed); a hanging or down server answered from the cache or the caller's fallback within the timeout.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Prompt, PromptVariableError, Runwatch, RunwatchError } from "../src/index.js";
import { startRealServer, type RealServer } from "./real-server.js";

let server: RealServer;

/** Forwards to the real server; `mode` "hang" holds every request unanswered, `down()` closes the port. */
class Proxy {
  mode: "forward" | "hang" = "forward";
  forwarded = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server = http.createServer((req, res) => {
    if (this.mode === "hang") return;
    this.forwarded++;
    const out = http.request(`${server.url}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    req.pipe(out);
  });
  url = "";
  async start(): Promise<this> {
    this.server.on("connection", (s) => { this.sockets.add(s); s.on("close", () => this.sockets.delete(s)); });
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }
  async down(): Promise<void> {
    const closed = new Promise((r) => this.server.close(r));
    for (const s of this.sockets) s.destroy();
    await closed;
  }
}

const push = async (name: string, body: unknown) => {
  const res = await fetch(`${server.url}/api/prompts/${name}/versions`, { method: "POST", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(res.status).toBe(201);
};
const move = async (name: string, label: string, version: number) => {
  const res = await fetch(`${server.url}/api/prompts/${name}/labels/${label}`, { method: "PUT", headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" }, body: JSON.stringify({ version }) });
  expect(res.status).toBe(200);
};
const until = async (what: string, done: () => boolean, ms = 5_000) => {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

beforeAll(async () => {
  server = await startRealServer();
  await push("answer", { prompt: [{ role: "system", content: "You are {{persona}}." }, { role: "user", content: "{{question}}" }], config: { provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.1 } }, labels: ["production"] });
  await push("answer", { prompt: [{ role: "system", content: "You are {{persona}}, brief." }, { role: "user", content: "{{question}}" }], config: { provider: "openai", model: "gpt-4o" } });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});

describe("getPrompt", () => {
  it("compiles the production version and names a missing variable", async () => {
    const client = new Runwatch({ apiKey: server.key, baseUrl: server.url });
    const prompt = await client.getPrompt("answer");
    expect([prompt.version, prompt.type, prompt.isFallback, prompt.labels]).toEqual([1, "chat", false, ["production"]]);
    expect(prompt.config).toEqual({ provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.1 } });
    expect(prompt.compile({ persona: "a tutor", question: { q: "2+2?" } })).toEqual([{ role: "system", content: "You are a tutor." }, { role: "user", content: '{"q":"2+2?"}' }]);
    const err = (() => { try { prompt.compile({ persona: "x" }); } catch (e) { return e; } })();
    expect(err).toBeInstanceOf(PromptVariableError);
    expect((err as PromptVariableError).missing).toEqual(["question"]);
    expect((err as Error).message).toContain("question");
    expect((await client.getPrompt("answer", { version: 2 })).config.model).toBe("gpt-4o");
    expect((await client.getPrompt("answer", { label: "latest" })).version).toBe(2);
    await expect(client.getPrompt("nope")).rejects.toThrow(/HTTP 404/);
    await client.shutdown();
  }, 30_000);

  it("serves from the cache within the TTL, then stale at once while one background refresh revalidates", async () => {
    const proxy = await new Proxy().start();
    const client = new Runwatch({ apiKey: server.key, baseUrl: proxy.url });
    const first = await client.getPrompt("answer", { cacheTtlS: 0.3 });
    expect(first.version).toBe(1);
    for (let i = 0; i < 50; i++) expect(await client.getPrompt("answer", { cacheTtlS: 0.3 })).toBe(first);
    expect(client.promptCache.requests).toBe(1);

    // Past the TTL, unchanged: the same prompt, one revalidation answered 304.
    await new Promise((r) => setTimeout(r, 350));
    expect(await client.getPrompt("answer", { cacheTtlS: 0.3 })).toBe(first);
    expect(await client.getPrompt("answer", { cacheTtlS: 0.3 })).toBe(first);
    await until("the revalidation", () => client.promptCache.requests === 2 && proxy.forwarded === 2);
    await new Promise((r) => setTimeout(r, 50));
    expect(await client.getPrompt("answer", { cacheTtlS: 0.3 })).toBe(first);

    // The label moves: the stale version is returned at once, the new one after the background refresh.
    await move("answer", "production", 2);
    await new Promise((r) => setTimeout(r, 350));
    expect((await client.getPrompt("answer", { cacheTtlS: 0.3 })).version).toBe(1);
    await until("the refresh", () => client.promptCache.requests === 3);
    let now: Prompt = first;
    await until("the new version", () => { void client.getPrompt("answer", { cacheTtlS: 0.3 }).then((p) => (now = p)); return now.version === 2; });
    await move("answer", "production", 1);
    await client.shutdown();
    await proxy.down();
  }, 30_000);

  it("never waits on a hanging or down server: the cached prompt at once, else the fallback within the timeout", async () => {
    const proxy = await new Proxy().start();
    const client = new Runwatch({ apiKey: server.key, baseUrl: proxy.url });
    const cached = await client.getPrompt("answer", { cacheTtlS: 0 });
    proxy.mode = "hang";
    let started = performance.now();
    for (let i = 0; i < 20; i++) expect(await client.getPrompt("answer", { cacheTtlS: 0, timeoutMs: 5_000 })).toBe(cached);
    expect(performance.now() - started).toBeLessThan(100);
    // One refresh in flight at most, however many calls.
    expect(client.promptCache.requests).toBe(2);

    started = performance.now();
    const fb = await client.getPrompt("other", { fallback: "Hello {{who}}", timeoutMs: 300 });
    const waited = performance.now() - started;
    expect([fb.isFallback, fb.version, fb.compile({ who: "you" })]).toEqual([true, null, "Hello you"]);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(waited).toBeLessThan(1_500);
    await expect(client.getPrompt("other", { timeoutMs: 200 })).rejects.toBeInstanceOf(RunwatchError);

    await proxy.down();
    expect(await client.getPrompt("answer", { cacheTtlS: 0 })).toBe(cached);
    started = performance.now();
    const down = await client.getPrompt("answer", { label: "staging", fallback: { prompt: [{ role: "user", content: "{{q}}" }], config: { model: "local" } } });
    expect(performance.now() - started).toBeLessThan(1_000);
    expect([down.isFallback, down.config.model, down.compile({ q: "hi" })]).toEqual([true, "local", [{ role: "user", content: "hi" }]]);
    await client.shutdown();
  }, 30_000);
});
