/**
 * GET /api/openapi.json as a tool would use it: a valid OpenAPI 3.1 document (checked by
 * @seriousme/openapi-schema-validator) naming every public path, with the bearer scheme and the error body; then real
 * answers of every operation — successes and refusals — validated against the document's schema for their status
 * with Ajv (JSON Schema 2020-12, the dialect of OpenAPI 3.1). A handler whose body drifts from the document fails here.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addVersion, createAgent } from "../../stores/agent-registry.js";
import { setGateRule } from "../../stores/activation-gate.js";
import { bearer, json, loginJar, startTestServer, until, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, hexId } from "./otlp-fixtures.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;

let srv: TestServer;
let alice: TestAccount;
let doc: Record<string, any>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  alice = await srv.account();
  const res = await fetch(`${srv.url}/api/openapi.json`); // no key: the document is public
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("application/json");
  doc = (await res.json()) as Record<string, any>;
  ajv.addSchema({ ...doc, $id: "runwatch-openapi" });
});
afterAll(async () => {
  await srv?.close();
});

const pointer = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");
const checked = new Set<string>();

/** Validates a real answer against the document: its status must be listed for the operation and its body fit. */
async function conforms(path: string, method: string, res: Response): Promise<any> {
  const op = doc.paths[path]?.[method];
  expect(op, `${method} ${path} in the document`).toBeDefined();
  const status = String(res.status);
  const response = op.responses[status];
  expect(response, `${method.toUpperCase()} ${path} answered ${status}, which the document does not list`).toBeDefined();
  checked.add(`${method} ${path} ${status}`);
  const text = await res.text();
  if (!response.content) return text;
  const type = (res.headers.get("content-type") ?? "").split(";")[0]!;
  expect(Object.keys(response.content), `${method} ${path} ${status} content type`).toContain(type);
  if (type !== "application/json") return text; // a file (an export): its type is what the document lists
  const body = JSON.parse(text);
  const validate = ajv.getSchema(`runwatch-openapi#/paths/${pointer(path)}/${method}/responses/${status}/content/${pointer(type)}/schema`)!;
  expect(validate(body), `${method.toUpperCase()} ${path} ${status}: ${JSON.stringify(validate.errors)}\n${text.slice(0, 500)}`).toBe(true);
  return body;
}

