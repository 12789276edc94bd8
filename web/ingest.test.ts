/** POST /api/ingest and /api/ingest/batch over real HTTP: every error case, status and body. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../core/ids.js";
import { startTestServer, json, type TestServer } from "../test/e2e/harness.js";

const runStart = (id = "run-1") => ({ event_type: "run_start", sdk_run_id: id, agent_name: "agent-a", payload: { framework: "langgraph", input: { q: 1 } } });

let srv: TestServer;
let key: string;
let userId: number;

beforeAll(async () => {
  srv = await startTestServer();
  userId = (await srv.user()).id;
  key = await srv.key(userId);
});
afterAll(() => srv?.close());

const post = (body: unknown, k: string | undefined = key, extra: Record<string, string> = {}, path = "/api/ingest") =>
  fetch(srv.url + path, json(k, body, extra));

async function expectError(res: Response, status: number, code: string, field?: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: { code: string; message: string; field?: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  if (field !== undefined) expect(body.error.field).toBe(field);
  return body;
}

describe("POST /api/ingest", () => {
  it("202 with event_id, run_id and sdk_run_id once the event is durable", async () => {
    const res = await post(runStart("happy-1"));
    expect(res.status).toBe(202);
    const body = (await res.json()) as Record<string, string>;
    expect(body.sdk_run_id).toBe("happy-1");
    expect(body.event_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(body.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.headers.get("ratelimit-limit")).toBe("200");
    expect(Number(res.headers.get("ratelimit-remaining"))).toBeLessThan(200);
  });

  it("keeps a client-chosen event_id (idempotent retries)", async () => {
    const event_id = "0190f3a2-1b2c-7d4e-8f90-123456789abc";
    const res = await post({ ...runStart("idem-1"), event_id });
    expect(res.status).toBe(202);
    expect(((await res.json()) as { event_id: string }).event_id).toBe(event_id);
  });

  it("401 missing_api_key without Authorization", async () => {
    const res = await post(runStart(), "");
    await expectError(res, 401, "missing_api_key");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("401 invalid_api_key for an unknown key, a malformed key and a non-Bearer scheme", async () => {
    await expectError(await post(runStart(), "f".repeat(64)), 401, "invalid_api_key");
    await expectError(await post(runStart(), "not-a-key"), 401, "invalid_api_key");
    await expectError(await fetch(srv.url + "/api/ingest", { method: "POST", headers: { authorization: `Basic ${key}`, "content-type": "application/json" }, body: "{}" }), 401, "invalid_api_key");
  });

  it("401 expired_api_key for a key past expires_at, also when it was cached while valid", async () => {
    const stale = await srv.key(userId, { expiresAt: new Date(Date.now() + 1500) });
    expect((await post(runStart("exp-1"), stale)).status).toBe(202);
    await new Promise((r) => setTimeout(r, 1600));
    const body = await expectError(await post(runStart("exp-1"), stale), 401, "expired_api_key");
    expect(body.error.message).toMatch(/expired/);
    // A key that expired before it was ever used.
    const old = await srv.key(userId);
    await srv.ports.sql.query("UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE key_hash = $1", [hashApiKey(old)]);
    await expectError(await post(runStart(), old), 401, "expired_api_key");
  });

  it("401 for a revoked key", async () => {
    const k = await srv.key(userId);
    await srv.ports.sql.query("UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1", [hashApiKey(k)]);
    await expectError(await post(runStart(), k), 401, "invalid_api_key");
  });

  it("415 when the body is not JSON", async () => {
    await expectError(await fetch(srv.url + "/api/ingest", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" }, body: "hello" }), 415, "unsupported_media_type");
    await expectError(await fetch(srv.url + "/api/ingest", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: new Uint8Array([1, 2]) }), 415, "unsupported_media_type");
  });

  it("accepts application/json with a charset parameter", async () => {
    expect((await post(runStart("charset-1"), key, { "content-type": "application/json; charset=utf-8" })).status).toBe(202);
  });

  it("400 malformed_json for broken and empty JSON", async () => {
    const body = await expectError(await post('{"event_type": "run_start",', key), 400, "malformed_json");
    expect(body.error.message).toMatch(/not valid JSON/);
    await expectError(await post("", key), 400, "malformed_json");
  });

  it("413 payload_too_large past 1 MiB, by Content-Length and by streaming without one", async () => {
    const big = JSON.stringify({ ...runStart(), payload: { input: { blob: "x".repeat(1024 * 1024) } } });
    await expectError(await post(big), 413, "payload_too_large");
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent === 0) c.enqueue(new TextEncoder().encode('{"pad":"'));
        if (sent > 2 * 1024 * 1024) return c.close();
        sent += chunk.length;
        c.enqueue(chunk);
      },
    });
    const res = await fetch(srv.url + "/api/ingest", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    await expectError(res, 413, "payload_too_large");
  });

  it("a body of exactly 1 MiB is read (and judged on its content)", async () => {
    const base = JSON.stringify({ ...runStart("mib-1"), payload: { input: { blob: "" } } });
    const body = JSON.stringify({ ...runStart("mib-1"), payload: { input: { blob: "y".repeat(1024 * 1024 - base.length) } } });
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    expect((await post(body)).status).toBe(202);
  });

  it("422 validation_error naming the field path", async () => {
    await expectError(await post({ ...runStart(), event_type: "finished" }), 422, "validation_error", "event_type");
    await expectError(await post({ event_type: "run_start", sdk_run_id: "x", payload: {} }), 422, "validation_error", "agent_name");
    await expectError(await post({ event_type: "step", payload: { node_name: "n", phase: "start" } }), 422, "validation_error", "sdk_run_id");
    await expectError(await post({ event_type: "step", sdk_run_id: "x", payload: { node_name: "n", phase: "middle" } }), 422, "validation_error", "payload.phase");
    await expectError(await post({ event_type: "run_end", sdk_run_id: "x", payload: { prompt_tokens: -1 } }), 422, "validation_error", "payload.prompt_tokens");
    await expectError(await post({ event_type: "step", sdk_run_id: "x", payload: [] }), 422, "validation_error", "payload");
    await expectError(await post({ ...runStart(), occurred_at: "yesterday" }), 422, "validation_error", "occurred_at");
    await expectError(await post([runStart()]), 422, "validation_error");
  });

  it("405 for other methods", async () => {
    const res = await fetch(srv.url + "/api/ingest", { headers: { authorization: `Bearer ${key}` } });
    await expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("POST");
    const del = await fetch(srv.url + "/api/runs", { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
    await expectError(del, 405, "method_not_allowed");
    expect(del.headers.get("allow")).toContain("GET");
  });

  it("404 JSON for unknown API paths", async () => {
    await expectError(await fetch(srv.url + "/api/nope", { headers: { authorization: `Bearer ${key}` } }), 404, "not_found");
  });
});

describe("POST /api/ingest/batch", () => {
  const batch = (events: unknown, k = key) => post(events, k, {}, "/api/ingest/batch");

  it("207 with a status per item for mixed valid and invalid events", async () => {
    const res = await batch({
      events: [
        runStart("batch-1"),
        { event_type: "step", sdk_run_id: "batch-1", payload: { node_name: "plan", phase: "sideways" } },
        { event_type: "tool_call", sdk_run_id: "batch-1", payload: { tool_name: "search", phase: "end", output_preview: "ok" } },
        "not an event",
      ],
    });
    expect(res.status).toBe(207);
    const body = (await res.json()) as { accepted: number; rejected: number; results: any[] };
    expect(body.accepted).toBe(2);
    expect(body.rejected).toBe(2);
    expect(body.results.map((r) => [r.index, r.status])).toEqual([[0, 202], [1, 422], [2, 202], [3, 422]]);
    expect(body.results[0].event_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.results[0].run_id).toBe(body.results[2].run_id);
    expect(body.results[1].error).toMatchObject({ code: "validation_error", field: "payload.phase" });
    expect(body.results[3].error.code).toBe("validation_error");
  });

  it("takes one rate-limit token per batch", async () => {
    const k = await srv.key(userId);
    const events = Array.from({ length: 1000 }, (_, i) => ({ event_type: "step", sdk_run_id: "batch-big", payload: { node_name: `n${i}`, phase: "end" } }));
    const res = await batch({ events }, k);
    expect(res.status).toBe(207);
    expect(res.headers.get("ratelimit-remaining")).toBe("199");
    const body = (await res.json()) as { accepted: number };
    expect(body.accepted).toBe(1000);
  });

  it("large batches report per-item errors and malformed JSON the same way", async () => {
    const events = Array.from({ length: 400 }, (_, i) =>
      i % 100 === 7
        ? { event_type: "tool_call", sdk_run_id: `big-${i % 3}`, payload: { tool_name: "t", phase: "later" } }
        : { event_type: "step", sdk_run_id: `big-${i % 3}`, payload: { node_name: `n${i}`, phase: "end" } });
    const res = await batch({ events });
    expect(res.status).toBe(207);
    const body = (await res.json()) as { accepted: number; rejected: number; results: any[] };
    expect(body.rejected).toBe(4);
    expect(body.results.filter((r) => r.status === 422).map((r) => r.index)).toEqual([7, 107, 207, 307]);
    expect(body.results[7].error).toMatchObject({ code: "validation_error", field: "payload.phase" });
    const ids = body.results.filter((r) => r.status === 202).map((r) => r.event_id);
    expect([...ids].sort()).toEqual(ids); // UUIDv7: minted in ingest order
    expect(new Set(body.results.filter((r) => r.status === 202 && r.sdk_run_id === "big-0").map((r) => r.run_id)).size).toBe(1);
    const broken = JSON.stringify({ events }).slice(0, -5);
    await expectError(await batch(broken), 400, "malformed_json");
    await expectError(await batch(JSON.stringify({ events: Object.fromEntries(events.map((e, i) => [i, e])) })), 422, "validation_error", "events");
  });

  it("422 on the events field for a missing, empty or over-long list", async () => {
    await expectError(await batch({}), 422, "validation_error", "events");
    await expectError(await batch({ events: [] }), 422, "validation_error", "events");
    await expectError(await batch([runStart()]), 422, "validation_error", "events");
    const tooMany = Array.from({ length: 1001 }, () => ({ event_type: "step", sdk_run_id: "x", payload: { node_name: "n", phase: "end" } }));
    const body = await expectError(await batch({ events: tooMany }), 422, "validation_error", "events");
    expect(body.error.message).toMatch(/1000/);
  });

  it("applies the same auth, media type and JSON checks", async () => {
    await expectError(await batch({ events: [runStart()] }, "0".repeat(64)), 401, "invalid_api_key");
    await expectError(await batch("{oops"), 400, "malformed_json");
  });
});

describe("rate limit", () => {
  it("429 after 200 requests in a minute, with Retry-After and RateLimit-* headers", async () => {
    const k = await srv.key(userId, { name: "limited" });
    const statuses: number[] = [];
    for (let i = 0; i < 200; i += 20) {
      const rs = await Promise.all(Array.from({ length: 20 }, (_, j) => post({ event_type: "step", sdk_run_id: "rl", payload: { node_name: `n${i + j}`, phase: "end" } }, k)));
      statuses.push(...rs.map((r) => r.status));
    }
    expect(statuses.every((s) => s === 202)).toBe(true);
    const res = await post({ event_type: "step", sdk_run_id: "rl", payload: { node_name: "over", phase: "end" } }, k);
    const body = await expectError(res, 429, "rate_limited");
    expect(body.error.message).toMatch(/200/);
    const retry = Number(res.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    expect(res.headers.get("ratelimit-limit")).toBe("200");
    expect(res.headers.get("ratelimit-remaining")).toBe("0");
    expect(Number(res.headers.get("ratelimit-reset"))).toBe(retry);
    // Another key of the same user has its own budget.
    expect((await post(runStart("rl-other"), key)).status).toBe(202);
  });
});

describe("log unavailable", () => {
  it("503 with Retry-After when the event log cannot take events; nothing is acknowledged", async () => {
    await srv.ports.log.close();
    const res = await post(runStart("down-1"));
    await expectError(res, 503, "service_unavailable");
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const b = await post({ events: [runStart("down-2")] }, key, {}, "/api/ingest/batch");
    await expectError(b, 503, "service_unavailable");
  });
});
