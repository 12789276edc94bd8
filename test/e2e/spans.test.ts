/**
 * Spans over real HTTP (docs/API.md, Spans): span ids on events, LLM calls priced one by one, the totals rule,
 * GET /api/runs/{id}/spans (nesting, paging), the llm_calls table (costs by model), replays, validation.
 */
import { randomUUID } from "node:crypto";
import { calcPrice } from "@pydantic/genai-prices";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentMonthSpend, costGroups } from "../../stores/runs/costs.js";
import { computeCost } from "../../plugins/prices.js";
import { ERROR_PREVIEW_CHARS } from "../../core/events/spans.js";
import { bearer, json, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  acct = await srv.account();
});
afterAll(async () => {
  await srv?.close();
});

const t0 = Date.parse("2026-11-24T09:00:00.000Z");
const at = (ms: number) => new Date(t0 + ms).toISOString();

/** A ReAct-like run: an agent span holding two LLM calls of two providers and a tool call, a third call of an unknown model. */
function reactRun(sdkRunId: string) {
  const ev = (event_type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ event_id: randomUUID(), sdk_run_id: sdkRunId, event_type, payload, ...extra });
  const llm = { kind: "llm", node_name: "chat" };
  return [
    ev("run_start", { framework: "langgraph" }, { agent_name: "researcher", occurred_at: at(0) }),
    ev("step", { node_name: "agent", phase: "start" }, { span_id: "a1", occurred_at: at(10) }),
    ev("step", { ...llm, phase: "start", input: [{ role: "user", content: "Where is my order?" }] }, { span_id: "l1", parent_span_id: "a1", occurred_at: at(20) }),
    ev("step", { ...llm, phase: "end", model: "gpt-4o", provider: "openai", prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 800, output: "I will look it up", duration_ms: 480 }, { span_id: "l1", parent_span_id: "a1", occurred_at: at(500) }),
    ev("tool_call", { tool_name: "orders_api", phase: "start", input_preview: '{"id": 1234}' }, { span_id: "t1", parent_span_id: "a1", occurred_at: at(510) }),
    ev("tool_call", { tool_name: "orders_api", phase: "end", output_preview: "shipped", duration_ms: 300 }, { span_id: "t1", parent_span_id: "a1", occurred_at: at(810) }),
    // Sent only as its end event: complete as it is.
    ev("step", { ...llm, phase: "end", model: "claude-sonnet-4-5", provider: "anthropic", prompt_tokens: 1500, completion_tokens: 300, duration_ms: 900 }, { span_id: "l2", parent_span_id: "a1", occurred_at: at(1800) }),
    ev("step", { ...llm, phase: "end", model: "in-house-model-7", prompt_tokens: 50, completion_tokens: 5, duration_ms: 40 }, { span_id: "l3", parent_span_id: "a1", occurred_at: at(1850) }),
    ev("step", { node_name: "agent", phase: "end", duration_ms: 1850 }, { span_id: "a1", occurred_at: at(1860) }),
    // The run_end totals are ignored: the run has LLM calls.
    ev("run_end", { prompt_tokens: 5, completion_tokens: 5, cost_usd: 99, model: "gpt-4o" }, { occurred_at: at(1900) }),
  ];
}

const post = (events: unknown[]) => fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events }));

