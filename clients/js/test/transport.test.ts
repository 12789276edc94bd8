import { afterEach, describe, expect, it } from "vitest";
import { Runwatch, RunwatchError } from "../src/index.js";
import { LoopbackServer, accept207, freePort, sleep, waitFor } from "./loopback.js";

const KEY = "a".repeat(64);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const servers: LoopbackServer[] = [];
const clients: Runwatch[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.shutdown(100)));
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function server(): Promise<LoopbackServer> {
  const s = await new LoopbackServer().start();
  servers.push(s);
  return s;
}

function client(baseUrl: string, extra: Partial<ConstructorParameters<typeof Runwatch>[0]> = {}) {
  const errors: RunwatchError[] = [];
  const c = new Runwatch({ apiKey: KEY, baseUrl, backoffBaseMs: 50, backoffMaxMs: 400, onError: (e) => errors.push(e), ...extra });
  clients.push(c);
  return { c, errors };
}

describe("transport", () => {
  it("batches to POST /api/ingest/batch (≤ 1000 per request), in order, with a UUIDv7 event_id on every event", async () => {
    const s = await server();
    const { c } = client(s.url);
    for (let i = 0; i < 2500; i++) c.emit("run-1", "agent", "step", { node_name: `n${i}`, phase: "start" });
    expect(await c.flush(10_000)).toBe(true);
    const batches = s.requests.filter((r) => r.url === "/api/ingest/batch");
    expect(batches.map((r) => r.body.events.length)).toEqual([1000, 1000, 500]);
    expect(batches.every((r) => r.method === "POST" && r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
    const events = batches.flatMap((r) => r.body.events);
    expect(events.map((e: any) => e.payload.node_name)).toEqual(Array.from({ length: 2500 }, (_, i) => `n${i}`));
    expect(events.every((e: any) => UUID.test(e.event_id))).toBe(true);
    expect(new Set(events.map((e: any) => e.event_id)).size).toBe(2500);
    const ids = events.map((e: any) => e.event_id);
    expect([...ids].sort()).toEqual(ids); // v7 ids sort in production order, as the server orders a run's events
    expect(events.every((e: any) => !Number.isNaN(Date.parse(e.occurred_at)))).toBe(true);
    expect(c.stats).toMatchObject({ sent: 2500, dropped: 0, requests: 3 });
  });

  it("groups events produced close together into one request", async () => {
    const s = await server();
    const { c } = client(s.url, { flushIntervalMs: 100 });
    for (let i = 0; i < 20; i++) c.emit("r", "a", "step", { node_name: "x", phase: "start" });
    await waitFor(() => s.accepted.length === 20);
    expect(s.requests.length).toBe(1);
  });

  it("keeps batches under the body size limit", async () => {
    const s = await server();
    const { c } = client(s.url, { maxBatchBytes: 20_000 });
    const big = "x".repeat(3_000);
    for (let i = 0; i < 20; i++) c.emit("r", "a", "tool_call", { tool_name: "t", phase: "start", input_preview: big });
    expect(await c.flush(5_000)).toBe(true);
    expect(s.requests.length).toBeGreaterThan(1);
    for (const r of s.requests) expect(JSON.stringify(r.body).length).toBeLessThanOrEqual(20_000);
    expect(s.accepted.length).toBe(20);
  });

  it("honours 429 Retry-After, then delivers everything once", async () => {
    const s = await server();
    s.responder = (req, n) => (n === 1 ? { status: 429, headers: { "retry-after": "1" }, body: { error: { code: "rate_limited", message: "slow down" } } } : accept207(req));
    const { c, errors } = client(s.url);
    for (let i = 0; i < 5; i++) c.emit("r", "a", "step", { node_name: `n${i}`, phase: "start" });
    expect(await c.flush(10_000)).toBe(true);
    expect(s.requests.length).toBe(2);
    const gap = s.requests[1]!.at - s.requests[0]!.at;
    expect(gap).toBeGreaterThanOrEqual(950);
    expect(s.requests[1]!.body.events.map((e: any) => e.event_id)).toEqual(s.requests[0]!.body.events.map((e: any) => e.event_id));
    expect(errors.some((e) => e.code === "http" && e.details.status === 429)).toBe(true);
  });

  it("spreads its requests over the rate-limit window once half of it is spent, instead of running into 429", async () => {
    const s = await server();
    let remaining = 10;
    s.responder = (req) => ({ ...accept207(req), headers: { "ratelimit-limit": "10", "ratelimit-remaining": String(--remaining), "ratelimit-reset": "2" } });
    const { c } = client(s.url, { flushIntervalMs: 10 });
    for (let i = 0; i < 8; i++) {
      c.emit("r", "a", "step", { node_name: `n${i}`, phase: "start" });
      expect(await c.flush(10_000)).toBe(true);
    }
    const gaps = s.requests.slice(1).map((r, i) => r.at - s.requests[i]!.at);
    // While more than half is left (9, 8, 7, 6 after the first four), no wait; then 2 s over the 5, 4, 3 left.
    expect(gaps.slice(0, 4).every((g) => g < 300)).toBe(true);
    expect(gaps.slice(4)).toEqual([expect.any(Number), expect.any(Number), expect.any(Number)]);
    for (const [k, left] of [[4, 5], [5, 4], [6, 3]] as const) expect(gaps[k]!).toBeGreaterThanOrEqual(2000 / (left + 1) - 50);
    expect(s.accepted.length).toBe(8);
  });

  it("retries 503 and network errors with backoff and keeps the events", async () => {
    const s = await server();
    s.responder = (req, n) => (n <= 3 ? { status: 503, body: { error: { code: "unavailable", message: "try later" } } } : accept207(req));
    const { c } = client(s.url);
    c.emit("r", "a", "run_start", { framework: "custom" });
    expect(await c.flush(10_000)).toBe(true);
    expect(s.requests.length).toBe(4);
    expect(s.accepted.length).toBe(1);
    // Exponential: each wait at least half of base·2^k (full jitter keeps ≥ 50%).
    const gaps = s.requests.slice(1).map((r, i) => r.at - s.requests[i]!.at);
    expect(gaps[0]).toBeGreaterThanOrEqual(20);
    expect(gaps[2]).toBeGreaterThanOrEqual(90);
  });

  it("honours per-item 207 results: retries only retryable items, drops and reports rejected ones", async () => {
    const s = await server();
    s.responder = (req, n) => ({
      status: 207,
      body: {
        results: req.body.events.map((e: any, index: number) =>
          n === 1 && e.payload.node_name === "retry-me"
            ? { index, status: 503, error: { code: "unavailable", message: "later" } }
            : e.payload.node_name === "bad"
              ? { index, status: 422, error: { code: "invalid", message: "payload.phase is required", field: "payload.phase" } }
              : { index, status: 202, event_id: e.event_id },
        ),
      },
    });
    const { c, errors } = client(s.url);
    c.emit("r", "a", "step", { node_name: "ok-1", phase: "start" });
    c.emit("r", "a", "step", { node_name: "retry-me", phase: "start" });
    c.emit("r", "a", "step", { node_name: "bad", phase: "start" });
    c.emit("r", "a", "step", { node_name: "ok-2", phase: "start" });
    expect(await c.flush(10_000)).toBe(true);
    expect(s.requests.length).toBe(2);
    expect(s.requests[1]!.body.events.map((e: any) => e.payload.node_name)).toEqual(["retry-me"]);
    expect(s.accepted.map((e: any) => e.payload.node_name).sort()).toEqual(["ok-1", "ok-2", "retry-me"]);
    const rejected = errors.find((e) => e.code === "rejected");
    expect(rejected?.message).toContain("payload.phase");
    expect(c.stats).toMatchObject({ sent: 3, rejected: 1 });
  });

  it("gives up on an event after maxAttempts of 500s and reports it", async () => {
    const s = await server();
    s.responder = () => ({ status: 500, body: { error: { code: "internal", message: "boom" } } });
    const { c, errors } = client(s.url, { maxAttempts: 3 });
    c.emit("r", "a", "step", { node_name: "x", phase: "start" });
    expect(await c.flush(10_000)).toBe(true);
    expect(s.requests.length).toBe(3);
    expect(errors.some((e) => e.code === "dropped" && e.message.includes("3 attempts"))).toBe(true);
  });

  it("401: drops the batch and says to check the key", async () => {
    const s = await server();
    s.responder = () => ({ status: 401, body: { error: { code: "unauthorized", message: "unknown API key" } } });
    const { c, errors } = client(s.url);
    c.emit("r", "a", "step", { node_name: "x", phase: "start" });
    expect(await c.flush(5_000)).toBe(true);
    expect(errors.find((e) => e.code === "rejected")?.message).toMatch(/401.*RUNWATCH_API_KEY/);
  });

  it("server down: nothing throws, the agent is not slowed, queued events arrive when it comes back", async () => {
    const port = await freePort();
    const { c, errors } = client(`http://127.0.0.1:${port}`, { backoffMaxMs: 200 });
    const t0 = performance.now();
    const out = await c.run({ agentName: "offline-agent", input: { q: "hi" } }, async (run) => {
      await run.step("plan", () => "p");
      await run.toolCall("search", { q: "x" }, () => "found");
      run.setUsage({ promptTokens: 3, completionTokens: 4, model: "m" });
      return { answer: 42 };
    });
    const elapsed = performance.now() - t0;
    expect(out).toEqual({ answer: 42 });
    expect(elapsed).toBeLessThan(50);
    expect(await c.flush(300)).toBe(false); // timed out, did not throw
    expect(errors.some((e) => e.code === "network")).toBe(true);
    expect(c.pending).toBe(6);

    const s = await new LoopbackServer().start(port);
    servers.push(s);
    expect(await c.flush(10_000)).toBe(true);
    expect(s.accepted.map((e: any) => e.event_type)).toEqual(["run_start", "step", "step", "tool_call", "tool_call", "run_end"]);
    expect(s.accepted.at(-1).payload).toMatchObject({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7, model: "m", output: { answer: 42 } });
  });

  it("a full queue drops new events and reports it instead of growing", async () => {
    const port = await freePort();
    const { c, errors } = client(`http://127.0.0.1:${port}`, { maxQueueSize: 10 });
    for (let i = 0; i < 15; i++) c.emit("r", "a", "step", { node_name: "x", phase: "start" });
    expect(c.pending).toBe(10);
    expect(c.stats.dropped).toBe(5);
    expect(errors.filter((e) => e.code === "dropped").length).toBe(5);
  });

  it("an event the full queue drops is never serialized (a server that is down costs the agent no JSON)", async () => {
    const port = await freePort();
    const { c } = client(`http://127.0.0.1:${port}`, { maxQueueSize: 2 });
    let serialized = 0;
    const value = { toJSON: () => (serialized++, "big") };
    for (let i = 0; i < 5; i++) c.emit("r", "a", "step", { node_name: "x", phase: "start", input: value });
    expect(c.stats.dropped).toBe(3);
    expect(serialized).toBe(2);
  });

  it("a throwing onError and an unserializable payload do not reach the agent", async () => {
    const port = await freePort();
    const c = new Runwatch({ apiKey: KEY, baseUrl: `http://127.0.0.1:${port}`, onError: () => { throw new Error("bad logger"); } });
    clients.push(c);
    const cyclic: any = { a: 1n };
    cyclic.self = cyclic;
    await c.run({ agentName: "a", input: cyclic }, async (run) => {
      run.stepStart("s", { weird: cyclic });
      return cyclic;
    });
    await sleep(50);
    expect(c.pending).toBe(3);
    expect(c.stats.dropped).toBe(0);
  });

  it("without an API key the client is disabled and the wrapped code still runs", async () => {
    const errors: RunwatchError[] = [];
    const c = new Runwatch({ apiKey: "", onError: (e) => errors.push(e) });
    expect(c.enabled).toBe(false);
    expect(await c.run({ agentName: "a" }, async (run) => run.step("s", () => 7))).toBe(7);
    expect(errors[0]?.code).toBe("config");
  });
});

describe("run API", () => {
  it("spans nest by async context; llmCall sends an LLM span with its own model, usage and answer", async () => {
    const s = await server();
    const { c } = client(s.url);
    let planSpan = "";
    await c.run({ agentName: "planner", sdkRunId: "spans-js-1" }, async (run) => {
      await run.step("plan", async () => {
        const reply = await run.llmCall("chat", { model: "gpt-4o", provider: "openai", input: [{ role: "user", content: "hi" }] }, async (call) => {
          await sleep(5);
          call.setUsage({ promptTokens: 12, completionTokens: 3, cachedTokens: 8, reasoningTokens: 1 });
          return "hello";
        });
        await Promise.all([run.toolCall("search", "q1", async () => "r1"), run.toolCall("search", "q2", async () => "r2")]);
        return reply;
      });
      await run.llmCall("summarize", { model: "claude-sonnet-4-5", provider: "anthropic" }, async (call) => call.setUsage({ promptTokens: 20, completionTokens: 5, costUsd: 0.001 }));
    });
    await c.flush();
    const ev = s.accepted.filter((e: any) => e.sdk_run_id === "spans-js-1");
    const plan = ev.find((e: any) => e.payload.node_name === "plan" && e.payload.phase === "start");
    planSpan = plan.span_id;
    expect(planSpan).toMatch(/^[0-9a-f-]{36}$/);
    expect(plan.parent_span_id).toBeUndefined();
    const chatEnd = ev.find((e: any) => e.payload.node_name === "chat" && e.payload.phase === "end");
    expect(chatEnd.parent_span_id).toBe(planSpan);
    expect(chatEnd.payload).toMatchObject({ kind: "llm", model: "gpt-4o", provider: "openai", prompt_tokens: 12, completion_tokens: 3, cached_tokens: 8, reasoning_tokens: 1, output: "hello" });
    expect(chatEnd.payload.duration_ms).toBeGreaterThanOrEqual(4);
    const chatStart = ev.find((e: any) => e.payload.node_name === "chat" && e.payload.phase === "start");
    expect(chatStart.span_id).toBe(chatEnd.span_id);
    expect(chatStart.payload.input).toEqual([{ role: "user", content: "hi" }]);
    // Two concurrent calls of one tool: each its own span, both under the step.
    const tools = ev.filter((e: any) => e.event_type === "tool_call");
    expect(new Set(tools.map((e: any) => e.span_id)).size).toBe(2);
    expect(tools.every((e: any) => e.parent_span_id === planSpan)).toBe(true);
    const summarize = ev.find((e: any) => e.payload.node_name === "summarize" && e.payload.phase === "end");
    expect(summarize.parent_span_id).toBeUndefined();
    expect(summarize.payload).toMatchObject({ kind: "llm", prompt_tokens: 20, cost_usd: 0.001 });
  });

  it("run/step/toolCall/setUsage produce the payloads of docs/API.md", async () => {
    const s = await server();
    const { c } = client(s.url);
    await c.run({ agentName: "writer", input: "draft a haiku", sdkRunId: "run-42", framework: "custom", configVersion: 3 }, async (run) => {
      await run.step("outline", async () => ({ lines: 3 }));
      await run.toolCall("thesaurus", { word: "x".repeat(800) }, async () => "y".repeat(900));
      run.setUsage({ promptTokens: 100, completionTokens: 20, model: "gpt-4o-mini", costUsd: 0.0012 });
      return "an old silent pond";
    });
    await c.flush();
    const ev = s.accepted;
    expect(ev.map((e: any) => [e.event_type, e.payload.phase ?? null])).toEqual([
      ["run_start", null],
      ["step", "start"],
      ["step", "end"],
      ["tool_call", "start"],
      ["tool_call", "end"],
      ["run_end", null],
    ]);
    expect(ev.every((e: any) => e.sdk_run_id === "run-42" && e.agent_name === "writer" && e.config_version === 3)).toBe(true);
    expect(ev[0].payload).toEqual({ framework: "custom", input: { value: "draft a haiku" } });
    expect(ev[2].payload).toMatchObject({ node_name: "outline", phase: "end", output: { lines: 3 } });
    expect(Number.isInteger(ev[2].payload.duration_ms)).toBe(true);
    expect(ev[3].payload.input_preview.length).toBe(500);
    expect(ev[4].payload.output_preview.length).toBe(500);
    expect(ev[5].payload).toEqual({
      output: { value: "an old silent pond" },
      prompt_tokens: 100,
      completion_tokens: 20,
      total_tokens: 120,
      model: "gpt-4o-mini",
      cost_usd: 0.0012,
    });
  });

  it("a throw ends the run with an error event carrying the stack, and is rethrown unchanged", async () => {
    const s = await server();
    const { c } = client(s.url);
    const boom = new TypeError("model said no");
    await expect(
      c.run({ agentName: "a", sdkRunId: "r-err" }, async (run) => {
        await run.toolCall("fetch", { url: "x" }, async () => {
          throw boom;
        });
      }),
    ).rejects.toBe(boom);
    await c.flush();
    const last = s.accepted.at(-1);
    expect(last.event_type).toBe("error");
    expect(last.payload).toMatchObject({ error_type: "TypeError", error_message: "model said no" });
    expect(last.payload.traceback).toContain("transport.test.ts");
    const toolEnd = s.accepted.find((e: any) => e.event_type === "tool_call" && e.payload.phase === "end");
    expect(toolEnd.payload.output_preview).toBe("TypeError: model said no");
  });

  it("manual API: startRun / endRun", async () => {
    const s = await server();
    const { c } = client(s.url);
    const run = c.startRun({ agentName: "m", sdkRunId: "manual-1" });
    run.addUsage({ promptTokens: 1, completionTokens: 2, model: "a" });
    run.addUsage({ promptTokens: 10, completionTokens: 20, model: "b" });
    c.endRun(run, { output: { done: true } });
    c.endRun(run, { error: new Error("ignored: already ended") });
    await c.flush();
    expect(s.accepted.map((e: any) => e.event_type)).toEqual(["run_start", "run_end"]);
    expect(s.accepted[1].payload).toMatchObject({ prompt_tokens: 11, completion_tokens: 22, total_tokens: 33, model: "b", output: { done: true } });
  });

  it("requestHumanInput: asks, long-polls the input endpoint until 200, reports who answered, returns the answer", async () => {
    const s = await server();
    let polls = 0;
    s.responder = (req) => {
      if (req.url.startsWith("/api/runs/")) {
        polls++;
        if (polls === 1) return { status: 404, body: { error: { code: "not_found", message: "no such run yet" } } };
        if (polls < 4) return { status: 204 };
        return { status: 200, body: { response: "approved", responded_by: "ada@example.com", answered_at: new Date().toISOString() } };
      }
      return accept207(req);
    };
    const { c } = client(s.url);
    const answer = await c.run({ agentName: "approver", sdkRunId: "hitl 1/x" }, (run) =>
      run.requestHumanInput("Ship it?", { context: { pr: 7 }, channel: "slack" }),
    );
    expect(answer).toBe("approved");
    await c.flush();
    const polled = s.requests.filter((r) => r.method === "GET");
    expect(polled[0]!.url).toBe("/api/runs/hitl%201%2Fx/input?wait=30");
    expect(polled[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
    // The question was delivered before the first poll.
    const askedAt = s.requests.find((r) => r.body?.events?.some((e: any) => e.event_type === "human_input_requested"))!.at;
    expect(askedAt).toBeLessThanOrEqual(polled[0]!.at);
    expect(s.accepted.map((e: any) => e.event_type)).toEqual(["run_start", "human_input_requested", "human_input_received", "run_end"]);
    expect(s.accepted[1].payload).toEqual({ question: "Ship it?", context: { pr: 7 }, channel: "slack" });
    expect(s.accepted[2].payload).toEqual({ response: "approved", responded_by: "ada@example.com" });
  });

  it("requestHumanInput rejects with a RunwatchError after timeoutMs", async () => {
    const s = await server();
    s.responder = (req) => (req.method === "GET" ? { status: 204 } : accept207(req));
    const { c } = client(s.url);
    const run = c.startRun({ agentName: "a" });
    await expect(run.requestHumanInput("?", { timeoutMs: 1500 })).rejects.toMatchObject({ name: "RunwatchError", code: "human_input" });
  });
});
