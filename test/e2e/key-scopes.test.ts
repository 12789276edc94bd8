/**
 * API key scopes over real HTTP (docs/TEAMS.md): a key with scope `ingest` sends events, OTLP spans and scores,
 * and waits for the answer to its run's question, but reading the read API is a 403 `insufficient_scope`; a
 * `read+ingest` key (the default, and every key made before scopes) does both.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, waitForRun, type TestServer } from "./harness.js";
import { exportJson, hexId } from "./otlp-fixtures.js";

let srv: TestServer;
let readKey: string;
let ingestKey: string;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  const user = await srv.user();
  readKey = await srv.key(user.id);
  ingestKey = await srv.key(user.id, { name: "agent", scope: "ingest" });
});
afterAll(async () => {
  await srv?.close();
});

describe("API key scopes", () => {
  it("lets an ingest-only key send and wait for answers, and refuses it every read with insufficient_scope", async () => {
    const sent = await fetch(`${srv.url}/api/ingest/batch`, json(ingestKey, { events: [
      { event_type: "run_start", sdk_run_id: "scoped-1", agent_name: "bot", payload: {} },
      { event_type: "human_input_requested", sdk_run_id: "scoped-1", payload: { question: "ok?" } },
    ] }));
    expect(sent.status).toBe(207);
    const traceId = hexId(16);
    const otlp = await fetch(`${srv.url}/v1/traces`, json(ingestKey, exportJson([{ traceId, spanId: hexId(8), name: "invoke_agent bot", attributes: { "gen_ai.operation.name": "invoke_agent" } }])));
    expect(otlp.status).toBe(200);
    await waitForRun(srv.url, readKey, "scoped-1", (b) => b.run.status === "waiting_for_input");

    const score = await fetch(`${srv.url}/api/scores`, json(ingestKey, { sdk_run_id: "scoped-1", name: "thumbs", value: true }));
    expect(score.status).toBe(201);
    const input = await fetch(`${srv.url}/api/runs/scoped-1/input`, bearer(ingestKey));
    expect(input.status).toBe(204); // no answer yet: the agent may ask

    for (const path of ["/api/runs", "/api/runs/scoped-1", "/api/runs/scoped-1/spans", "/api/runs/scoped-1/scores", "/api/sessions", "/api/agents/bot/config"]) {
      const res = await fetch(`${srv.url}${path}`, bearer(ingestKey));
      expect([path, res.status]).toEqual([path, 403]);
      expect(await res.json()).toMatchObject({ error: { code: "insufficient_scope" } });
      const ok = await fetch(`${srv.url}${path}`, bearer(readKey));
      expect([path, ok.status === 403]).toEqual([path, false]);
    }
    const answer = await fetch(`${srv.url}/api/runs/scoped-1/input`, json(ingestKey, { response: "yes" }));
    expect(answer.status).toBe(403);
  });
});