describe("spans and LLM calls", () => {
  it("a run's tokens and cost are the sum of its LLM calls, each priced from its own model; spans nest as sent", async () => {
    const events = reactRun("react-1");
    expect((await post(events)).status).toBe(207);
    const { run } = await waitForRun(srv.url, acct.key, "react-1", (b) => b.run.event_count === events.length);
    const gpt = computeCost("gpt-4o", 1000, 200, at(500), { provider: "openai", cachedTokens: 800 })!;
    const claude = computeCost("claude-sonnet-4-5", 1500, 300, at(1800), { provider: "anthropic" })!;
    expect(gpt).toBeLessThan(computeCost("gpt-4o", 1000, 200)!); // cache reads are cheaper
    expect(run).toMatchObject({ llm_calls: 3, prompt_tokens: 2550, completion_tokens: 505, total_tokens: 3055, cost_source: "computed", model: "gpt-4o" });
    expect(run.cost_usd).toBeCloseTo(gpt + claude, 9);

    const res = await fetch(`${srv.url}/api/runs/react-1/spans`, bearer(acct.key));
    expect(res.status).toBe(200);
    const { spans } = (await res.json()) as { spans: Record<string, any>[] };
    expect(spans.map((s) => [s.span_id, s.parent_span_id, s.kind, s.name, s.status])).toEqual([
      ["a1", null, "step", "agent", "ok"],
      ["l1", "a1", "llm", "chat", "ok"],
      ["t1", "a1", "tool", "orders_api", "ok"],
      ["l2", "a1", "llm", "chat", "ok"],
      ["l3", "a1", "llm", "chat", "ok"],
    ]);
    expect(spans[1]).toMatchObject({ model: "gpt-4o", provider: "openai", prompt_tokens: 1000, completion_tokens: 200, cached_tokens: 800, total_tokens: 1200, duration_ms: 480, output_preview: "I will look it up" });
    expect(spans[1]!.input_preview).toContain("Where is my order?");
    expect(spans[1]!.cost_usd).toBeCloseTo(gpt, 9);
    expect(spans[2]).toMatchObject({ input_preview: '{"id": 1234}', output_preview: "shipped", duration_ms: 300 });
    expect(spans[3]).toMatchObject({ model: "claude-sonnet-4-5", started_at: at(900), ended_at: at(1800), duration_ms: 900 });
    expect(spans[4]).toMatchObject({ model: "in-house-model-7", cost_usd: null });

    // Paged: two at a time, in the same order.
    const paged: string[] = [];
    let after: string | null = null;
    do {
      const page = (await (await fetch(`${srv.url}/api/runs/react-1/spans?limit=2${after ? `&after=${after}` : ""}`, bearer(acct.key))).json()) as { spans: { span_id: string }[]; next_after: string | null };
      paged.push(...page.spans.map((s) => s.span_id));
      after = page.next_after;
    } while (after);
    expect(paged).toEqual(["a1", "l1", "t1", "l2", "l3"]);
  });

  it("llm_calls has one row per call, so costs split by model even within one run; a replayed batch changes nothing", async () => {
    const events = reactRun("react-2");
    expect((await post(events)).status).toBe(207);
    await waitForRun(srv.url, acct.key, "react-2", (b) => b.run.event_count === events.length);
    expect((await post(events)).status).toBe(207); // the client retries the whole batch
    const again = await waitForRun(srv.url, acct.key, "react-2", (b) => b.run.event_count === events.length);
    expect(again.run).toMatchObject({ llm_calls: 3, prompt_tokens: 2550 });
    const rows = await srv.ports.clickhouse.query<{ model: string; calls: string | number; cost: number }>(
      `SELECT model, count() AS calls, sum(cost_usd) AS cost FROM llm_calls FINAL
       WHERE user_id = {u:UInt64} AND sdk_run_id = 'react-2' GROUP BY model ORDER BY model`,
      { u: acct.id },
    );
    expect(rows.map((r) => [r.model, Number(r.calls)])).toEqual([["claude-sonnet-4-5", 1], ["gpt-4o", 1], ["in-house-model-7", 1]]);
    const [claudeRow] = await srv.ports.clickhouse.query<{ started: string; ended: string; duration_ms: string | number; parent: string; agent: string }>(
      `SELECT toString(started_at) AS started, toString(ended_at) AS ended, duration_ms, parent_span_id AS parent, agent_name AS agent
       FROM llm_calls FINAL WHERE user_id = {u:UInt64} AND sdk_run_id = 'react-2' AND model = 'claude-sonnet-4-5'`,
      { u: acct.id },
    );
    expect(claudeRow).toMatchObject({ started: "2026-11-24 09:00:00.900", ended: "2026-11-24 09:00:01.800", parent: "a1", agent: "researcher" });
    expect(Number(claudeRow!.duration_ms)).toBe(900);
    const gpt = computeCost("gpt-4o", 1000, 200, at(500), { provider: "openai", cachedTokens: 800 })!;
    const claude = computeCost("claude-sonnet-4-5", 1500, 300, at(1800), { provider: "anthropic" })!;
    expect(rows.find((r) => r.model === "gpt-4o")!.cost).toBeCloseTo(gpt, 9);

    // /costs and budgets: the two runs so far each split between their models (the run_end's "gpt-4o", 99 USD is not counted).
    const groups = await costGroups(srv.ports.clickhouse, acct.id, { from: "2026-11-24", to: "2026-11-24" });
    expect(groups.map((g) => [g.agent_name, g.model, g.runs, g.prompt_tokens])).toEqual([
      ["researcher", "claude-sonnet-4-5", 2, 3000],
      ["researcher", "gpt-4o", 2, 2000],
      ["researcher", "in-house-model-7", 2, 100],
    ]);
    expect(groups.find((g) => g.model === "claude-sonnet-4-5")!.cost_usd).toBeCloseTo(2 * claude, 9);
    expect((await agentMonthSpend(srv.ports.clickhouse, acct.id, ["researcher"], new Date(at(0)))).get("researcher")).toBeCloseTo(2 * (gpt + claude), 9);
  });

  it("a call that lands after run_end (a resumed run) still counts; events without span ids pair as before", async () => {
    const id = "resumed-1";
    expect((await post([
      { sdk_run_id: id, event_type: "run_start", agent_name: "resumer", occurred_at: at(0), payload: {} },
      { sdk_run_id: id, event_type: "run_end", occurred_at: at(100), payload: { prompt_tokens: 115, completion_tokens: 30, model: "gpt-4o" } },
    ])).status).toBe(207);
    const before = await waitForRun(srv.url, acct.key, id, (b) => b.run.event_count === 2);
    expect(before.run).toMatchObject({ llm_calls: 0, prompt_tokens: 115, completion_tokens: 30 });
    expect((await post([
      { sdk_run_id: id, event_type: "step", occurred_at: at(200), payload: { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 343, completion_tokens: 69 } },
      { sdk_run_id: id, event_type: "step", occurred_at: at(210), payload: { node_name: "plain", phase: "start" } },
      { sdk_run_id: id, event_type: "step", occurred_at: at(260), payload: { node_name: "plain", phase: "end" } },
    ])).status).toBe(207);
    const after = await waitForRun(srv.url, acct.key, id, (b) => b.run.event_count === 5);
    expect(after.run).toMatchObject({ llm_calls: 1, prompt_tokens: 343, completion_tokens: 69, total_tokens: 412 });
    const { spans } = (await (await fetch(`${srv.url}/api/runs/${id}/spans`, bearer(acct.key))).json()) as { spans: Record<string, any>[] };
    expect(spans.map((s) => [s.kind, s.name, s.duration_ms])).toEqual([["llm", "chat", 0], ["step", "plain", 50]]);
  });

  it("a span carries the first 2,000 characters of a long error; the end event keeps it whole", async () => {
    const long = "E".repeat(10 * 1024);
    const events = [
      { event_type: "run_start", sdk_run_id: "long-error", agent_name: "a", occurred_at: at(0), payload: {} },
      { event_type: "tool_call", sdk_run_id: "long-error", span_id: "t1", occurred_at: at(10), payload: { tool_name: "x", phase: "end", error: long } },
      { event_type: "run_end", sdk_run_id: "long-error", occurred_at: at(20), payload: {} },
    ];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events }))).status).toBe(207);
    const { events: stored } = await waitForRun(srv.url, acct.key, "long-error", (b) => b.run.status === "success");
    const spans = (await (await fetch(`${srv.url}/api/runs/long-error/spans`, bearer(acct.key))).json()) as { spans: { span_id: string; error: string }[] };
    const t1 = spans.spans.find((x) => x.span_id === "t1")!;
    expect(t1.error.length).toBe(ERROR_PREVIEW_CHARS);
    expect(t1.error.endsWith("…")).toBe(true);
    expect(stored.find((e) => e.span_id === "t1")!.payload.error).toBe(long);
  });

  it("a run of 3,000 spans with 10 KiB errors: its page stays small (the tree is read after it, without payloads); /spans answers from cut values", async () => {
    const error = "E".repeat(10 * 1024);
    const events: Record<string, unknown>[] = [{ event_type: "run_start", sdk_run_id: "heavy-run", agent_name: "a", occurred_at: at(0), payload: {} }];
    for (let i = 0; i < 3_000; i++) events.push({ event_type: "tool_call", sdk_run_id: "heavy-run", span_id: `h${i}`, occurred_at: at(10 + i), payload: { tool_name: "x", phase: "end", error } });
    for (let i = 0; i < events.length; i += 80) {
      expect((await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: events.slice(i, i + 80) }))).status).toBe(207);
    }
    await waitForRun(srv.url, acct.key, "heavy-run", (b) => b.run.event_count === events.length, 60_000);
    const jar = await loginJar(srv.url, acct.email);
    const page = await (await jar.fetch(`${srv.url}/dashboard/heavy-run`)).text();
    expect(page.length).toBeLessThan(100 * 1024);
    expect(page).not.toContain("data-span-id=");
    const listed = await (await jar.fetch(`${srv.url}/dashboard/heavy-run?static=1`)).text();
    expect(listed).toMatch(/The first 200 of 3,000 spans/);
    expect((listed.match(/data-span-id=/g) ?? []).length).toBe(200);
    const tree = (await (await jar.fetch(`${srv.url}/dashboard/heavy-run/tree?limit=5000`)).json()) as { total: number; spans: { status: string }[]; next_after: string | null };
    expect([tree.total, tree.spans.length, tree.next_after]).toEqual([3_000, 3_000, null]);
    expect(tree.spans.every((s) => s.status === "error")).toBe(true);
    expect(JSON.stringify(tree).length).toBeLessThan(3_000 * 300); // no payloads: no errors' text
    const one = (await (await fetch(`${srv.url}/api/runs/heavy-run/spans?limit=1`, bearer(acct.key))).json()) as { spans: { error: string }[]; next_after: string };
    expect(one.spans).toHaveLength(1);
    expect(one.spans[0]!.error).toHaveLength(ERROR_PREVIEW_CHARS);
    expect(one.next_after).toBe("h0");
  }, 120_000);

  it("refuses bad span ids and kinds with a 422 naming the field", async () => {
    const one = (body: unknown) => fetch(`${srv.url}/api/ingest`, json(acct.key, body));
    const long = await one({ sdk_run_id: "bad-1", event_type: "step", span_id: "x".repeat(65), payload: { node_name: "n", phase: "start" } });
    expect(long.status).toBe(422);
    expect(await long.json()).toMatchObject({ error: { field: "span_id" } });
    const kind = await one({ sdk_run_id: "bad-1", event_type: "step", payload: { node_name: "n", phase: "start", kind: "gpu" } });
    expect(kind.status).toBe(422);
    expect(await kind.json()).toMatchObject({ error: { field: "payload.kind" } });
    const tokens = await one({ sdk_run_id: "bad-1", event_type: "step", payload: { node_name: "n", phase: "end", kind: "llm", cached_tokens: -1 } });
    expect(tokens.status).toBe(422);
    expect(await tokens.json()).toMatchObject({ error: { field: "payload.cached_tokens" } });
    expect((await fetch(`${srv.url}/api/runs/nope/spans`, bearer(acct.key))).status).toBe(404);
    expect((await fetch(`${srv.url}/api/runs/react-1/spans?after=zzz`, bearer(acct.key))).status).toBe(422);
  });

  it("an LLM call that counts its cache reads and writes apart from prompt_tokens (as Anthropic's API reports them) is stored and priced, not dead-lettered", async () => {
    // Anthropic's usage: input_tokens 12, cache_read_input_tokens 9,000, cache_creation_input_tokens 500. The price
    // table takes cache tokens as parts of the input, so these counts are priced as 9,512 input tokens.
    const at0 = new Date().toISOString();
    const base = { kind: "llm", node_name: "chat", phase: "end", model: "claude-sonnet-4-5", provider: "anthropic", prompt_tokens: 12, completion_tokens: 40 };
    const events = [
      { sdk_run_id: "cache-apart", event_type: "run_start", agent_name: "cache-agent", occurred_at: at0, payload: {} },
      { sdk_run_id: "cache-apart", event_type: "step", span_id: "c1", occurred_at: at0, payload: { ...base, cached_tokens: 9000, cache_write_tokens: 500 } },
      { sdk_run_id: "cache-apart", event_type: "step", span_id: "c2", occurred_at: at0, payload: { ...base, cached_tokens: 9000 } },
    ];
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events }));
    expect(res.status).toBe(207);
    expect(await res.json()).toMatchObject({ accepted: 3, rejected: 0 });
    const { run } = await waitForRun(srv.url, acct.key, "cache-apart", (b) => b.run.llm_calls === 2);
    const { spans } = (await (await fetch(`${srv.url}/api/runs/cache-apart/spans`, bearer(acct.key))).json()) as { spans: Record<string, any>[] };
    const c1 = spans.find((x) => x.span_id === "c1")!;
    const c2 = spans.find((x) => x.span_id === "c2")!;
    expect(c1).toMatchObject({ prompt_tokens: 12, cached_tokens: 9000, completion_tokens: 40 });
    const priced = (usage: Record<string, number>) => calcPrice(usage, "claude-sonnet-4-5", { providerId: "anthropic", timestamp: new Date(at0) })!.total_price;
    expect(c1.cost_usd).toBeCloseTo(priced({ input_tokens: 9512, cache_read_tokens: 9000, cache_write_tokens: 500, output_tokens: 40 }), 9);
    expect(c2.cost_usd).toBeCloseTo(priced({ input_tokens: 9012, cache_read_tokens: 9000, output_tokens: 40 }), 9);
    expect(c1.cost_usd).toBeGreaterThan(c2.cost_usd);
    expect(run.cost_usd).toBeCloseTo(c1.cost_usd + c2.cost_usd, 9);
    expect(run.cost_source).toBe("computed");
  });

  it("hostile span ids, counts and content are refused or repaired, another tenant's ids reach nothing of ours, and a valid call afterwards is stored and pushed live", async () => {
    const one = (key: string, body: unknown) => fetch(`${srv.url}/api/ingest`, json(key, body));
    const call = (extra: Record<string, unknown>, payload: Record<string, unknown> = {}) => ({
      sdk_run_id: "react-1", event_type: "step", span_id: `h-${randomUUID()}`, parent_span_id: "a1",
      payload: { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 10, completion_tokens: 2, ...payload }, ...extra,
    });
    const refused: [unknown, string][] = [
      [call({ span_id: "bad\u0000id" }), "span_id"],
      [call({ parent_span_id: "\ud800" }), "parent_span_id"],
      [call({}, { prompt_tokens: 2 ** 60 }), "payload.prompt_tokens"],
      [call({}, { completion_tokens: -1 }), "payload.completion_tokens"],
      [call({}, { cost_usd: -0.5 }), "payload.cost_usd"],
      [call({}, { reasoning_tokens: 1.5 }), "payload.reasoning_tokens"],
    ];
    for (const [body, field] of refused) {
      const res = await one(acct.key, body);
      expect(res.status, field).toBe(422);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
    }
    let deep: unknown = "bottom";
    for (let i = 0; i < 70; i++) deep = { d: deep };
    const tooDeep = await one(acct.key, call({}, { input: deep }));
    expect(tooDeep.status).toBe(422);

    // Another tenant sends a call into "their" react-1 with our span ids: it lands in their run only.
    const other = await srv.account();
    expect((await one(other.key, call({ span_id: "l1" }))).status).toBe(202);
    const theirs = await waitForRun(srv.url, other.key, "react-1", (b) => b.run.llm_calls === 1);
    expect(theirs.run).toMatchObject({ prompt_tokens: 10, completion_tokens: 2 });

    // Content with NUL and lone surrogates is repaired, spans whose parents point at each other do not hang the
    // tree, and a valid call sent afterwards is stored, counted and broadcast on our channel.
    const frames: string[] = [];
    const stop = await srv.ports.pubsub.subscribePrefix(`user.${acct.id}`, (_c, m) => frames.push(m));
    const before = (await waitForRun(srv.url, acct.key, "react-1", () => true)).run;
    const batch = [
      call({ span_id: "loop-a", parent_span_id: "loop-b" }, { model: "gpt\u0000-4o", output: "half a pair \ud83d", prompt_tokens: 1, completion_tokens: 1 }),
      call({ span_id: "loop-b", parent_span_id: "loop-a" }, { prompt_tokens: 1, completion_tokens: 1 }),
      call({ span_id: "valid-after" }, { prompt_tokens: 100, completion_tokens: 20 }),
    ];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: batch }))).status).toBe(207);
    const after = await waitForRun(srv.url, acct.key, "react-1", (b) => b.run.llm_calls === before.llm_calls + 3);
    expect(after.run.prompt_tokens).toBe(before.prompt_tokens + 102);
    const { spans } = (await (await fetch(`${srv.url}/api/runs/react-1/spans`, bearer(acct.key))).json()) as { spans: Record<string, any>[] };
    expect(spans.filter((x) => x.span_id === "l1")).toHaveLength(1); // the other tenant's "l1" is not ours
    expect(spans.find((x) => x.span_id === "loop-a")).toMatchObject({ model: "gpt\ufffd-4o", output_preview: "half a pair \ufffd" });
    expect(spans.find((x) => x.span_id === "valid-after")).toMatchObject({ parent_span_id: "a1", prompt_tokens: 100, status: "ok" });
    await expect.poll(() => frames.some((f) => f.includes("valid-after")), { timeout: 10_000 }).toBe(true);
    expect(frames.some((f) => f.includes(other.key) || f.includes(`"user_id":${other.id}`))).toBe(false);
    await stop();
  });
});
