/**
 * Reviewing a failed run (docs/EVALUATION.md, Annotation queues): a queue filled by the rule "a run ends with an
 * error" gets a run whose tool call failed inside a node; its review page shows the error's type and message, the
 * failing span (the innermost one, linked to the trace) and the traceback, not an empty output. A run that succeeded
 * shows no error.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, loginJar, startTestServer, until, type CookieJar, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let jar: CookieJar;
let queueId: string;

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${srv.url}${path}`, json(alice.key, body));
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
};
const t = (ms: number) => new Date(Date.UTC(2026, 10, 25, 9, 0, 0, ms)).toISOString();

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  alice = await srv.account();
  jar = await loginJar(srv.url, alice.email);
  queueId = (await post("/api/annotation-queues", { name: "failures", score_configs: [{ name: "ok", type: "boolean" }] })).body.queue.id;
  expect((await post("/api/evaluation-rules", { queue_action: { queue_id: queueId }, filter: { has_error: true } })).status).toBe(201);
  const events = [
    { event_type: "run_start", sdk_run_id: "fail-1", agent_name: "support-bot", occurred_at: t(0), payload: { input: { question: "Where is order 42?" } } },
    { event_type: "step", sdk_run_id: "fail-1", span_id: "n1", occurred_at: t(10), payload: { node_name: "lookup_order", phase: "start" } },
    { event_type: "tool_call", sdk_run_id: "fail-1", span_id: "t1", parent_span_id: "n1", occurred_at: t(20), payload: { tool_name: "crm_search", phase: "start", input_preview: "order 42" } },
    { event_type: "tool_call", sdk_run_id: "fail-1", span_id: "t1", parent_span_id: "n1", occurred_at: t(900), payload: { tool_name: "crm_search", phase: "end", error: { error_type: "TimeoutError", error_message: "CRM did not answer in 30 s" } } },
    { event_type: "step", sdk_run_id: "fail-1", span_id: "n1", occurred_at: t(910), payload: { node_name: "lookup_order", phase: "end", error: "TimeoutError: CRM did not answer in 30 s" } },
    { event_type: "error", sdk_run_id: "fail-1", occurred_at: t(920), payload: { error_type: "TimeoutError", error_message: "CRM did not answer in 30 s", traceback: "Traceback (most recent call last):\n  File \"agent.py\", line 12, in lookup_order\nTimeoutError" } },
    { event_type: "run_start", sdk_run_id: "fine-1", agent_name: "support-bot", occurred_at: t(0), payload: { input: { question: "Hello?" } } },
    { event_type: "run_end", sdk_run_id: "fine-1", occurred_at: t(100), payload: { output: "Hi!" } },
  ];
  expect((await post("/api/ingest/batch", { events })).body.rejected).toBe(0);
  await until("the failed run in the queue", async () => (await (await fetch(`${srv.url}/api/annotation-queues/${queueId}`, bearer(alice.key))).json()) as any, (q) => q.items?.length === 1);
  expect((await post(`/api/annotation-queues/${queueId}/items`, { items: [{ sdk_run_id: "fine-1" }] })).status).toBe(201);
});
afterAll(async () => {
  await srv?.close();
});

describe("the review page of a failed run", () => {
  it("shows the error's type, message, failing span and traceback", async () => {
    const item = (await post(`/api/annotation-queues/${queueId}/next`, {})).body.item;
    expect(item.sdk_run_id).toBe("fail-1");
    const res = await jar.fetch(`${srv.url}/queues/${queueId}/items/${item.id}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<b class="mono" id="review-error-type">TimeoutError</b>');
    expect(html).toContain('<span id="review-error-message">CRM did not answer in 30 s</span>');
    // The innermost failing span: the tool call inside the node.
    expect(html).toMatch(/id="review-error-span">Failing span: <a href="(\/p\/[a-z0-9-]+)?\/dashboard\/fail-1\?span=t1"[^>]*><span class="mono">crm_search<\/span><\/a> <span class="subtle">\(tool\)<\/span>/);
    expect(html).toContain("File &quot;agent.py&quot;, line 12, in lookup_order");
    expect(html).toContain("— (the run failed: its error is below)");
    expect((await post(`/api/annotation-queues/${queueId}/items/${item.id}/skip`, {})).status).toBe(200);
  });

  it("shows no error for a run that succeeded", async () => {
    const item = (await post(`/api/annotation-queues/${queueId}/next`, {})).body.item;
    expect(item.sdk_run_id).toBe("fine-1");
    const html = await (await jar.fetch(`${srv.url}/queues/${queueId}/items/${item.id}`)).text();
    expect(html).toContain("Hi!");
    expect(html).not.toContain('id="review-error"');
  });
});
