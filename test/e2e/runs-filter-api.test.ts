/**
 * GET /api/runs with `q`, `sort` and `order` over real HTTP, runs sent through the ingest API and stored by the
 * pipeline: the filter and each sort against what was sent, cursor pages, the older parameters beside `q`, another
 * project's runs of the same names never listed, and hostile filters answered 422 naming `q` (never a 500), fast.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, json, startTestServer, until, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let alice: TestAccount;
let bob: TestAccount;

interface Sent {
  id: string;
  agent: string;
  status: "success" | "error";
  cost: number;
  tokens: number;
  duration: number;
  started: number;
  experiment: boolean;
}
const T0 = Date.parse("2026-11-20T10:00:00Z");
const sent: Sent[] = Array.from({ length: 14 }, (_, i) => ({
  id: `api-${String(i).padStart(2, "0")}`,
  agent: i % 2 === 0 ? "refund" : "support",
  status: i % 3 === 0 ? "error" : "success",
  cost: (i % 4) * 0.1,
  tokens: (i % 5) * 100,
  duration: 1000 + (i % 3) * 500,
  started: T0 + Math.floor(i / 2) * 60_000,
  experiment: i === 13,
}));

/** What the run's first event says about it (the envelope's attributes). */
const n = (s: Sent) => Number(s.id.slice(4));
const attributes = (s: Sent) => ({
  tags: n(s) % 2 === 0 ? ["vip", "beta"] : ["beta"],
  metadata: { customer: n(s) % 3 === 0 ? "acme" : "X", tier: n(s) % 4 },
  environment: n(s) % 5 === 0 ? "staging" : "production",
  end_user: `cust-${n(s) % 3}`,
  release: n(s) < 7 ? "v1" : "v2",
});

function events(s: Sent, agent = s.agent): Record<string, unknown>[] {
  const at = (ms: number) => new Date(ms).toISOString();
  const out: Record<string, unknown>[] = [
    { event_type: "run_start", sdk_run_id: s.id, agent_name: agent, occurred_at: at(s.started), ...attributes(s),
      payload: { input: `Please refund order ${s.id}`, ...(s.experiment ? { experiment_id: "0190c000-0000-7000-8000-000000000013", dataset_item_id: "item-1", repetition: 1 } : {}) } },
    { event_type: "run_end", sdk_run_id: s.id, occurred_at: at(s.started + s.duration), payload: { cost_usd: s.cost, total_tokens: s.tokens } },
  ];
  if (s.status === "error") out.push({ event_type: "error", sdk_run_id: s.id, occurred_at: at(s.started + s.duration + 1), payload: { error_message: "timeout" } });
  return out;
}

