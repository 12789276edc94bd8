/**
 * No 500 from a date, a cursor or a depth: a `since` or a cursor outside the storable years is a 422 naming the
 * parameter on the API and a rendered page on the dashboard; a span parent chain 10,000 deep renders (the tree's
 * JSON carries every depth; the list without JavaScript nests at most to its cap). An OTLP export whose attribute values JavaScript cannot
 * turn into text is stored with those values repaired, visible to its tenant.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { hexId } from "./otlp-fixtures.js";
import { MAX_NOSCRIPT_DEPTH, NOSCRIPT_SPANS } from "../../web/runs/run-page.js";

let srv: TestServer;
let acct: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  acct = await srv.account();
});
afterAll(async () => { await srv?.close(); });

const cursorAt = (at: string) => Buffer.from(JSON.stringify([at, "run-x"])).toString("base64url");
const EXTREME = ["+275760-09-13T00:00:00.000Z", "-271821-04-20T00:00:00.000Z", "1969-12-31T23:59:59.999Z", "2201-01-01T00:00:00Z", "0001-01-01T00:00:00Z"];

describe("extreme dates and cursors", () => {
  it.each(EXTREME)("since=%s is a 422 naming since on /api/runs and /api/sessions", async (at) => {
    for (const path of ["/api/runs", "/api/sessions"]) {
      const res = await fetch(`${srv.url}${path}?since=${encodeURIComponent(at)}`, bearer(acct.key));
      expect(res.status, path).toBe(422);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe("since");
    }
  });

  it.each(EXTREME)("a cursor at %s is a 422 naming cursor on the API and a rendered first page on the dashboard", async (at) => {
    for (const path of ["/api/runs", "/api/sessions"]) {
      const res = await fetch(`${srv.url}${path}?cursor=${cursorAt(at)}`, bearer(acct.key));
      expect(res.status, path).toBe(422);
      expect(((await res.json()) as { error: { field: string } }).error.field).toBe("cursor");
    }
    const jar = await loginJar(srv.url, acct.email);
    for (const path of ["/dashboard", "/errors", "/sessions"]) {
      const res = await jar.fetch(`${srv.url}${path}?cursor=${cursorAt(at)}&since=${encodeURIComponent(at)}`);
      expect([200, 302], path).toContain(res.status);
    }
  });

  it("a cost range in year 9999 renders the page with a message", async () => {
    const jar = await loginJar(srv.url, acct.email);
    const res = await jar.fetch(`${srv.url}/costs?from=9999-01-01&to=9999-12-31`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("between 1970-01-01 and 2200-12-31");
  });
});

describe("deep span trees", () => {
  it("a parent chain 10,000 deep renders, nesting at most the depth cap", async () => {
    const run = "deep-chain";
    const DEPTH = 10_000;
    const t0 = Date.parse("2026-11-20T10:00:00Z");
    const events: Record<string, unknown>[] = [{ event_type: "run_start", sdk_run_id: run, agent_name: "deep", occurred_at: new Date(t0).toISOString(), payload: {} }];
    for (let i = 0; i < DEPTH; i++) {
      events.push({
        event_type: "step", sdk_run_id: run, span_id: `s${i}`, ...(i ? { parent_span_id: `s${i - 1}` } : {}),
        occurred_at: new Date(t0 + i).toISOString(), payload: { phase: "end", node_name: `step ${i}`, duration_ms: 1 },
      });
    }
    events.push({ event_type: "run_end", sdk_run_id: run, occurred_at: new Date(t0 + DEPTH + 1).toISOString(), payload: {} });
    for (let i = 0; i < events.length; i += 1000) {
      const res = await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: events.slice(i, i + 1000) }));
      const body = (await res.json()) as { rejected: number; results: { status: number }[] };
      expect(body.rejected, JSON.stringify(body.results.filter((r) => r.status !== 202).slice(0, 3))).toBe(0);
    }
    await waitForRun(srv.url, acct.key, run, (b) => b.run.event_count === DEPTH + 2, 60_000);

    const jar = await loginJar(srv.url, acct.email);
    expect((await jar.fetch(`${srv.url}/dashboard/${run}`)).status).toBe(200);
    const res = await jar.fetch(`${srv.url}/dashboard/${run}?static=1`);
    expect(res.status).toBe(200);
    const html = await res.text();
    // Without JavaScript: the first spans, nested at most to the cap (each level one <ul>).
    const listed = html.slice(html.indexOf('id="span-tree-static"'), html.indexOf("</div>", html.indexOf('id="span-tree-static"')));
    expect((listed.match(/data-span-id=/g) ?? []).length).toBe(NOSCRIPT_SPANS);
    expect((listed.match(/<ul>/g) ?? []).length).toBe(MAX_NOSCRIPT_DEPTH + 1);
    expect(listed.match(/<ul>/g)!.length).toBe(listed.match(/<\/ul><\/details><\/li>/g)!.length);
    // The tree's JSON: every span, the deepest at depth 9,999, read in pages without recursion.
    const depths: number[] = [];
    for (let after: string | null | undefined; after !== null;) {
      const page = await (await jar.fetch(`${srv.url}/dashboard/${run}/tree?limit=5000${after ? `&after=${after}` : ""}`)).json() as { spans: { depth: number }[]; next_after: string | null };
      depths.push(...page.spans.map((s) => s.depth));
      after = page.next_after;
    }
    expect(depths.length).toBe(DEPTH);
    expect(Math.max(...depths)).toBe(DEPTH - 1);
    const live = await jar.fetch(`${srv.url}/dashboard/${run}?fragment=live`);
    expect(live.status).toBe(200);
    // A live page's cursor: a malformed one is a 422 naming it; a stale one answers reset.
    const tree = (q: string) => jar.fetch(`${srv.url}/dashboard/${run}/tree?${q}`, { headers: { accept: "application/json" } });
    expect(await (await tree(`since=${"9".repeat(400)}&n=1`)).json()).toMatchObject({ error: { field: "since" } });
    expect(await (await tree("since=01900000-0000-7000-8000-000000000000&n=1e400")).json()).toMatchObject({ error: { field: "n" } });
    expect(await (await tree("since=01900000-0000-7000-8000-000000000000")).json()).toMatchObject({ error: { field: "n" } });
    const stale = await tree("since=01900000-0000-7000-8000-000000000000&n=5");
    expect([stale.status, ((await stale.json()) as { reset: boolean }).reset]).toEqual([200, true]);
  }, 120_000);
});

describe("OTLP values that cannot be turned into text", () => {
  it.each([["small", 0], ["over 4 MiB (decoded off the request's thread)", 5 * 1024 * 1024]])("%s: an object as stringValue and a kvlist with toString/valueOf keys as the agent name: the export is stored, its tenant sees it", async (_name, padding) => {
    const traceId = hexId(16);
    const root = hexId(8);
    const now = Date.now();
    const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
    const poison = { toString: 1, valueOf: 1 };
    const body = JSON.stringify({
      resourceSpans: [{
        resource: { attributes: [{ key: "service.name", value: { stringValue: "poison-svc" } }] },
        scopeSpans: [{ spans: [
          {
            traceId, spanId: root, name: "agent", kind: 1, startTimeUnixNano: nanos(now - 100), endTimeUnixNano: nanos(now),
            attributes: [
              { key: "gen_ai.agent.name", value: { kvlistValue: { values: [{ key: "toString", value: { intValue: "1" } }, { key: "valueOf", value: { intValue: "1" } }] } } },
              { key: "gen_ai.operation.name", value: { stringValue: "invoke_agent" } },
            ],
            status: {},
          },
          {
            traceId, spanId: hexId(8), parentSpanId: root, name: "tool", kind: 1, startTimeUnixNano: nanos(now - 50), endTimeUnixNano: nanos(now - 10),
            attributes: [
              { key: "input.value", value: { stringValue: poison } }, { key: "gen_ai.usage.input_tokens", value: { doubleValue: poison } },
              { key: "output.value", value: { stringValue: "x".repeat(Number(padding)) } },
            ],
            status: {},
          },
        ] }],
      }],
    });
    const res = await fetch(`${srv.url}/v1/traces`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${acct.key}` }, body });
    expect(res.status).toBe(200);
    const { run, events } = await waitForRun(srv.url, acct.key, traceId, (b) => b.run.status === "success" && b.events.length >= 2);
    expect(run.agent_name).toBe('{"toString":1,"valueOf":1}');
    expect(events.length).toBeGreaterThanOrEqual(2);
    const dead = await srv.ports.sql.query<{ n: string }>("SELECT count(*)::text AS n FROM dead_letters");
    expect(Number(dead[0]!.n)).toBe(0);
  });
});
