/**
 * Export of the runs a filter matches (GET /api/runs/export and the dashboard's /runs/export; docs/API.md, Export):
 * over real HTTP, CSV and JSON Lines hold exactly the runs GET /api/runs lists for the same filter and order, in that
 * order (JSON Lines line for line the same objects, with spans the same spans as GET /api/runs/{id}/spans); a limit
 * cuts it and the headers say so; bad parameters are a 422 naming them; another project's runs never appear; and the
 * file is made a page of runs at a time, only as the reader asks for more.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventStore } from "../../stores/runs/event-store.js";
import { EXPORT_COLUMNS, runsExportChunks } from "../../web/runs/runs-export.js";
import type { EventStore } from "../../core/ports/event-store.js";
import { bearer, json, loginJar, startTestServer, until, type TestServer } from "./harness.js";

let srv: TestServer;
let owner: { id: number; email: string; key: string };
let otherKey: string;
const RUNS = 30;

const get = (path: string, key = owner.key) => fetch(`${srv.url}${path}`, bearer(key));

/** Every run GET /api/runs lists for q, sort and order, page by page (small pages: the cursor is exercised). */
async function listed(q: string, sort: string, order: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor = "";
  for (;;) {
    const res = await get(`/api/runs?${new URLSearchParams({ q, sort, order, limit: "7", ...(cursor ? { cursor } : {}) })}`);
    expect(res.status).toBe(200);
    const body = await res.json();
    out.push(...body.runs);
    if (!body.next_cursor) return out;
    cursor = body.next_cursor;
  }
}

