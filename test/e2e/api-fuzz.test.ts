/**
 * A bounded fuzz of every operation GET /api/openapi.json lists (seeded: FUZZ_SEED reproduces a run), against a real
 * server with the pipeline: hostile path and query parameters (NUL, lone surrogates, huge and negative numbers,
 * long text, dates that are not, cursors that are not) and request bodies built from each operation's schema with
 * wrong types and hostile values. No answer is a 5xx or a status the document does not list; every refusal is a
 * JSON error with a message; no request stalls; a valid request afterwards is answered at once. The dashboard's
 * pages, signed in, get the same hostile paths and query parameters, and every form they show hostile fields.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, csrfFrom, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";
import { fuzzSeed, seededRandom } from "./seeded-random.js";

const SEED = fuzzSeed();
const REQUESTS_PER_OPERATION = 40;

let srv: TestServer;
let acct: TestAccount;
let doc: { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, any> } };

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000" } });
  acct = await srv.account();
  doc = (await (await fetch(`${srv.url}/api/openapi.json`)).json()) as typeof doc;
  // Something to find: a run with a session, a span and a pending question.
  const at = new Date().toISOString();
  const events = [
    { sdk_run_id: "fz-1", event_type: "run_start", agent_name: "fz", session_id: "s-1", occurred_at: at, payload: {} },
    { sdk_run_id: "fz-1", event_type: "step", span_id: "sp-1", occurred_at: at, payload: { kind: "llm", node_name: "chat", phase: "end", model: "gpt-4o", prompt_tokens: 5 } },
    { sdk_run_id: "fz-1", event_type: "human_input_requested", occurred_at: at, payload: { question: "ok?" } },
  ];
  await fetch(`${srv.url}/api/ingest/batch`, { method: "POST", headers: { ...bearer(acct.key).headers, "content-type": "application/json" }, body: JSON.stringify({ events }) });
  await waitForRun(srv.url, acct.key, "fz-1", (b) => b.events.length === 3);
});
afterAll(() => srv?.close());

/** Stands for a value nested 20,000 deep, which neither this test nor JSON.stringify can build as text. */
const TOO_DEEP = "\u0001too-deep";
const TOO_DEEP_TEXT = `${'{"d":'.repeat(20_000)}"bottom"${"}".repeat(20_000)}`;
/** A body as JSON text, each TOO_DEEP spelled out. */
const wire = (v: unknown): string => JSON.stringify(v).replaceAll(JSON.stringify(TOO_DEEP), TOO_DEEP_TEXT);

function fuzzer(seed: number) {
  const r = seededRandom(seed);
  /** Text as a parameter's value (encoded by URLSearchParams / encodeURIComponent, or raw escapes). */
  const text = (): string =>
    r.pick([
      "fz-1", "s-1", "sp-1", "fz", "", " ", "0", "-1", "1.5", "1e309", "99999999999999999999999", "NaN", "true", "null",
      "a\u0000b", "\ud800", "x".repeat(5_000), "../../etc/passwd", "%00", "'; DROP TABLE agent_runs; --", "{{7*7}}",
      "<script>alert(1)</script>", "2026-13-45T99:99:99Z", "2026-11-25T10:00:00Z", "1970-01-01", "9999-12-31T23:59:59Z",
      "running", "success", "error", "AAAAAAAAAAAAAAAA", "eyJhIjoxfQ", "😀".repeat(300), "\u202e",
    ]);
  const value = (depth = 0): unknown =>
    r.pick([
      text, text, text,
      () => r.pick([0, -1, 1.5, 2 ** 53, 2 ** 64, -(2 ** 63), 1e308, 5e-324, 4294967296]),
      () => r.next() < 0.5,
      () => null,
      () => (depth < 3 ? Array.from({ length: r.int(4) }, () => value(depth + 1)) : []),
      () => (depth < 3 ? Object.fromEntries(Array.from({ length: r.int(4) }, () => [text().slice(0, 40), value(depth + 1)])) : {}),
      () => {
        // Now and then past what JSON.stringify survives (a few thousand levels): put in as text by `wire`.
        if (r.next() < 0.2) return TOO_DEEP;
        let deep: unknown = "bottom";
        for (let i = 0, n = r.int(200); i < n; i++) deep = { d: deep };
        return deep;
      },
    ])();
  const resolve = (schema: any): any => (schema?.$ref ? doc.components!.schemas![schema.$ref.split("/").pop()] : schema);
  /** A body for the schema: its properties, each a plausible or a hostile value; sometimes not an object at all. */
  const body = (schema: any): unknown => {
    const s = resolve(schema);
    if (r.next() < 0.1) return value();
    const out: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries<any>(s?.properties ?? {})) {
      if (r.next() < 0.15) continue;
      const p = resolve(prop);
      out[name] = r.next() < 0.5 && p?.type === "object" ? body(p) : r.next() < 0.3 && p?.enum ? r.pick(p.enum) : value();
    }
    if (r.next() < 0.2) out[text().slice(0, 40)] = value();
    return out;
  };
  /** A path segment: percent-encoded text, or escapes no decoder takes (a lone surrogate's bytes, a bad escape). */
  const segment = (): string => {
    const t = text();
    if (r.next() < 0.1) return r.pick(["%ED%A0%80", "%ZZ", "%", "%C3%28", "%00"]);
    return t.isWellFormed() ? encodeURIComponent(t) : "%ED%A0%80";
  };
  return { r, text, body, segment };
}

