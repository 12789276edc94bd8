/**
 * Scores over real HTTP (docs/API.md, Scores): POST /api/scores and GET /api/runs/{sdk_run_id}/scores against the
 * real server and pipeline, in whichever mode the suite runs; as a user would, and as an attacker would (another
 * tenant's run, hostile strings, values of the wrong type or size).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { exportJson, exportProtobuf, hexId, type SpanSpec } from "./otlp-fixtures.js";
import { scoreRow } from "../../stores/scores.js";
import { uuidv7 } from "../../core/ids.js";

let srv: TestServer;
let alice: TestAccount;
let mallory: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  [alice, mallory] = [await srv.account(), await srv.account()];
});
afterAll(async () => {
  await srv?.close();
});

async function runOf(key: string, sdkRunId: string): Promise<void> {
  const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [
    { event_type: "run_start", sdk_run_id: sdkRunId, agent_name: "support-bot", payload: {} },
    { event_type: "step", sdk_run_id: sdkRunId, span_id: "answer", payload: { node_name: "answer", phase: "end", kind: "llm", model: "gpt-4o" } },
    { event_type: "run_end", sdk_run_id: sdkRunId, payload: {} },
  ] }));
  expect(res.status).toBe(207);
  expect(await res.json()).toMatchObject({ accepted: 3, rejected: 0 });
  await waitForRun(srv.url, key, sdkRunId, (b) => b.run.status === "success");
}

const score = (key: string, body: unknown) => fetch(`${srv.url}/api/scores`, json(key, body));
const scoresOf = async (key: string, sdkRunId: string) => {
  const res = await fetch(`${srv.url}/api/runs/${encodeURIComponent(sdkRunId)}/scores`, bearer(key));
  return { status: res.status, body: (await res.json()) as { scores: Record<string, unknown>[] } };
};

describe("scores API", () => {
  it("takes a number, a boolean and a string score, on the run or one of its spans, and lists them in order", async () => {
    await runOf(alice.key, "scored-1");
    const given = [
      { sdk_run_id: "scored-1", name: "helpfulness", value: 0.8, comment: "good but long", source: "llm_judge" },
      { sdk_run_id: "scored-1", name: "thumbs", value: true, source: "human" },
      { sdk_run_id: "scored-1", span_id: "answer", name: "tone", value: "friendly" },
    ];
    const ids: string[] = [];
    for (const body of given) {
      const res = await score(alice.key, body);
      expect(res.status).toBe(201);
      const { score_id } = (await res.json()) as { score_id: string };
      expect(score_id).toMatch(/^[0-9a-f-]{36}$/);
      ids.push(score_id);
    }
    const { status, body } = await scoresOf(alice.key, "scored-1");
    expect(status).toBe(200);
    expect(body.scores).toMatchObject([
      { score_id: ids[0], name: "helpfulness", value: 0.8, comment: "good but long", source: "llm_judge", span_id: null },
      { score_id: ids[1], name: "thumbs", value: true, comment: "", source: "human", span_id: null },
      { score_id: ids[2], name: "tone", value: "friendly", source: "api", span_id: "answer" },
    ]);
    expect(Date.parse(body.scores[0]!.created_at as string)).not.toBeNaN();
  });

  it("404 for a run the key's owner does not have: another tenant's run can be neither scored nor read", async () => {
    await runOf(alice.key, "private-run");
    const res = await score(mallory.key, { sdk_run_id: "private-run", name: "thumbs", value: false });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: "not_found" } });
    expect((await scoresOf(mallory.key, "private-run")).status).toBe(404);
    expect((await scoresOf(alice.key, "private-run")).body.scores).toEqual([]);
    expect((await score(alice.key, { sdk_run_id: "no-such-run", name: "x", value: 1 })).status).toBe(404);
  });

  it("422 naming the field for each broken part; 401 without a key", async () => {
    await runOf(alice.key, "scored-2");
    const base = { sdk_run_id: "scored-2", name: "quality", value: 1 };
    const cases: [unknown, string | undefined][] = [
      [{ ...base, name: undefined }, "name"],
      [{ ...base, name: "" }, "name"],
      [{ ...base, name: "n".repeat(101) }, "name"],
      [{ ...base, value: undefined }, "value"],
      [{ ...base, value: "v".repeat(201) }, "value"],
      [{ ...base, value: { nested: 1 } }, "value"],
      [{ ...base, value: null }, "value"],
      [{ ...base, comment: "c".repeat(2001) }, "comment"],
      [{ ...base, comment: 5 }, "comment"],
      [{ ...base, source: "robot" }, "source"],
      [{ ...base, sdk_run_id: 7 }, "sdk_run_id"],
      [{ ...base, span_id: "" }, "span_id"],
      [{ ...base, span_id: "s".repeat(65) }, "span_id"],
      [{ ...base, sdk_run_id: "r".repeat(257) }, "sdk_run_id"],
      [{ ...base, sdk_run_id: "scored-\u0000" }, "sdk_run_id"],
      [{ ...base, name: "bad\uD800name" }, "name"],
      [[base], undefined],
    ];
    for (const [body, field] of cases) {
      const res = await score(alice.key, body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      const err = ((await res.json()) as { error: { field?: string; message: string } }).error;
      expect(err.field).toBe(field);
      expect(err.message.length).toBeGreaterThan(0);
    }
    expect((await fetch(`${srv.url}/api/scores`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(base) })).status).toBe(401);
    // Every run can be scored: a run id as long as ingest takes (256 characters).
    const longId = "L".repeat(256);
    await runOf(alice.key, longId);
    expect((await score(alice.key, { sdk_run_id: longId, name: "long-id", value: 1 })).status).toBe(201);
    // A number that JSON can write but is not finite never arrives; a huge finite one is kept as it is.
    expect((await score(alice.key, { ...base, value: 1e308 })).status).toBe(201);
    expect((await scoresOf(alice.key, "scored-2")).body.scores).toMatchObject([{ name: "quality", value: 1e308 }]);
  });

  it("hostile text in a comment or a string value is repaired, not refused; the run and a later score are unharmed", async () => {
    await runOf(alice.key, "scored-3");
    const res = await score(alice.key, { sdk_run_id: "scored-3", name: "note", value: "a\u0000b", comment: "x\uDC00y <script>alert(1)</script>" });
    expect(res.status).toBe(201);
    expect((await score(alice.key, { sdk_run_id: "scored-3", name: "after", value: -2.5 })).status).toBe(201);
    const { body } = await scoresOf(alice.key, "scored-3");
    expect(body.scores).toMatchObject([
      { name: "note", value: "a\uFFFDb", comment: "x\uFFFDy <script>alert(1)</script>" },
      { name: "after", value: -2.5 },
    ]);
    expect((await waitForRun(srv.url, alice.key, "scored-3", () => true)).run).toMatchObject({ status: "success", event_count: 3 });
  });

  it("OTLP gen_ai.evaluation.result events become scores of their span (source otel), once however often the export is resent", async () => {
    const traceId = hexId(16);
    const [root, chat] = [hexId(8), hexId(8)];
    const t = Date.now() - 1000;
    const spans: SpanSpec[] = [
      { traceId, spanId: chat, parentSpanId: root, name: "chat gpt-4o", startMs: t + 10, endMs: t + 400, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o" },
        events: [
          { name: "gen_ai.evaluation.result", attributes: { "gen_ai.evaluation.name": "relevance", "gen_ai.evaluation.score.value": 0.9, "gen_ai.evaluation.score.label": "relevant", "gen_ai.evaluation.explanation": "on topic" } },
          { name: "gen_ai.evaluation.result", attributes: { "gen_ai.evaluation.name": "verdict", "gen_ai.evaluation.score.label": "pass" } },
        ] },
      { traceId, spanId: root, name: "invoke_agent bot", startMs: t, endMs: t + 500, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot" } },
    ];
    const post = (body: string | Uint8Array, type: string) => fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${alice.key}`, "content-type": type }, body: body as BodyInit });
    expect((await post(exportJson(spans), "application/json")).status).toBe(200);
    expect((await post(exportProtobuf(spans), "application/x-protobuf")).status).toBe(200); // the exporter's retry
    await waitForRun(srv.url, alice.key, traceId, (b) => b.run.status === "success");
    await runOf(alice.key, `after-${traceId}`); // processed after both exports
    const { body } = await scoresOf(alice.key, traceId);
    // Scores of the same moment come in id order, not in the order of the span's events.
    expect(body.scores.map((x) => [x.name, x.value, x.comment, x.source, x.span_id]).sort()).toEqual([
      ["relevance", 0.9, "relevant: on topic", "otel", chat],
      ["verdict", "pass", "", "otel", chat],
    ]);
  });

  it("an ingest event's payload.scores are stored with its run and span; a broken one is left out, the event kept", async () => {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(alice.key, { events: [
      { event_type: "run_start", sdk_run_id: "scored-4", agent_name: "support-bot", payload: {} },
      { event_type: "step", sdk_run_id: "scored-4", span_id: "judge", payload: { node_name: "judge", phase: "end", scores: [{ name: "faithful", value: true, comment: "cites the doc" }, { name: "", value: 1 }, "not an object"] } },
      { event_type: "run_end", sdk_run_id: "scored-4", payload: {} },
    ] }));
    expect(await res.json()).toMatchObject({ accepted: 3, rejected: 0 });
    await waitForRun(srv.url, alice.key, "scored-4", (b) => b.run.status === "success" && b.run.event_count === 3);
    await runOf(alice.key, "scored-4-after");
    const { body } = await scoresOf(alice.key, "scored-4");
    expect(body.scores.map((x) => [x.name, x.value, x.comment, x.source, x.span_id])).toEqual([["faithful", true, "cites the doc", "api", "judge"]]);
  });

  it("GET /api/runs filters by score: a name alone, or a numeric/boolean range; the filter is per tenant and checked", async () => {
    for (const id of ["f-low", "f-high", "f-bool", "f-none"]) await runOf(mallory.key, id);
    const give = (id: string, name: string, value: unknown) => score(mallory.key, { sdk_run_id: id, name, value });
    expect((await give("f-low", "quality", 0.1)).status).toBe(201);
    expect((await give("f-high", "quality", 0.9)).status).toBe(201);
    expect((await give("f-bool", "quality", true)).status).toBe(201);
    expect((await give("f-none", "label", "quality")).status).toBe(201);
    const ids = async (query: string, key = mallory.key) => {
      const res = await fetch(`${srv.url}/api/runs?${query}`, bearer(key));
      expect(res.status, query).toBe(200);
      return ((await res.json()) as { runs: { sdk_run_id: string }[] }).runs.map((r) => r.sdk_run_id).sort();
    };
    expect(await ids("score_name=quality")).toEqual(["f-bool", "f-high", "f-low"]);
    expect(await ids("score_name=quality&score_min=0.5")).toEqual(["f-bool", "f-high"]);
    expect(await ids("score_name=quality&score_min=0.5&score_max=0.95")).toEqual(["f-high"]);
    expect(await ids("score_name=quality&score_max=0.5")).toEqual(["f-low"]);
    expect(await ids("score_name=quality", alice.key)).toEqual(["scored-2"]); // her own run, none of mallory's
    expect(await ids("score_name=quality&score_min=-1e300&score_max=1e300")).toEqual(["f-bool", "f-high", "f-low"]);
    for (const [query, field] of [["score_name=quality&score_min=abc", "score_min"], ["score_name=quality&score_max=1e999", "score_max"], ["score_max=1", "score_name"], [`score_name=${"q".repeat(101)}`, "score_name"]]) {
      const res = await fetch(`${srv.url}/api/runs?${query}`, bearer(mallory.key));
      expect(res.status, query).toBe(422);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe(field);
    }
  });
});

describe("a run with many scores", () => {
  it("pages them: every score once, in order, by limit and cursor; the run page lists the latest and tallies all", async () => {
    await runOf(alice.key, "many-scores");
    const { run } = (await (await fetch(`${srv.url}/api/runs/many-scores?limit=1`, bearer(alice.key))).json()) as { run: { run_id: string } };
    const N = 2_500;
    const t0 = Date.parse("2026-11-20T10:00:00Z");
    const rows = Array.from({ length: N }, (_, i) => scoreRow({ project_id: alice.id, user_id: alice.id, run_id: run.run_id, external_id: "many-scores" },
      i % 2 ? { sdk_run_id: "many-scores", name: "user_feedback", value: i % 4 === 1, source: "human" } : { sdk_run_id: "many-scores", name: "n", value: i, comment: `#${i}` },
      uuidv7(), new Date(t0 + Math.floor(i / 3)).toISOString()));
    await srv.ports.clickhouse.insert("scores", rows);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await fetch(`${srv.url}/api/runs/many-scores/scores?limit=1000${cursor ? `&cursor=${cursor}` : ""}`, bearer(alice.key));
      expect(res.status).toBe(200);
      const body = (await res.json()) as { scores: { score_id: string; created_at: string }[]; next_cursor: string | null };
      expect(body.scores.length).toBeLessThanOrEqual(1000);
      seen.push(...body.scores.map((x) => x.score_id));
      cursor = body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(N);
    expect(seen).toEqual([...seen].sort((a, b) => rows.findIndex((r) => r.score_id === a) - rows.findIndex((r) => r.score_id === b)));
    const jar = await loginJar(srv.url, alice.email);
    const page = await (await jar.fetch(`${srv.url}/dashboard/many-scores`)).text();
    expect(page).toContain("625 good · 625 bad");
    expect(page).toContain("The latest 200 are shown");
    const bad = await fetch(`${srv.url}/api/runs/many-scores/scores?cursor=nope`, bearer(alice.key));
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error: { field: string } }).error.field).toBe("cursor");
  });
});