/** A CSV of the export's dialect: quoted cells may hold commas, quotes ("") and line breaks; rows end with CRLF. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(cell), (cell = "");
    else if (c === "\r" && text[i + 1] === "\n") row.push(cell), rows.push(row), (row = []), (cell = ""), i++;
    else cell += c;
  }
  return rows;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  owner = await srv.account();
  otherKey = (await srv.account()).key;
  const t0 = Date.now() - 3_600_000;
  const t = (ms: number) => new Date(t0 + ms).toISOString();
  const events: unknown[] = [];
  for (let i = 0; i < RUNS; i++) {
    const id = `x-${String(i).padStart(2, "0")}`;
    events.push({ event_type: "run_start", sdk_run_id: id, agent_name: i % 3 === 0 ? "other-bot" : "export-bot", occurred_at: t(i * 1000), payload: { input: i === 4 ? 'a "quoted", comma\nline' : `=SUM(A${i})` } });
    events.push({ event_type: "step", sdk_run_id: id, occurred_at: t(i * 1000 + 10), span_id: `s-${i}`, payload: { node_name: "plan", phase: "start" } });
    events.push({ event_type: "step", sdk_run_id: id, occurred_at: t(i * 1000 + 40), span_id: `s-${i}`, payload: { node_name: "plan", phase: "end", duration_ms: 30 } });
    // Costs repeat (every 4th run the same): ties are ordered by the run's id, in the list and the export alike.
    events.push({ event_type: "run_end", sdk_run_id: id, occurred_at: t(i * 1000 + 50 + i * 7), payload: { output: `answer ${i}`, total_tokens: i * 3, cost_usd: (i % 4) * 0.01 } });
  }
  for (const [key, batch] of [[owner.key, events], [otherKey, [{ event_type: "run_start", sdk_run_id: "x-01", agent_name: "export-bot", payload: {} }]]] as const) {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: batch }));
    expect([res.status, (await res.json()).rejected]).toEqual([207, 0]);
  }
  await until("the runs have ended", async () => (await (await get("/api/runs?limit=100&status=success")).json()).runs.length, (n) => n === RUNS);
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe("GET /api/runs/export", () => {
  it("writes as JSON Lines exactly the runs the list has, in its order", async () => {
    for (const [q, sort, order] of [["agent:export-bot", "cost", "desc"], ["", "start_time", "desc"], ["tokens>20", "duration", "asc"]] as const) {
      const res = await get(`/api/runs/export?${new URLSearchParams({ q, sort, order, format: "jsonl" })}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
      const lines = (await res.text()).split("\n");
      expect(lines.pop()).toBe("");
      const list = await listed(q, sort, order);
      expect(list.length).toBeGreaterThan(3);
      expect(lines.map((l) => JSON.parse(l))).toEqual(list);
      expect(res.headers.get("x-runwatch-export-matched")).toBe(String(list.length));
      expect(res.headers.get("x-runwatch-export-truncated")).toBe("false");
    }
  });

  it("writes the same runs as CSV, every cell as the list has it, text defused", async () => {
    const res = await get(`/api/runs/export?${new URLSearchParams({ q: "agent:export-bot", sort: "cost", order: "desc" })}`);
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="runs-\d{4}-\d{2}-\d{2}\.csv"$/);
    const [head, ...rows] = parseCsv(await res.text());
    expect(head).toEqual([...EXPORT_COLUMNS]);
    const list = await listed("agent:export-bot", "cost", "desc");
    const col = (name: string) => head!.indexOf(name);
    expect(rows.map((r) => r[col("sdk_run_id")])).toEqual(list.map((r) => r.sdk_run_id));
    for (const [i, r] of rows.entries()) {
      const run = list[i]!;
      expect([r[col("status")], r[col("started_at")], Number(r[col("duration_ms")]), Number(r[col("total_tokens")]), Number(r[col("cost_usd")]), r[col("agent_name")]])
        .toEqual([run.status, run.started_at, run.duration_ms, run.total_tokens, run.cost_usd, run.agent_name]);
    }
    // A cell a spreadsheet would run as a formula is written with a leading apostrophe; quotes and breaks survive.
    const input = (id: string) => rows.find((r) => r[col("sdk_run_id")] === id)![col("input_preview")];
    expect(input("x-01")).toBe("'=SUM(A1)");
    expect(input("x-04")).toBe('a "quoted", comma\nline');
    expect(rows.find((r) => r[col("sdk_run_id")] === "x-04")![col("output_preview")]).toBe("answer 4");
  });

  it("adds each run's spans with spans=1, as the spans API has them", async () => {
    const res = await get(`/api/runs/export?${new URLSearchParams({ q: "agent:other-bot", format: "jsonl", spans: "1" })}`);
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toHaveLength(RUNS / 3);
    for (const line of lines) {
      const spans = (await (await get(`/api/runs/${line.sdk_run_id}/spans`)).json()).spans;
      expect(line.spans).toEqual(spans);
      expect(line.spans).toHaveLength(1);
    }
  });

  it("stops at the limit and says so", async () => {
    const res = await get(`/api/runs/export?${new URLSearchParams({ format: "jsonl", limit: "5", sort: "tokens", order: "asc" })}`);
    expect(res.headers.get("x-runwatch-export-truncated")).toBe("true");
    expect(res.headers.get("x-runwatch-export-matched")).toBe(">5");
    expect(res.headers.get("x-runwatch-export-limit")).toBe("5");
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l).sdk_run_id);
    expect(lines).toEqual((await listed("", "tokens", "asc")).slice(0, 5).map((r) => r.sdk_run_id));
  });

  it("refuses bad parameters with a 422 naming them, and a key that may only send", async () => {
    const cases: [Record<string, string>, string][] = [
      [{ format: "xml" }, "format"], [{ spans: "2" }, "spans"], [{ format: "csv", spans: "1" }, "spans"],
      [{ q: "colour:red" }, "q"], [{ sort: "colour" }, "sort"], [{ order: "up" }, "order"], [{ limit: "0" }, "limit"], [{ limit: "100001" }, "limit"],
      [{ format: "jsonl", spans: "1", limit: "10001" }, "limit"],
    ];
    for (const [params, field] of cases) {
      const res = await get(`/api/runs/export?${new URLSearchParams(params)}`);
      expect([params, res.status, (await res.json()).error.field]).toEqual([params, 422, field]);
    }
    const sendOnly = await srv.key(owner.id, { scope: "ingest" });
    const res = await get("/api/runs/export", sendOnly);
    expect(res.status).toBe(403);
    expect((await res.json()).error.code).toBe("insufficient_scope");
  });

  it("never writes another project's runs", async () => {
    const lines = (await (await get("/api/runs/export?format=jsonl", otherKey)).text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((r) => [r.sdk_run_id, r.agent_name, r.status])).toEqual([["x-01", "export-bot", "running"]]);
  });

  it("downloads from the dashboard with the member's session", async () => {
    const jar = await loginJar(srv.url, owner.email);
    const res = await jar.fetch(`${srv.url}/runs/export?${new URLSearchParams({ q: "agent:export-bot", sort: "cost", order: "desc", format: "jsonl" })}`);
    expect(res.status).toBe(200);
    const lines = (await res.text()).trim().split("\n").map((l) => JSON.parse(l));
    expect(lines).toEqual(await listed("agent:export-bot", "cost", "desc"));
    // The runs page links to it for its own filter and order.
    const page = await (await jar.fetch(`${srv.url}/dashboard?${new URLSearchParams({ q: "agent:export-bot", sort: "cost", order: "desc" })}`)).text();
    expect(page).toMatch(/id="export-csv"|href="[^"]*\/runs\/export\?q=agent%3Aexport-bot&amp;sort=cost&amp;order=desc&amp;format=csv"/);
    expect(page).toContain("/runs/export?q=agent%3Aexport-bot&amp;sort=cost&amp;order=desc&amp;format=jsonl&amp;spans=1");
  });
});

describe("streaming", () => {
  it("reads a page of runs only when the reader asks for the next chunk", async () => {
    const store = createEventStore(srv.ports.clickhouse);
    let pages = 0;
    const counted: EventStore = { ...store, listRuns: (p, f) => ((pages += 1), store.listRuns(p, f)) };
    const chunks = runsExportChunks(counted, owner.id, { filter: {}, sort: { field: "start_time", order: "desc" }, format: "csv", spans: false, limit: 100_000 }, 4);
    expect((await chunks.next()).value).toBe(`${EXPORT_COLUMNS.join(",")}\r\n`);
    expect(pages).toBe(0);
    const first = (await chunks.next()).value as string;
    expect(first.split("\r\n").filter(Boolean)).toHaveLength(4);
    expect(pages).toBe(1);
    await chunks.next();
    expect(pages).toBe(2);
    let rows = 8;
    for await (const chunk of chunks) rows += chunk.split("\r\n").filter(Boolean).length;
    expect(rows).toBe(RUNS);
    expect(pages).toBe(Math.ceil(RUNS / 4));
  });

  it("sends the file in chunks, without a length known in advance", async () => {
    const res = await get("/api/runs/export?format=jsonl");
    expect(res.headers.get("content-length")).toBeNull();
    expect(res.headers.get("transfer-encoding")).toBe("chunked");
    expect((await res.text()).trim().split("\n")).toHaveLength(RUNS);
  });
});
