/**
 * `model:` over real HTTP, runs sent through the ingest API and stored by the pipeline, which folds the models of a
 * run's LLM calls into its `models` (plugins/llm-calls.ts): a model named only by a call nested in the run, models
 * of calls sent in two batches, negation, the run's own model (run_end's), and another project's runs with the same
 * ids and models never listed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;

const T0 = Date.parse("2026-11-21T08:00:00Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();
const call = (id: string, ms: number, model: string, span: string, parent = "") => ({
  sdk_run_id: id, event_type: "step", occurred_at: at(ms), span_id: span, ...(parent ? { parent_span_id: parent } : {}),
  payload: { kind: "llm", node_name: "chat", phase: "end", model, prompt_tokens: 10, completion_tokens: 5 },
});
const start = (id: string, ms = 0) => ({ sdk_run_id: id, event_type: "run_start", agent_name: "modeller", occurred_at: at(ms), payload: {} });
const end = (id: string, ms: number, model?: string) => ({ sdk_run_id: id, event_type: "run_end", occurred_at: at(ms), payload: model ? { model } : {} });

async function send(key: string, events: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }));
  const body = (await res.json()) as { rejected: number; results: unknown[] };
  expect(body.rejected, JSON.stringify(body.results).slice(0, 500)).toBe(0);
}
async function listed(q: string, key = alice.key): Promise<string[]> {
  const res = await fetch(`${srv.url}/api/runs?limit=500&q=${encodeURIComponent(q)}`, bearer(key));
  const body = (await res.json()) as { runs: { sdk_run_id: string }[] };
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.runs.map((r) => r.sdk_run_id).sort();
}
const eventCounts = async (key: string) => {
  const res = await fetch(`${srv.url}/api/runs?limit=500&q=agent:modeller`, bearer(key));
  const { runs } = (await res.json()) as { runs: { sdk_run_id: string; event_count: number }[] };
  return Object.fromEntries(runs.map((r) => [r.sdk_run_id, r.event_count]));
};

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  [alice, bob] = [await srv.account(), await srv.account()];
  await send(alice.key, [
    // The model is named only by an LLM call nested under a tool span, not by the run's own events.
    start("nested"), { sdk_run_id: "nested", event_type: "step", occurred_at: at(5), span_id: "tool-1", payload: { kind: "agent", node_name: "researcher", phase: "start" } },
    call("nested", 20, "gpt-4o-mini", "llm-1", "tool-1"), end("nested", 30),
    // The first of two batches: the second (below) adds another model to the stored run.
    start("two-batches"), call("two-batches", 10, "claude-3-5-sonnet", "c-1"),
    // No LLM call: the run's own model, from its run_end.
    start("own-model"), end("own-model", 10, "gpt-4o"),
    start("no-model"), end("no-model", 10),
  ]);
  await until("the first batch stored", () => eventCounts(alice.key), (c) => c["two-batches"] === 2 && c["no-model"] === 2);
  await send(alice.key, [call("two-batches", 40, "gpt-4o-mini", "c-2"), call("two-batches", 45, "claude-3-5-sonnet", "c-3"), end("two-batches", 50)]);
  // Bob's runs have the same ids and models Alice never used.
  await send(bob.key, [start("nested"), call("nested", 20, "bob-model", "b-1"), end("nested", 30), start("two-batches"), call("two-batches", 10, "gpt-4o-mini", "b-2")]);
  await until("every run stored", async () => [await eventCounts(alice.key), await eventCounts(bob.key)],
    ([a, b]) => a["two-batches"] === 5 && b["nested"] === 3 && b["two-batches"] === 2);
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

describe("model: reads the models of a run's LLM calls", () => {
  it("lists a run whose model is only on a nested LLM call", async () => {
    expect(await listed("model:gpt-4o-mini")).toEqual(["nested", "two-batches"]);
  });

  it("keeps the models of calls sent in two batches", async () => {
    expect(await listed("model:claude-3-5-sonnet")).toEqual(["two-batches"]);
    expect(await listed("model:gpt-4o-mini -model:gpt-4o-mini,claude-3-5-sonnet")).toEqual([]);
    const res = await fetch(`${srv.url}/api/runs?limit=500&q=agent:modeller`, bearer(alice.key));
    const { runs } = (await res.json()) as { runs: { sdk_run_id: string; llm_calls: number }[] };
    expect(runs.find((r) => r.sdk_run_id === "two-batches")?.llm_calls).toBe(3);
  });

  it("matches the run's own model and any of a list", async () => {
    expect(await listed("model:gpt-4o")).toEqual(["own-model"]);
    expect(await listed("model:gpt-4o,claude-3-5-sonnet")).toEqual(["own-model", "two-batches"]);
  });

  it("negated, leaves out every run that used the model", async () => {
    expect(await listed("agent:modeller -model:gpt-4o-mini")).toEqual(["no-model", "own-model"]);
    expect(await listed("agent:modeller -model:claude-3-5-sonnet,gpt-4o")).toEqual(["nested", "no-model"]);
  });

  it("never lists another project's runs", async () => {
    expect(await listed("model:bob-model")).toEqual([]);
    expect(await listed("model:bob-model", bob.key)).toEqual(["nested"]);
    expect(await listed("model:gpt-4o-mini", bob.key)).toEqual(["two-batches"]);
    expect(await listed("model:claude-3-5-sonnet", bob.key)).toEqual([]);
  });
});