async function get(path: string, key = alice.key): Promise<{ status: number; body: any }> {
  const res = await fetch(`${srv.url}${path}`, bearer(key));
  return { status: res.status, body: await res.json() };
}
const listed = async (query: string) => {
  const { status, body } = await get(`/api/runs?limit=500&${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return (body.runs as { sdk_run_id: string }[]).map((r) => r.sdk_run_id);
};

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  [alice, bob] = [await srv.account(), await srv.account()];
  for (const [acct, agent] of [[alice, undefined], [bob, "refund"]] as const) {
    const res = await fetch(`${srv.url}/api/ingest/batch`, json(acct.key, { events: sent.flatMap((s) => events(s, agent ?? s.agent)) }));
    const body = (await res.json()) as { rejected: number; results: unknown[] };
    expect(body.rejected, JSON.stringify(body.results).slice(0, 500)).toBe(0);
  }
  for (const key of [alice.key, bob.key]) {
    await until("every run stored with its last event", async () => {
      const { body } = await get("/api/runs?limit=500&q=is:experiment", key);
      const runs = body.runs as { status: string; ended_at: string | null }[];
      return [runs.filter((r) => r.ended_at !== null).length, runs.filter((r) => r.status === "error").length];
    }, ([ended, errors]) => ended === sent.length && errors === sent.filter((s) => s.status === "error").length);
  }
});
afterAll(async () => {
  await srv?.close();
});

const byStart = (a: Sent, b: Sent) => b.started - a.started || (a.id < b.id ? 1 : -1);
const ids = (runs: Sent[]) => runs.map((s) => s.id);

describe("GET /api/runs?q", () => {
  it("filters by the string form, leaving experiments out unless asked, and echoes the filter read", async () => {
    const normal = sent.filter((s) => !s.experiment);
    expect(await listed("")).toEqual(ids([...normal].sort(byStart)));
    expect(await listed("q=is:experiment")).toEqual(ids([...sent].sort(byStart)));
    expect(await listed(`q=${encodeURIComponent("status:error agent:refund")}`)).toEqual(ids(normal.filter((s) => s.status === "error" && s.agent === "refund").sort(byStart)));
    expect(await listed(`q=${encodeURIComponent("cost>0.1 -agent:support duration<=1.5s")}`))
      .toEqual(ids(normal.filter((s) => s.cost > 0.1 && s.agent !== "support" && s.duration <= 1500).sort(byStart)));
    expect(await listed(`q=${encodeURIComponent("has:error tokens>=200")}`)).toEqual(ids(normal.filter((s) => s.status === "error" && s.tokens >= 200).sort(byStart)));
    const { body } = await get(`/api/runs?q=${encodeURIComponent("status:error since:24h")}&sort=cost&order=asc&agent_name=x`);
    expect(body.filter).toEqual({ status: ["error"], since: "24h" });
    expect(body.sort).toEqual({ field: "cost", order: "asc" });
  });

  it.each<[string, (s: Sent) => boolean]>([
    ["tag:vip", (s) => n(s) % 2 === 0],
    ["tag:vip,beta -tag:vip", (s) => n(s) % 2 === 1],
    ["meta.customer:acme", (s) => n(s) % 3 === 0],
    ["meta.tier>=2", (s) => n(s) % 4 >= 2],
    ["-meta.tier:*", () => false],
    ["env:production -release:v1", (s) => n(s) % 5 !== 0 && n(s) >= 7],
    ["user:cust-1", (s) => n(s) % 3 === 1],
    ["TIMEOUT", (s) => s.status === "error"],
    ['"refund order api-0"', (s) => n(s) < 10],
    ["-timeout refund", (s) => s.status !== "error"],
    ["id:api-1", (s) => s.id.startsWith("api-1")],
    ["status:error agent:refund env:production meta.customer:acme since:9999w", (s) => s.status === "error" && s.agent === "refund" && n(s) % 5 !== 0 && n(s) % 3 === 0],
  ])("finds runs by what their events said: %s", async (q, keep) => {
    const want = ids(sent.filter((s) => !s.experiment && keep(s)).sort(byStart));
    if (q !== "-meta.tier:*") expect(want.length).toBeGreaterThan(0);
    expect(await listed(`q=${encodeURIComponent(q)}`)).toEqual(want);
  });

  it("keeps the older parameters, each narrowing the list beside q", async () => {
    const normal = sent.filter((s) => !s.experiment);
    expect(await listed("status=error&agent_name=refund")).toEqual(await listed(`q=${encodeURIComponent("status:error agent:refund")}`));
    expect(await listed(`since=${encodeURIComponent(new Date(T0 + 3 * 60_000).toISOString())}&q=${encodeURIComponent("agent:support")}`))
      .toEqual(ids(normal.filter((s) => s.agent === "support" && s.started + s.duration >= T0 + 3 * 60_000).sort(byStart)));
    // Both narrow the list: a run must be an error and a success.
    expect(await listed(`status=error&q=${encodeURIComponent("status:success,error agent:refund")}`)).toEqual(await listed("status=error&agent_name=refund"));
    expect(await listed(`status=error&q=${encodeURIComponent("status:success")}`)).toEqual([]);
  });

  it.each([
    ["start_time", (s: Sent) => s.started], ["duration", (s: Sent) => s.duration], ["cost", (s: Sent) => s.cost], ["tokens", (s: Sent) => s.tokens],
  ] as const)("sorts by %s both ways, a page of 3 at a time, every run once", async (field, value) => {
    for (const order of ["asc", "desc"] as const) {
      const d = order === "asc" ? 1 : -1;
      const want = ids(sent.filter((s) => !s.experiment).sort((a, b) => (value(a) - value(b)) * d || (a.id < b.id ? -d : d)));
      const seen: string[] = [];
      let cursor = "";
      do {
        const { status, body } = await get(`/api/runs?sort=${field}&order=${order}&limit=3${cursor ? `&cursor=${cursor}` : ""}`);
        expect(status, JSON.stringify(body)).toBe(200);
        seen.push(...(body.runs as { sdk_run_id: string }[]).map((r) => r.sdk_run_id));
        cursor = body.next_cursor ?? "";
      } while (cursor);
      expect(seen, `${field} ${order}`).toEqual(want);
    }
  });

  it("never lists another project's runs of the same names", async () => {
    const { body } = await get(`/api/runs?limit=500&q=${encodeURIComponent("agent:refund is:experiment")}`, bob.key);
    expect((body.runs as { sdk_run_id: string }[]).length).toBe(sent.length);
    expect(await listed(`q=${encodeURIComponent("agent:refund is:experiment")}`)).toEqual(ids(sent.filter((s) => s.agent === "refund").sort(byStart)));
  });

  it.each([
    ["colour:red", 'unknown field "colour" in "colour:red"'],
    ["cost>abc", 'cost needs a number: "cost>abc"'],
    ['agent:"refund', "unclosed quote"],
    ["status:done", "status must be one of"],
  ])("answers q=%s with a 422 naming q and the token", async (q, message) => {
    const { status, body } = await get(`/api/runs?q=${encodeURIComponent(q)}`);
    expect(status).toBe(422);
    expect(body.error.field).toBe("q");
    expect(body.error.message).toContain(message);
  });

  it("answers hostile filters with a 422 or a page, never a 500, quickly", async () => {
    const hostile = [
      "x".repeat(5_000), Array.from({ length: 10_000 }, (_, i) => `t${i}`).join(" ").slice(0, 1999), "a ".repeat(10_000),
      '"""""', '"a "b" c"', '\\"', "agent:x' OR 1=1 --", "'; DROP TABLE agent_runs; --", "meta.x:%00", "agent:\u0000", "\u001b[2J",
      "%", "_", "\\", "id:%", "model:' UNION SELECT 1 --", "score.x>1e308", "tokens>-1e-300", "since:9999w", "from:2200-12-31T23:59:59.999Z",
    ];
    const started = Date.now();
    // Already encoded: a broken UTF-8 sequence and an encoded lone surrogate.
    const raw = ["agent:%ED%A0%80", "agent:%FF%FE", "%C0%AF", "a&q=b"];
    for (const q of [...hostile.map(encodeURIComponent), ...raw]) {
      const res = await fetch(`${srv.url}/api/runs?q=${q}`, bearer(alice.key));
      const text = await res.text();
      // A URL past Node's header limit (16 KiB: "a " 10,000 times, encoded) is refused before any handler: 431.
      if (q.length > 16_000) {
        expect(res.status).toBe(431);
        continue;
      }
      expect([200, 422], `${q.slice(0, 40)}: ${text.slice(0, 200)}`).toContain(res.status);
      if (res.status === 422) expect(JSON.parse(text).error.field).toBe("q");
    }
    expect(Date.now() - started).toBeLessThan(20_000);
    // Values are bound, never SQL: the SQL-looking filters list nothing rather than everything.
    expect(await listed(`q=${encodeURIComponent("agent:x' OR 1=1 --")}`)).toEqual([]);
  });

  it("refuses a bad sort, order or a cursor of another sort, naming the parameter", async () => {
    expect((await get("/api/runs?sort=colour")).body.error.field).toBe("sort");
    expect((await get("/api/runs?order=up")).body.error.field).toBe("order");
    const { body } = await get("/api/runs?sort=cost&limit=2");
    const other = await get(`/api/runs?sort=tokens&limit=2&cursor=${body.next_cursor}`);
    expect(other.status).toBe(422);
    expect(other.body.error.field).toBe("cursor");
  });
});