describe("OpenAPI document", () => {
  it("is valid OpenAPI 3.1, generated with every public path, the bearer scheme and the error body", async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe("3.1.0");
    for (const p of [
      "/api/ingest", "/api/ingest/batch", "/api/runs", "/api/runs/{sdk_run_id}", "/api/runs/{sdk_run_id}/spans", "/api/runs/{sdk_run_id}/graph", "/api/runs/{sdk_run_id}/scores",
      "/api/runs/{sdk_run_id}/input", "/api/sessions", "/api/sessions/{session_id}", "/api/scores", "/api/agents/{name}/config", "/api/realtime/token", "/v1/traces",
    ]) expect(doc.paths, p).toHaveProperty([p]);
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.security).toEqual([{ bearer: [] }]);
    expect(doc.components.schemas.Error.properties.error.required).toEqual(["code", "message"]);
    // From the Schemas the handlers decode with: the ingest envelope's limits and the score's value union.
    expect(doc.components.schemas.Event.properties.sdk_run_id).toMatchObject({ minLength: 1, maxLength: 256 });
    expect(doc.components.schemas.Event.properties.payload.anyOf).toHaveLength(7);
    expect(doc.components.schemas.ScoreInput.properties.value.anyOf.map((s: any) => s.type).sort()).toEqual(["boolean", "number", "string"]);
    // Every body is read the same way: malformed (400), over its limit (413), not JSON (415) are each possible.
    const unlisted = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.entries<any>(ops)
      .filter(([, op]) => op.requestBody).flatMap(([method, op]) => ["400", "413", "415"].filter((s) => !op.responses[s]).map((s) => `${method} ${path} ${s}`)));
    expect(unlisted).toEqual([]);
  });

  it("real answers of every operation fit the document", async () => {
    const key = alice.key;
    const post = (path: string, body: unknown, k: string | undefined = key) => fetch(`${srv.url}${path}`, json(k, body));
    const get = (path: string, k = key) => fetch(`${srv.url}${path}`, bearer(k));

    await conforms("/api/ingest", "post", await post("/api/ingest", { event_type: "run_start", sdk_run_id: "oa-1", agent_name: "doc-bot", session_id: "oa-s", payload: { input: { q: 1 } } }));
    await conforms("/api/ingest", "post", await post("/api/ingest", { event_type: "run_start", sdk_run_id: "", payload: {} }));
    await conforms("/api/ingest", "post", await post("/api/ingest", {}, undefined));
    await conforms("/api/ingest/batch", "post", await post("/api/ingest/batch", { events: [
      { event_type: "step", sdk_run_id: "oa-1", span_id: "l1", payload: { kind: "llm", node_name: "chat", phase: "start", model: "gpt-4o" } },
      { event_type: "step", sdk_run_id: "oa-1", span_id: "l1", payload: { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 5, completion_tokens: 2 } },
      { event_type: "human_input_requested", sdk_run_id: "oa-1", payload: { question: "Ship it?" } },
      { event_type: "nope", sdk_run_id: "oa-1", payload: {} },
    ] }));
    await conforms("/api/ingest/batch", "post", await post("/api/ingest/batch", { events: [] }));
    await waitForRun(srv.url, key, "oa-1", (b) => b.run.status === "waiting_for_input");

    await conforms("/api/runs", "get", await get("/api/runs?limit=5"));
    await conforms("/api/runs", "get", await get("/api/runs?status=bogus"));
    // The filter as read (a RunsFilter) and its sort are part of the answer.
    const filtered = await conforms("/api/runs", "get", await get(`/api/runs?sort=cost&order=asc&q=${encodeURIComponent('model:gpt-4o meta.tier>2 -tag:x cost<1 since:7d score.ok:* "ship it" is:judge')}`));
    expect(filtered.filter).toMatchObject({ model: ["gpt-4o"], since: "7d", text: ["ship it"], include_judge: true });
    await conforms("/api/runs", "get", await get(`/api/runs?q=${encodeURIComponent("colour:red")}`));
    await conforms("/api/runs", "get", await get("/api/runs", "0".repeat(64)));
    await conforms("/api/runs/{sdk_run_id}", "get", await get("/api/runs/oa-1"));
    await conforms("/api/runs/{sdk_run_id}", "get", await get("/api/runs/missing"));
    await conforms("/api/runs/{sdk_run_id}/spans", "get", await get("/api/runs/oa-1/spans"));
    await conforms("/api/runs/{sdk_run_id}/graph", "get", await get("/api/runs/oa-1/graph"));
    await conforms("/api/runs/{sdk_run_id}/graph", "get", await get("/api/runs/missing/graph"));
    const tree = await conforms("/api/runs/{sdk_run_id}/tree", "get", await get("/api/runs/oa-1/tree?limit=1"));
    await conforms("/api/runs/{sdk_run_id}/tree", "get", await get(`/api/runs/oa-1/tree?since=${tree.cursor}&n=${tree.n}`));
    await conforms("/api/runs/{sdk_run_id}/tree", "get", await get("/api/runs/oa-1/tree?since=nope&n=1"));
    await conforms("/api/runs/{sdk_run_id}/spans/{span_id}", "get", await get("/api/runs/oa-1/spans/l1"));
    await conforms("/api/runs/{sdk_run_id}/spans/{span_id}", "get", await get("/api/runs/oa-1/spans/nope"));
    await conforms("/api/runs/{sdk_run_id}/search", "get", await get("/api/runs/oa-1/search?q=chat"));
    await conforms("/api/runs/{sdk_run_id}/search", "get", await get("/api/runs/oa-1/search"));
    await conforms("/api/runs/{sdk_run_id}/input", "get", await get("/api/runs/oa-1/input"));
    await conforms("/api/runs/{sdk_run_id}/input", "post", await post("/api/runs/oa-1/input", { response: "yes", responded_by: "dana" }));
    await conforms("/api/runs/{sdk_run_id}/input", "get", await get("/api/runs/oa-1/input"));
    await conforms("/api/runs/{sdk_run_id}/input", "post", await post("/api/runs/missing/input", { response: "yes" }));
    await conforms("/api/scores", "post", await post("/api/scores", { sdk_run_id: "oa-1", name: "helpful", value: true, comment: "ok" }));
    await conforms("/api/scores", "post", await post("/api/scores", { sdk_run_id: "oa-1", name: "", value: 1 }));
    await conforms("/api/scores", "post", await post("/api/scores", { sdk_run_id: "missing", name: "x", value: 1 }));
    await conforms("/api/runs/{sdk_run_id}/scores", "get", await get("/api/runs/oa-1/scores"));
    await conforms("/api/scores/batch", "post", await post("/api/scores/batch", { scores: [{ sdk_run_id: "oa-1", name: "helpful", value: 1 }, { sdk_run_id: "missing", name: "x", value: 1 }, { sdk_run_id: "oa-1", name: "", value: 1 }] }));
    await conforms("/api/scores/batch", "post", await post("/api/scores/batch", { scores: [] }));
    await conforms("/api/sessions", "get", await get("/api/sessions"));
    await conforms("/api/sessions/{session_id}", "get", await get("/api/sessions/oa-s"));
    await conforms("/api/sessions/{session_id}", "get", await get("/api/sessions/none"));
    // The runs explorer: saved views, the chart, the filter bar's values, the export.
    const view = await post("/api/views", { name: "doc view", filter: "agent:doc-bot", columns: ["agent", "cost"] });
    const viewId = (await view.clone().json()).view.id as string;
    await conforms("/api/views", "post", view);
    await conforms("/api/views", "post", await post("/api/views", { name: "doc view" }));
    await conforms("/api/views", "post", await post("/api/views", { name: "x", filter: "colour:red" }));
    await conforms("/api/views", "get", await get("/api/views"));
    const del = () => fetch(`${srv.url}/api/views/${viewId}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    await conforms("/api/views/{id}", "delete", await del());
    await conforms("/api/views/{id}", "delete", await del());
    await conforms("/api/runs/chart", "get", await get("/api/runs/chart?q=agent%3Adoc-bot%20since%3A7d"));
    await conforms("/api/runs/chart", "get", await get("/api/runs/chart?q=colour%3Ared"));
    await conforms("/api/runs/filter-values", "get", await get("/api/runs/filter-values?field=agent&prefix=doc"));
    await conforms("/api/runs/filter-values", "get", await get("/api/runs/filter-values?field=colour"));
    await conforms("/api/runs/export", "get", await get("/api/runs/export?format=jsonl"));
    await conforms("/api/runs/export", "get", await get("/api/runs/export"));
    await conforms("/api/runs/export", "get", await get("/api/runs/export?format=xml"));
    // Saved queries of the query page, and a query's rows as a file.
    const saved = await post("/api/queries", { name: "doc query", sql: "SELECT agent_name, count() AS n FROM runs GROUP BY agent_name", params: { top: 5 }, description: "for the document" });
    const savedId = (await saved.clone().json()).query.id as string;
    await conforms("/api/queries", "post", saved);
    await conforms("/api/queries", "post", await post("/api/queries", { name: "doc query", sql: "SELECT 1" }));
    await conforms("/api/queries", "post", await post("/api/queries", { name: "x", sql: "" }));
    await conforms("/api/queries", "get", await get("/api/queries"));
    await conforms("/api/queries/{id}", "get", await get(`/api/queries/${savedId}`));
    await conforms("/api/queries/{id}", "get", await get("/api/queries/00000000-0000-0000-0000-000000000000"));
    const putQuery = (id: string, body: unknown) => fetch(`${srv.url}/api/queries/${id}`, { ...json(key, body), method: "PUT" });
    await conforms("/api/queries/{id}", "put", await putQuery(savedId, { name: "doc query, renamed", sql: "SELECT 2" }));
    await conforms("/api/queries/{id}", "put", await putQuery(savedId, { name: "doc query", sql: "SELECT 2", params: { "no good": 1 } }));
    await conforms("/api/queries/{id}", "put", await putQuery("00000000-0000-0000-0000-000000000000", { name: "doc query", sql: "SELECT 2" }));
    const delQuery = () => fetch(`${srv.url}/api/queries/${savedId}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    await conforms("/api/queries/{id}", "delete", await delQuery());
    await conforms("/api/queries/{id}", "delete", await delQuery());
    await conforms("/api/query/export", "post", await post("/api/query/export?format=jsonl", { sql: "SELECT agent_name, count() AS n FROM runs GROUP BY agent_name" }));
    await conforms("/api/query/export", "post", await post("/api/query/export", { sql: "SELECT run_id FROM runs", max_rows: 1 }));
    await conforms("/api/query/export", "post", await post("/api/query/export?format=xlsx", { sql: "SELECT 1" }));
    await conforms("/api/query/export", "post", await post("/api/query/export", { sql: "SELECT * FROM system.tables" }));

    await createAgent(srv.ports.sql, alice.id, { name: "config-bot" });
    await addVersion(srv.ports.sql, alice.id, "config-bot", { config: JSON.stringify({ temperature: 0.2 }), changelog: "first", activate: true });
    const cfg = await get("/api/agents/config-bot/config");
    const etag = cfg.headers.get("etag")!;
    await conforms("/api/agents/{name}/config", "get", cfg);
    await conforms("/api/agents/{name}/config", "get", await fetch(`${srv.url}/api/agents/config-bot/config`, { headers: { authorization: `Bearer ${key}`, "if-none-match": etag } }));
    await conforms("/api/agents/{name}/config", "get", await get("/api/agents/nobody/config"));
    await conforms("/api/baselines", "get", await get("/api/baselines?agent=config-bot&metric=latency_p95"));
    await conforms("/api/baselines", "get", await get("/api/baselines?agent=config-bot&metric=mood"));
    const slo = await post("/api/slos", { name: "doc slo", agent_name: "config-bot", objective: "latency", target: 0.95, threshold_seconds: 10, window_days: 7 });
    const sloId = (await slo.clone().json()).slo.id as number;
    await conforms("/api/slos", "post", slo);
    await conforms("/api/slos", "post", await post("/api/slos", { name: "doc slo", agent_name: "config-bot", objective: "latency", target: 2, window_days: 7 }));
    await conforms("/api/slos", "get", await get("/api/slos"));
    await conforms("/api/slos/{id}", "get", await get(`/api/slos/${sloId}`));
    await conforms("/api/slos/{id}", "get", await get("/api/slos/999999"));
    const delSlo = () => fetch(`${srv.url}/api/slos/${sloId}`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    await conforms("/api/slos/{id}", "delete", await delSlo());
    await conforms("/api/slos/{id}", "delete", await delSlo());

    await conforms("/api/datasets", "post", await post("/api/datasets", { name: "doc set", description: "for the document" }));
    await conforms("/api/datasets", "post", await post("/api/datasets", { name: "doc set" }));
    await conforms("/api/datasets", "get", await get("/api/datasets"));
    await conforms("/api/datasets/{name}/items", "post", await post("/api/datasets/doc%20set/items", { items: [{ id: "i1", input: { q: 1 }, expected_output: "a", metadata: { k: 1 } }] }));
    await conforms("/api/datasets/{name}/items", "post", await post("/api/datasets/doc%20set/items", { items: [{ id: "i1" }] }));
    await conforms("/api/datasets/{name}/items", "get", await get("/api/datasets/doc%20set/items?limit=1"));
    await conforms("/api/datasets/{name}/items", "get", await get("/api/datasets/doc%20set/items?version=7"));
    await conforms("/api/datasets/{name}", "get", await get("/api/datasets/doc%20set"));
    const patch = (body: unknown) => fetch(`${srv.url}/api/datasets/doc%20set`, { method: "PATCH", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    await conforms("/api/datasets/{name}", "patch", await patch({ description: "with a schema", input_schema: { type: "object" } }));
    await conforms("/api/datasets/{name}", "patch", await patch({ input_schema: { type: "string" } }));
    await conforms("/api/datasets/{name}", "patch", await patch({ input_schema: null }));
    await conforms("/api/datasets/{name}", "get", await get("/api/datasets/missing"));
    const upload = (body: string) => fetch(`${srv.url}/api/datasets/doc%20set/import`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" }, body });
    await conforms("/api/datasets/{name}/import", "post", await upload('{"input": 2}\n{"input": 3}'));
    await conforms("/api/datasets/{name}/import", "post", await upload('{"input": 2}\n{oops'));

    const experiment = await post("/api/experiments", { dataset: "doc set", name: "doc run", agent_name: "config-bot", config_version: 1, metadata: { k: 1 } });
    const experimentId = (await experiment.clone().json()).experiment.id as string;
    await conforms("/api/experiments", "post", experiment);
    await conforms("/api/experiments", "post", await post("/api/experiments", { dataset: "doc set", name: "doc run" }));
    await fetch(`${srv.url}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events: [
      { event_type: "run_start", sdk_run_id: "oa-x1", agent_name: "config-bot", payload: { experiment_id: experimentId, dataset_item_id: "i1", repetition: 1 } },
      { event_type: "run_end", sdk_run_id: "oa-x1", payload: { output: "a" } },
    ] }) });
    await waitForRun(srv.url, key, "oa-x1", (b) => b.run.status === "success");
    await conforms("/api/experiments", "get", await get("/api/experiments?dataset=doc%20set"));
    await conforms("/api/experiments", "get", await get("/api/experiments"));
    await conforms("/api/experiments/{id}", "get", await get(`/api/experiments/${experimentId}`));
    await conforms("/api/experiments/{id}", "get", await get("/api/experiments/00000000-0000-0000-0000-000000000000"));
    await conforms("/api/experiments/{id}/complete", "post", await post(`/api/experiments/${experimentId}/complete`, {}));
    await conforms("/api/experiments/{id}/complete", "post", await post("/api/experiments/00000000-0000-0000-0000-000000000000/complete", {}));

    // The activation gate: version 2 passes while it has no experiment; with one whose runs have no counted
    // "helpful" score, where version 1's experiment on the same dataset has one, it is refused (409 with the check).
    const activate = "/api/agents/{name}/configs/{version}/activate";
    await addVersion(srv.ports.sql, alice.id, "config-bot", { config: JSON.stringify({ temperature: 0.3 }), changelog: "second" });
    await setGateRule(srv.ports.sql, alice.id, "config-bot", { score_name: "helpful", max_drop: 0.1 }, alice.id);
    expect((await post("/api/scores", { sdk_run_id: "oa-x1", name: "helpful", value: 1 })).status).toBe(201);
    await conforms(activate, "post", await post("/api/agents/config-bot/configs/2/activate", {}));
    await conforms(activate, "post", await post("/api/agents/config-bot/configs/1/activate", {}));
    const second = (await (await post("/api/experiments", { dataset: "doc set", name: "doc run 2", agent_name: "config-bot", config_version: 2 })).json()).experiment.id as string;
    await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [
      { event_type: "run_start", sdk_run_id: "oa-x2", agent_name: "config-bot", config_version: 2, payload: { experiment_id: second, dataset_item_id: "i1", repetition: 1 } },
      { event_type: "run_end", sdk_run_id: "oa-x2", payload: { output: "b" } },
    ] }));
    await waitForRun(srv.url, key, "oa-x2", (b) => b.run.status === "success");
    const refused = await conforms(activate, "post", await post("/api/agents/config-bot/configs/2/activate", {}));
    expect(refused.error).toMatchObject({ code: "gate_refused", violations: [{ score: "helpful", active_mean: 1, candidate_mean: null }] });
    await conforms(activate, "post", await post("/api/agents/config-bot/configs/2/activate", { force: "yes" }));
    await conforms(activate, "post", await post("/api/agents/config-bot/configs/2/activate", { force: true, reason: "checked by hand" }));
    await conforms(activate, "post", await post("/api/agents/nobody/configs/1/activate", {}));
    await conforms(activate, "post", await post("/api/agents/config-bot/configs/0/activate", {}));

    const send = (method: string, path: string, body: unknown) => fetch(`${srv.url}${path}`, { ...json(key, body), method });
    await conforms("/api/evaluator-templates", "get", await get("/api/evaluator-templates"));
    await conforms("/api/evaluator-templates", "get", await get("/api/evaluator-templates", "0".repeat(64)));
    const judge = await post("/api/evaluators", { name: "doc judge", type: "llm_judge", prompt: "Is {{output}} right?", output: { type: "boolean" } });
    const judgeId = (await judge.clone().json()).evaluator.id as string;
    await conforms("/api/evaluators", "post", judge);
    await conforms("/api/evaluators", "post", await post("/api/evaluators", { name: "doc check", type: "builtin", check: { kind: "contains", value: "a" } }));
    await conforms("/api/evaluators", "post", await post("/api/evaluators", { name: "doc judge", type: "builtin", check: { kind: "json_valid" } }));
    await conforms("/api/evaluators", "get", await get("/api/evaluators"));
    await conforms("/api/evaluators/{id}", "get", await get(`/api/evaluators/${judgeId}`));
    await conforms("/api/evaluators/{id}", "get", await get("/api/evaluators/00000000-0000-0000-0000-000000000000"));
    await conforms("/api/evaluators/{id}", "patch", await send("PATCH", `/api/evaluators/${judgeId}`, { prompt: "Is {{output}} right for {{input}}?", output: { type: "boolean" } }));
    await conforms("/api/evaluators/{id}", "patch", await send("PATCH", `/api/evaluators/${judgeId}`, { prompt: "{{nope}}" }));
    // No agents-service here: the judge is unreachable, which the answer says.
    await conforms("/api/evaluators/{id}/try", "post", await post(`/api/evaluators/${judgeId}/try`, { sdk_run_id: "oa-x1" }));
    await conforms("/api/evaluators/{id}/try", "post", await post(`/api/evaluators/${judgeId}/try`, {}));
    await conforms("/api/provider-keys/{provider}", "put", await send("PUT", "/api/provider-keys/anthropic", { api_key: "sk-ant-doc-0123456789" }));
    await conforms("/api/provider-keys/{provider}", "put", await send("PUT", "/api/provider-keys/anthropic", { api_key: "has a space" }));
    await conforms("/api/provider-keys", "get", await get("/api/provider-keys"));
    await conforms("/api/provider-keys/{provider}", "delete", await send("DELETE", "/api/provider-keys/anthropic", null));
    await conforms("/api/provider-keys/{provider}", "delete", await send("DELETE", "/api/provider-keys/anthropic", null));
    await conforms("/api/evaluation-settings", "get", await get("/api/evaluation-settings"));
    await conforms("/api/evaluation-settings", "put", await send("PUT", "/api/evaluation-settings", { daily_budget_usd: 5, calls_per_minute: 60 }));
    await conforms("/api/evaluation-settings", "put", await send("PUT", "/api/evaluation-settings", { calls_per_minute: 0 }));
    const queue = await post("/api/annotation-queues", { name: "doc queue", score_configs: [{ name: "correct", type: "boolean" }, { name: "tone", type: "categorical", categories: ["ok", "rude"] }] });
    const queueId = (await queue.clone().json()).queue.id as string;
    await conforms("/api/annotation-queues", "post", queue);
    await conforms("/api/annotation-queues", "post", await post("/api/annotation-queues", { name: "doc queue 2", score_configs: [] }));
    const rule = await post("/api/evaluation-rules", { evaluator_id: judgeId, filter: { agent_name: "config-bot" }, sampling: 0.5, delay_s: 5, queue_action: { queue_id: queueId, equals: false } });
    const ruleId = (await rule.clone().json()).rule.id as string;
    await conforms("/api/evaluation-rules", "post", rule);
    await conforms("/api/evaluation-rules", "post", await post("/api/evaluation-rules", { evaluator_id: judgeId, sampling: 2 }));
    await conforms("/api/evaluation-rules", "post", await post("/api/evaluation-rules", { sampling: 1, queue_action: { queue_id: queueId, score_name: "user_feedback", equals: false } }));
    await conforms("/api/evaluation-rules", "get", await get("/api/evaluation-rules"));
    await conforms("/api/evaluation-rules", "get", await get(`/api/evaluation-rules?evaluator_id=${judgeId}`));
    await conforms("/api/evaluation-rules", "get", await get("/api/evaluation-rules?evaluator_id=x"));
    await conforms("/api/evaluation-rules/{id}", "get", await get(`/api/evaluation-rules/${ruleId}`));
    await conforms("/api/evaluation-rules/{id}", "get", await get("/api/evaluation-rules/x"));
    await conforms("/api/evaluation-rules/{id}", "patch", await send("PATCH", `/api/evaluation-rules/${ruleId}`, { enabled: false }));
    await conforms("/api/evaluation-rules/{id}", "patch", await send("PATCH", `/api/evaluation-rules/${ruleId}`, { enabled: "no" }));
    const range = { from: "2026-01-01T00:00:00Z", to: "2026-12-31T00:00:00Z" };
    await conforms("/api/evaluation-rules/{id}/backfill", "post", await post(`/api/evaluation-rules/${ruleId}/backfill`, range));
    await conforms("/api/evaluation-rules/{id}/backfill", "post", await post(`/api/evaluation-rules/${ruleId}/backfill`, { ...range, confirm: true }));
    await conforms("/api/evaluation-rules/{id}/backfill", "post", await post(`/api/evaluation-rules/${ruleId}/backfill`, { from: "x" }));
    await conforms("/api/annotation-queues", "get", await get("/api/annotation-queues"));
    await conforms("/api/annotation-queues/{id}/items", "post", await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "oa-x1" }] }));
    await conforms("/api/annotation-queues/{id}/items", "post", await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "missing" }] }));
    await conforms("/api/annotation-queues/{id}", "get", await get(`/api/annotation-queues/${queueId}`));
    await conforms("/api/annotation-queues/{id}", "get", await get(`/api/annotation-queues/${queueId}?status=nope`));
    const next = await post(`/api/annotation-queues/${queueId}/next`, {});
    const itemId = (await next.clone().json()).item.id as string;
    await conforms("/api/annotation-queues/{id}/next", "post", next);
    await conforms("/api/annotation-queues/{id}/next", "post", await post("/api/annotation-queues/00000000-0000-0000-0000-000000000000/next", {}));
    await conforms("/api/annotation-queues/{id}/items/{item_id}/complete", "post", await post(`/api/annotation-queues/${queueId}/items/${itemId}/complete`, { scores: [{ name: "correct", value: "yes" }] }));
    await conforms("/api/annotation-queues/{id}/items/{item_id}/complete", "post", await post(`/api/annotation-queues/${queueId}/items/${itemId}/complete`, { scores: [{ name: "correct", value: true }, { name: "tone", value: "ok" }], comment: "fine" }));
    await conforms("/api/annotation-queues/{id}/items/{item_id}/skip", "post", await post(`/api/annotation-queues/${queueId}/items/${itemId}/skip`, {}));
    await conforms("/api/annotation-queues/{id}/next", "post", await post(`/api/annotation-queues/${queueId}/next`, {}));
    await conforms("/api/evaluation-rules/{id}", "delete", await send("DELETE", `/api/evaluation-rules/${ruleId}`, undefined));
    await conforms("/api/evaluation-rules/{id}", "delete", await send("DELETE", `/api/evaluation-rules/${ruleId}`, undefined));
    await conforms("/api/annotation-queues/{id}", "delete", await send("DELETE", `/api/annotation-queues/${queueId}`, undefined));
    await conforms("/api/annotation-queues/{id}", "delete", await send("DELETE", `/api/annotation-queues/${queueId}`, undefined));

    const jar = await loginJar(srv.url, alice.email);
    await conforms("/api/realtime/token", "get", await jar.fetch(`${srv.url}/api/realtime/token`));

    const trace = exportJson([{ traceId: hexId(16), spanId: hexId(8), name: "agent", attributes: { "gen_ai.operation.name": "invoke_agent" } }]);
    await conforms("/v1/traces", "post", await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: trace }));
    await conforms("/v1/traces", "post", await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: "{not json" }));
    await conforms("/v1/traces", "post", await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }));
    const otlpPost = (path: string, body: unknown) => fetch(`${srv.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const logTrace = hexId(16);
    await conforms("/v1/logs", "post", await otlpPost("/v1/logs", { resourceLogs: [{ scopeLogs: [{ logRecords: [{ traceId: logTrace, body: { stringValue: "a line" } }, { traceId: "bad" }] }] }] }));
    await conforms("/v1/logs", "post", await otlpPost("/v1/logs", { resourceLogs: 1 }));
    await conforms("/v1/metrics", "post", await otlpPost("/v1/metrics", { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: "m", gauge: { dataPoints: [{ asDouble: 1 }] } }] }] }] }));
    await conforms("/v1/metrics", "post", await otlpPost("/v1/metrics", "nope"));
    await until("the log line", async () => (await (await get(`/api/runs/${logTrace}/logs`)).json()).logs.length, (n) => n === 1);
    await conforms("/api/runs/{sdk_run_id}/logs", "get", await get(`/api/runs/${logTrace}/logs?limit=1`));
    await conforms("/api/runs/{sdk_run_id}/logs", "get", await get(`/api/runs/${logTrace}/logs?limit=0`));
    await conforms("/api/logs", "get", await get("/api/logs?q=line&limit=5"));
    await conforms("/api/logs", "get", await get("/api/logs?cursor=nope"));

    await conforms("/api/query", "post", await post("/api/query", { sql: "SELECT count() AS n, max(started_at) FROM runs", max_rows: 5 }));
    await conforms("/api/query", "post", await post("/api/query", { sql: "SELECT * FROM system.tables" }));
    await conforms("/api/query", "post", await post("/api/query", { sql: "SELECT repeat('x', 100000) FROM (SELECT arrayJoin(range(200)))", max_rows: 10_000 }));
    await conforms("/api/query/schema", "get", await get("/api/query/schema"));

    await conforms("/api/prompts/{name}/versions", "post", await post("/api/prompts/doc-prompt/versions", { prompt: [{ role: "user", content: "Hi {{who}}" }], config: { model: "gpt-4o-mini" }, labels: ["production"] }));
    await conforms("/api/prompts/{name}/versions", "post", await post("/api/prompts/doc-prompt/versions", { prompt: "Hello {{who}}", message: "text now" }));
    await conforms("/api/prompts/{name}/versions", "post", await post("/api/prompts/doc-prompt/versions", { prompt: [] }));
    await conforms("/api/prompts", "get", await get("/api/prompts"));
    const promptAnswer = await get("/api/prompts/doc-prompt?label=production");
    const promptTag = promptAnswer.headers.get("etag")!;
    await conforms("/api/prompts/{name}", "get", promptAnswer);
    await conforms("/api/prompts/{name}", "get", await fetch(`${srv.url}/api/prompts/doc-prompt?label=production`, { headers: { authorization: `Bearer ${key}`, "if-none-match": promptTag } }));
    await conforms("/api/prompts/{name}", "get", await get("/api/prompts/no-such-prompt"));
    await conforms("/api/prompts/{name}/versions", "get", await get("/api/prompts/doc-prompt/versions?limit=1"));
    await conforms("/api/prompts/{name}/labels/{label}", "put", await send("PUT", "/api/prompts/doc-prompt/labels/production", { version: 2 }));
    await conforms("/api/prompts/{name}/labels/{label}", "put", await send("PUT", "/api/prompts/doc-prompt/labels/production", { version: 9 }));
    await conforms("/api/prompts/{name}/labels/{label}", "put", await send("PUT", "/api/prompts/doc-prompt/labels/staging", { version: 1 }));
    await conforms("/api/prompts/{name}/gate/rules/{score}", "put", await send("PUT", "/api/prompts/doc-prompt/gate/rules/helpful", { max_drop: 0.1 }));
    await conforms("/api/prompts/{name}/gate/rules/{score}", "put", await send("PUT", "/api/prompts/doc-prompt/gate/rules/helpful", { max_drop: -1 }));
    await conforms("/api/prompts/{name}/gate", "get", await get("/api/prompts/doc-prompt/gate"));
    await conforms("/api/prompts/{name}/gate", "get", await get("/api/prompts/doc-prompt/gate?version=1"));
    await conforms("/api/prompts/{name}/gate", "get", await get("/api/prompts/no-such-prompt/gate"));
    await conforms("/api/prompts/{name}/gate/rules/{score}", "delete", await send("DELETE", "/api/prompts/doc-prompt/gate/rules/helpful", undefined));
    await conforms("/api/prompts/{name}/gate/rules/{score}", "delete", await send("DELETE", "/api/prompts/doc-prompt/gate/rules/helpful", undefined));
    await conforms("/api/prompts/{name}/labels/{label}", "delete", await send("DELETE", "/api/prompts/doc-prompt/labels/production", undefined));
    await conforms("/api/prompts/{name}/playground", "post", await post("/api/prompts/doc-prompt/playground", { version: 1 }));
    await conforms("/api/prompts/{name}/playground", "post", await post("/api/prompts/doc-prompt/playground", { version: 1, variables: { who: "docs" } }));
    await conforms("/api/prompts/{name}/labels/{label}", "delete", await send("DELETE", "/api/prompts/doc-prompt/labels/production", undefined));
    const started = await post("/api/prompts/doc-prompt/experiments", { dataset: "doc set", version: 1, name: "doc prompt run" });
    const startedId = (await started.clone().json()).experiment.id as string;
    await conforms("/api/prompts/{name}/experiments", "post", started);
    await conforms("/api/prompts/{name}/experiments", "post", await post("/api/prompts/doc-prompt/experiments", { dataset: "no such set", version: 1 }));
    await conforms("/api/prompts/{name}/experiments/{id}", "get", await get(`/api/prompts/doc-prompt/experiments/${startedId}`));
    await conforms("/api/prompts/{name}/experiments/{id}", "get", await get("/api/prompts/doc-prompt/experiments/00000000-0000-0000-0000-000000000000"));
    await conforms("/api/prompts/{name}/diff", "get", await get("/api/prompts/doc-prompt/diff?from=1&to=2"));
    await conforms("/api/prompts/{name}/diff", "get", await get("/api/prompts/doc-prompt/diff?from=1"));

    // Every route of the API is in the document, and every operation of the document is served: by a route, or —
    // ingest and OTLP/HTTP, answered above — by the receivers mounted before the router.
    const routed = srv.web.app.routes
      .filter((r) => (r.path.startsWith("/api/") || r.path.startsWith("/v1/")) && r.path !== "/api/openapi.json" && r.path !== "/api/docs")
      .flatMap((r) => r.methods.map((m) => `${m.toLowerCase()} ${r.path.replace(/:(\w+)/g, "{$1}")}`));
    const documented = Object.entries(doc.paths).flatMap(([p, ms]) => Object.keys(ms as object).map((m) => `${m} ${p}`));
    expect(routed.filter((r) => !documented.includes(r)), "routes missing from the document").toEqual([]);
    expect(documented.filter((d) => !routed.includes(d)).sort(), "operations no route serves").toEqual(["post /api/ingest", "post /api/ingest/batch", "post /v1/logs", "post /v1/metrics", "post /v1/traces"]);
    // Every operation was exercised at least once, and each with an answer other than its success where it has one.
    const operations = Object.entries(doc.paths).flatMap(([p, ms]) => Object.keys(ms as object).map((m) => `${m} ${p}`));
    for (const op of operations) expect([...checked].some((c) => c.startsWith(`${op} `)), op).toBe(true);
    expect(checked.size).toBeGreaterThanOrEqual(25);
    // And the check bites: a run list whose run lacks fields, or has a status no run has, does not fit.
    const runList = ajv.getSchema(`runwatch-openapi#/paths/${pointer("/api/runs")}/get/responses/200/content/application~1json/schema`)!;
    expect(runList({ runs: [{ sdk_run_id: "x" }], next_cursor: null })).toBe(false);
    const listed = (await (await get("/api/runs")).json()) as { runs: Record<string, unknown>[] };
    expect(runList(listed)).toBe(true);
    expect(runList({ ...listed, runs: [{ ...listed.runs[0], status: "paused" }] })).toBe(false);
  });

  it("/api/docs is a reference page served from here (no CDN)", async () => {
    const res = await fetch(`${srv.url}/api/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain("/api/docs/assets/swagger-ui-bundle.js");
    expect(html).not.toMatch(/https?:\/\//); // nothing loaded from elsewhere
    const asset = await fetch(`${srv.url}/api/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
    expect(Number(asset.headers.get("content-length"))).toBeGreaterThan(100_000);
    expect(res.headers.get("content-security-policy")).toContain("script-src 'self'");
    // An encoded ../ (the URL parser leaves %2f alone) must not leave swagger-ui-dist.
    // Both files exist (the repository's package.json, another package's): a traversal would serve them.
    expect((await fetch(`${srv.url}/api/docs/assets/..%2f..%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${srv.url}/api/docs/assets/..%2fajv%2fpackage.json`)).status).toBe(404);
    expect((await fetch(`${srv.url}/api/docs/assets/package.json`)).status).toBe(200); // a file of its own is served
  });
});