interface Problem {
  readonly request: string;
  readonly answer: string;
}

describe(`API fuzz (seed ${SEED})`, () => {
  it("no 5xx, no status the document does not list, every refusal a JSON error with a message, no stall", async () => {
    const { r, text, body, segment } = fuzzer(SEED);
    const problems: Problem[] = [];
    const statuses = new Map<string, number>();
    let sent = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const params = (op.parameters ?? []) as { in: string; name: string }[];
        const jsonBody = op.requestBody?.content?.["application/json"]?.schema;
        for (let i = 0; i < REQUESTS_PER_OPERATION; i++) {
          let url = path;
          const query = new URLSearchParams();
          const headers: Record<string, string> = { ...(bearer(acct.key).headers as Record<string, string>) };
          for (const p of params) {
            if (p.in === "path") url = url.replace(`{${p.name}}`, segment());
            else if (p.in === "query" && r.next() < 0.25) {
              query.append(p.name, text());
              if (r.next() < 0.1) query.append(p.name, text()); // the parameter twice
            } else if (p.in === "header" && r.next() < 0.5) headers[p.name] = text().replace(/[^\x20-\x7e]/g, "?");
          }
          // input's long poll: a wait the fuzz picks may be legal, and each waits that long.
          if (query.has("wait")) query.set("wait", r.pick(["0", "-1", "abc", "1e309", "99999999"]));
          const target = `${url}${query.size ? `?${query}` : ""}`;
          const init: RequestInit = { method: method.toUpperCase(), headers, signal: AbortSignal.timeout(15_000) };
          if (jsonBody && method !== "get") {
            headers["content-type"] = "application/json";
            init.body = path === "/v1/traces" ? wire({ resourceSpans: [body({})] }) : wire(body(jsonBody));
          }
          const request = `${method.toUpperCase()} ${target.slice(0, 300)}`;
          sent++;
          let res: Response;
          try {
            res = await fetch(`${srv.url}${target}`, init);
          } catch (err) {
            problems.push({ request, answer: `no answer: ${(err as Error).message}` });
            continue;
          }
          const status = res.status;
          const textBody = await res.text();
          statuses.set(`${method} ${path} ${status}`, (statuses.get(`${method} ${path} ${status}`) ?? 0) + 1);
          // A request line over Node's 16 KiB is refused before any route sees it (core/network/client-error.ts).
          const overlong = status === 431 && target.length > 16_384;
          if (status >= 500 || (!(String(status) in op.responses) && !overlong)) problems.push({ request, answer: `${status} ${textBody.slice(0, 300)}` });
          else if (status >= 400 && path !== "/v1/traces") {
            let message: unknown;
            try {
              message = (JSON.parse(textBody) as { error?: { message?: unknown } }).error?.message;
            } catch {
              message = undefined;
            }
            if (typeof message !== "string" || message === "") problems.push({ request, answer: `${status} without an error message: ${textBody.slice(0, 300)}` });
          }
        }
      }
    }
    console.log(`api fuzz seed ${SEED}: ${sent} requests; ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
    expect(problems).toEqual([]);

    const t0 = Date.now();
    const ok = await fetch(`${srv.url}/api/runs/fz-1`, bearer(acct.key));
    expect(ok.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(5_000);
  }, 240_000);

  it("the dashboard's pages, signed in, answer hostile path segments and query parameters without a 5xx", async () => {
    const { r, text, segment } = fuzzer(SEED + 1);
    const jar = await loginJar(srv.url, acct.email);
    const pages = [
      "/", "/dashboard", "/dashboard/{}", "/dashboard/{}/input", "/sessions", "/sessions/{}", "/agents", "/agents/{}", "/costs", "/costs.csv",
      "/errors", "/alerts", "/alerts/new", "/alerts/{}/edit", "/dead-letters", "/improve", "/settings", "/settings/api-keys",
    ];
    const names = ["from", "to", "status", "agent", "agent_name", "session_id", "since", "cursor", "after", "limit", "page", "days", "group", "model", "fragment", "notice", "test", "q"];
    const problems: string[] = [];
    for (const page of pages) {
      for (let i = 0; i < 15; i++) {
        const query = new URLSearchParams();
        for (const name of names) if (r.next() < 0.15) query.append(name, r.next() < 0.2 ? r.pick(["live", "summary"]) : text());
        const target = `${page.replace("{}", () => (r.next() < 0.2 ? "fz-1" : segment()))}${query.size ? `?${query}` : ""}`;
        const res = await jar.fetch(`${srv.url}${target}`, { redirect: "manual", signal: AbortSignal.timeout(15_000) });
        const overlong = res.status === 431 && target.length > 16_384; // refused before any route sees it
        if (res.status >= 500 || (![200, 302, 303, 400, 404, 422].includes(res.status) && !overlong)) problems.push(`GET ${target.slice(0, 300)} → ${res.status} ${(await res.text()).slice(0, 200)}`);
        else if (overlong) {
          if (!(await res.text()).includes('"request_too_large"')) problems.push(`GET ${target.slice(0, 300)} → 431 without its JSON error`);
        } else await res.arrayBuffer();
      }
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it("every form the dashboard shows, submitted with hostile fields (a valid CSRF token), answers without a 5xx", async () => {
    const { r, text } = fuzzer(SEED + 2);
    const who = await srv.account(); // its own: a form may revoke keys or change settings
    const jar = await loginJar(srv.url, who.email);
    // Something for the forms to act on: an agent, a run waiting for input.
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/agents`)).text());
    expect((await jar.form(`${srv.url}/agents`, { _csrf: csrf, name: "fz-agent" })).status).toBe(303);
    const at = new Date().toISOString();
    await fetch(`${srv.url}/api/ingest/batch`, {
      method: "POST", headers: { ...(bearer(who.key).headers as Record<string, string>), "content-type": "application/json" },
      body: JSON.stringify({ events: [
        { sdk_run_id: "fz-2", event_type: "run_start", agent_name: "fz-agent", occurred_at: at, payload: {} },
        { sdk_run_id: "fz-2", event_type: "human_input_requested", occurred_at: at, payload: { question: "ok?" } },
      ] }),
    });
    await waitForRun(srv.url, who.key, "fz-2", (b) => b.events.length === 2);
    const pages = ["/dashboard/fz-2", "/agents", "/agents/fz-agent", "/alerts/new", "/settings", "/settings/api-keys", "/improve"];
    const forms: { action: string; fields: string[] }[] = [];
    for (const page of pages) {
      const html = await (await jar.fetch(`${srv.url}${page}`)).text();
      for (const m of html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)) {
        const attrs = m[1]!;
        if (!/method="post"/i.test(attrs)) continue;
        const action = /action="([^"]*)"/.exec(attrs)?.[1]?.replace(/&amp;/g, "&") ?? page;
        if (action === "/logout") continue;
        const fields = [...new Set([...m[2]!.matchAll(/<(?:input|select|textarea)\b[^>]*\bname="([^"]+)"/g)].map((f) => f[1]!))].filter((f) => f !== "_csrf");
        forms.push({ action, fields });
      }
    }
    expect(forms.length).toBeGreaterThan(5);
    // U+0000, which Postgres text cannot hold, in any field of any form: 422 naming the field.
    for (const [action, field] of [["/agents", "description"], ["/settings/api-keys", "name"]] as const) {
      const token = csrfFrom(await (await jar.fetch(`${srv.url}/settings`)).text());
      const res = await jar.form(`${srv.url}${action}`, { _csrf: token, name: "nul-test", [field]: "a\u0000b" });
      expect(res.status, action).toBe(422);
      expect(await res.text()).toContain(`${field} must not contain U+0000`);
    }
    const problems: string[] = [];
    for (const form of forms) {
      for (let i = 0; i < 12; i++) {
        const token = csrfFrom(await (await jar.fetch(`${srv.url}/settings`)).text());
        const body = new URLSearchParams({ _csrf: token });
        for (const f of form.fields) if (r.next() < 0.8) body.append(f, text());
        if (r.next() < 0.2) body.append(text().slice(0, 30), text());
        const res = await jar.fetch(`${srv.url}${form.action}`, {
          method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString(), signal: AbortSignal.timeout(15_000),
        });
        if (![200, 201, 302, 303, 400, 404, 409, 413, 422, 429].includes(res.status) && !(form.action.endsWith("/improve") && res.status === 502)) problems.push(`POST ${form.action} ${[...body.keys()].join(",")} → ${res.status} ${(await res.text()).slice(0, 200)}`);
        else await res.arrayBuffer();
      }
    }
    console.log(`form fuzz: ${forms.length} forms: ${forms.map((f) => f.action).join(" ")}`);
    expect(problems).toEqual([]);
  }, 240_000);
});
