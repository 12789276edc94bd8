/**
 * What the filter bar completes (GET /api/runs/filter-values and the dashboard's /runs/filter-values; docs/API.md):
 * over real HTTP, each field's values as the project's runs carry them, by prefix in any case, alphabetically and
 * bounded; another project's values never; a bad field or an over-long prefix a 422 naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, loginJar, startTestServer, until, type TestServer } from "./harness.js";

let srv: TestServer;
let owner: { id: number; email: string; key: string };
let otherKey: string;

const values = async (query: string, key = owner.key) => {
  const res = await fetch(`${srv.url}/api/runs/filter-values?${query}`, bearer(key));
  return { status: res.status, body: await res.json() };
};

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  owner = await srv.account();
  otherKey = (await srv.account()).key;
  const run = (id: string, agent: string, extra: Record<string, unknown>) => [
    { event_type: "run_start", sdk_run_id: id, agent_name: agent, payload: {}, ...extra },
    { event_type: "step", sdk_run_id: id, span_id: `${id}-llm`, payload: { node_name: "answer", phase: "end", kind: "llm", model: `model-of-${agent}`, prompt_tokens: 1, completion_tokens: 1 } },
    { event_type: "run_end", sdk_run_id: id, payload: { output: "ok" } },
  ];
  const events = [
    ...run("v-1", "Refund-Bot", { tags: ["vip", "beta"], metadata: { customer: "acme", tier: 2 }, environment: "production", release: "v1.2", end_user: "cust-42" }),
    ...run("v-2", "refund-helper", { tags: ["Vintage"], metadata: { customer: "Acme Corp", region: "eu" }, environment: "staging", release: "v1.3", end_user: "cust-7" }),
    ...run("v-3", "search", { tags: [], metadata: {}, environment: "production" }),
  ];
  for (const [key, batch] of [[owner.key, events], [otherKey, run("w-1", "rival-bot", { tags: ["vip-secret"], metadata: { customer: "globex" }, environment: "prod-secret" })]] as const) {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: batch }));
    expect([res.status, (await res.json()).rejected]).toEqual([207, 0]);
  }
  await until("the runs are stored", async () => (await (await fetch(`${srv.url}/api/runs?status=success`, bearer(owner.key))).json()).runs.length, (n) => n === 3);
  await fetch(`${srv.url}/api/scores`, json(owner.key, { sdk_run_id: "v-1", name: "correctness", value: 0.5 }));
}, 90_000);
afterAll(async () => {
  await srv?.close();
});

describe("GET /api/runs/filter-values", () => {
  it("answers each field's values in the project, by prefix in any case", async () => {
    const cases: [string, string[]][] = [
      ["field=agent", ["Refund-Bot", "refund-helper", "search"].sort()],
      ["field=agent&prefix=REF", ["Refund-Bot", "refund-helper"].sort()],
      ["field=tag&prefix=v", ["Vintage", "vip"].sort()],
      ["field=tag", ["Vintage", "beta", "vip"].sort()],
      ["field=meta", ["customer", "region", "tier"]],
      ["field=meta.customer&prefix=ac", ["Acme Corp", "acme"].sort()],
      ["field=meta.tier", ["2"]],
      ["field=env", ["production", "staging"]],
      ["field=release&prefix=v1.", ["v1.2", "v1.3"]],
      ["field=user", ["cust-42", "cust-7"]],
      ["field=model&prefix=model-of-r", ["model-of-Refund-Bot", "model-of-refund-helper"].sort()],
      ["field=score", ["correctness"]],
      ["field=status&prefix=s", ["success"]],
      ["field=agent&limit=1", [["Refund-Bot", "refund-helper", "search"].sort()[0]!]],
    ];
    for (const [query, expected] of cases) {
      const { status, body } = await until(query, () => values(query), (v) => v.status !== 200 || v.body.values.length >= expected.length, 10_000);
      expect([query, status, body.values]).toEqual([query, 200, expected]);
    }
  });

  it("never answers another project's values", async () => {
    expect((await values("field=tag")).body.values).not.toContain("vip-secret");
    expect((await values("field=env&prefix=prod")).body.values).toEqual(["production"]);
    expect((await values("field=meta.customer")).body.values).not.toContain("globex");
    expect((await values("field=agent", otherKey)).body.values).toEqual(["rival-bot"]);
  });

  it("refuses a field it does not complete, an over-long prefix or limit, with the parameter named", async () => {
    for (const [query, field] of [["", "field"], ["field=colour", "field"], ["field=meta.", "field"], [`field=tag&prefix=${"x".repeat(201)}`, "prefix"], ["field=tag&limit=21", "limit"], ["field=tag&field=env", "field"]]) {
      const { status, body } = await values(query!);
      expect([query!.slice(0, 30), status, body.error.field]).toEqual([query!.slice(0, 30), 422, field]);
    }
  });

  it("serves the dashboard's filter bar with the member's session", async () => {
    const jar = await loginJar(srv.url, owner.email);
    const res = await jar.fetch(`${srv.url}/runs/filter-values?field=tag&prefix=vi`, { headers: { accept: "application/json" } });
    expect(res.status).toBe(200);
    expect((await res.json()).values).toEqual(["Vintage", "vip"].sort());
  });
});
