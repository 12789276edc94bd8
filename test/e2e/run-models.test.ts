/**
 * `model:` over real HTTP, runs sent through the ingest API and stored by the pipeline, which folds the models of a
 * run's LLM calls into its `models` (plugins/llm-calls.ts): a model named only by a call nested in the run, models
 * of calls sent in two batches, negation, the run's own model (run_end's), and another project's runs with the same
 * ids and models never listed. And the models in what a user reads: GET /api/runs and /api/runs/{id}, the export (JSON
 * Lines and CSV), the MCP tools search_runs and get_run, the OpenAPI document's Run, and the filter bar's values.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;

// Recent: the filter bar offers the models of the last days' runs.
const T0 = Date.now() - 3_600_000;
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

describe("a run's models in what a user reads", () => {
  const get = async (path: string, key = alice.key) => {
    const res = await fetch(`${srv.url}${path}`, bearer(key));
    expect(res.status, path).toBe(200);
    return res;
  };
  const MODELS = { nested: ["gpt-4o-mini"], "two-batches": ["claude-3-5-sonnet", "gpt-4o-mini"], "own-model": [], "no-model": [] };

  it("GET /api/runs and GET /api/runs/{id} list the models of the run's LLM calls, nested ones too", async () => {
    const { runs } = (await (await get("/api/runs?limit=500&q=agent:modeller")).json()) as { runs: { sdk_run_id: string; models: string[] }[] };
    expect(Object.fromEntries(runs.map((r) => [r.sdk_run_id, r.models]))).toEqual(MODELS);
    expect(((await (await get("/api/runs/nested")).json()) as { run: { models: string[] } }).run.models).toEqual(["gpt-4o-mini"]);
    expect(((await (await get("/api/runs/nested", bob.key)).json()) as { run: { models: string[] } }).run.models).toEqual(["bob-model"]);
  });

  it("the export carries them: a field of each JSON line, a CSV column of JSON", async () => {
    const lines = (await (await get("/api/runs/export?format=jsonl&q=agent:modeller")).text()).trim().split("\n").map((l) => JSON.parse(l) as { sdk_run_id: string; models: string[] });
    expect(Object.fromEntries(lines.map((r) => [r.sdk_run_id, r.models]))).toEqual(MODELS);
    const [head, ...rows] = (await (await get("/api/runs/export?format=csv&q=agent:modeller")).text()).trim().split("\r\n").map((l) => l.split(","));
    const at = (name: string) => head!.indexOf(name);
    expect(at("models")).toBe(at("model") + 1);
    const cell = (id: string) => rows.find((r) => r[at("sdk_run_id")] === id)![at("models")];
    expect(cell("nested")).toBe('"[""gpt-4o-mini""]"');
    expect(cell("no-model")).toBe("[]");
  });

  it("MCP search_runs and get_run carry them", async () => {
    const client = new Client({ name: "runwatch-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${alice.key}` } } }));
    try {
      const body = async (name: string, args: Record<string, unknown>) => {
        const r = await client.callTool({ name, arguments: args });
        expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
        return JSON.parse((r.content as { text: string }[])[0]!.text);
      };
      const found = await body("search_runs", { filter: "model:claude-3-5-sonnet" });
      expect(found.runs.map((r: { sdk_run_id: string; models: string[] }) => [r.sdk_run_id, r.models])).toEqual([["two-batches", MODELS["two-batches"]]]);
      expect((await body("get_run", { sdk_run_id: "nested" })).run.models).toEqual(["gpt-4o-mini"]);
    } finally {
      await client.close();
    }
  });

  it("the OpenAPI document's Run has them", async () => {
    const doc = (await (await fetch(`${srv.url}/api/openapi.json`)).json()) as { components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> } };
    const run = doc.components.schemas.Run!;
    expect(run.required).toContain("models");
    expect(JSON.stringify(run.properties.models)).toContain('"array"');
  });

  it("the filter bar completes model: from the runs' models, the project's only", async () => {
    const values = async (key: string, prefix: string) =>
      ((await (await get(`/api/runs/filter-values?field=model&prefix=${prefix}`, key)).json()) as { values: string[] }).values;
    expect(await values(alice.key, "")).toEqual(["claude-3-5-sonnet", "gpt-4o", "gpt-4o-mini"]);
    expect(await values(alice.key, "GPT-4O-")).toEqual(["gpt-4o-mini"]);
    expect(await values(bob.key, "")).toEqual(["bob-model", "gpt-4o-mini"]);
  });
});
