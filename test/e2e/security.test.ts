/**
 * Security hardening (docs/SECURITY.md), each row of the audit as the real request an attacker with two accounts
 * would send, against a real server (web + pipeline + gateway in process, embedded stores). For the CPU rows
 * (a, b, c) a concurrent /healthz probe must never wait more than 500 ms while the hostile request runs.
 * Rows that need other settings (h, closed registration, HSTS) are in security-settings.test.ts. Row l (SSRF ranges) is also unit-tested in alerts/delivery/delivery.test.ts, row i's gateway side in
 * gateway/server.test.ts, row m's CLI in test/e2e/cli.test.ts.
 */
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { loadConfig } from "../../core/config.js";
import { startGateway, type Gateway } from "../../gateway/server.js";
import { hashPasswordWith } from "./fixtures/legacy-hash.js";
import { bearer, CookieJar, csrfFrom, freePort, json, loginJar, startTestServer, waitForRun, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let gateway: Gateway;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  srv = await startTestServer({
    pipeline: true,
    pipelineOptions: { maxWaitMs: 5 },
    env: {
      RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000",
      RUNWATCH_USER_RATE_LIMIT_PER_MINUTE: "100000",
      RUNWATCH_TEST_SENDS_PER_HOUR: "2",
      RUNWATCH_IMPROVE_PER_HOUR: "1",
      RUNWATCH_AGENTS_URL: `http://127.0.0.1:${await freePort()}`,
      AGENT_SECRET: "agent-secret-for-tests-0123456789",
    },
  });
  gateway = await startGateway(srv.ports, loadConfig({ RUNWATCH_DATA_DIR: srv.dataDir, RUNWATCH_GATEWAY_PORT: "0", LOG_LEVEL: "error" }));
  alice = await srv.account();
  bob = await srv.account();
});
afterAll(async () => {
  await gateway?.close();
  await srv?.close();
});

/** Runs `hostile` while probing /healthz every 50 ms; the slowest probe's wait in ms. */
async function worstProbeDuring<T>(hostile: () => Promise<T>): Promise<{ result: T; worstMs: number; probes: number }> {
  let done = false;
  let worst = 0;
  let probes = 0;
  const probe = (async () => {
    while (!done) {
      const t = performance.now();
      await fetch(`${srv.url}/healthz`).then((r) => r.text());
      worst = Math.max(worst, performance.now() - t);
      probes++;
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await new Promise((r) => setTimeout(r, 60));
  const result = await hostile();
  done = true;
  await probe;
  return { result, worstMs: worst, probes };
}

describe("a: no request runs user-sized CPU work on the event loop", () => {
  it("two very different large configs: the diff gives up within bounds; configs over 48 KiB are refused naming the field", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/agents`)).text());
    const form = (path: string, fields: Record<string, string>) => jar.form(`${srv.url}${path}`, { _csrf: csrf, ...fields });
    expect([302, 303]).toContain((await form("/agents", { name: "diffbomb" })).status);
    const big = (seed: number) => JSON.stringify(Object.fromEntries(Array.from({ length: 1400 }, (_, i) => [`k${seed}-${i}`, i * seed])));
    expect(big(1).length).toBeGreaterThan(18_000);
    expect([302, 303]).toContain((await form("/agents/diffbomb/configs", { config: big(1) })).status);
    expect([302, 303]).toContain((await form("/agents/diffbomb/configs", { config: big(7) })).status);
    const { result, worstMs } = await worstProbeDuring(async () => {
      const t = performance.now();
      const html = await (await jar.fetch(`${srv.url}/agents/diffbomb?from=1&to=2`)).text();
      return { html, ms: performance.now() - t };
    });
    expect(result.html).toContain("differ too much to show line by line");
    expect(result.ms).toBeLessThan(2_000);
    expect(worstMs).toBeLessThan(500);

    const tooBig = await form("/agents/diffbomb/configs", { config: JSON.stringify({ blob: "x".repeat(50_000) }) });
    expect(tooBig.status).toBe(422);
    expect(await tooBig.text()).toContain("config is larger than 48 KiB");
  }, 60_000);
});

describe("b: alert targets are validated in linear time, lengths first", () => {
  it("a 60,000-character email target is refused at once and nothing else waits", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/alerts/new`)).text());
    const { result, worstMs } = await worstProbeDuring(async () => {
      const t = performance.now();
      const res = await jar.form(`${srv.url}/alerts`, { _csrf: csrf, name: "redos", trigger_type: "run_error", channel: "email", target: "a".repeat(30_000) + "@" + "b".repeat(30_000), enabled: "on" });
      return { status: res.status, text: await res.text(), ms: performance.now() - t };
    });
    expect(result.status).toBe(422);
    expect(result.text).toMatch(/at most \d+ characters/);
    expect(result.ms).toBeLessThan(1_000);
    expect(worstMs).toBeLessThan(500);
  });

  it("l: a webhook to an IPv4-compatible or IPv4-translated loopback address is refused", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/alerts/new`)).text());
    for (const target of ["http://[::7f00:1]:9/hook", "http://[::ffff:0:7f00:1]:9/hook"]) {
      const res = await jar.form(`${srv.url}/alerts`, { _csrf: csrf, name: "ssrf", trigger_type: "run_error", channel: "webhook", target, enabled: "on" });
      expect(res.status, target).toBe(422);
      expect(await res.text()).toContain("is not allowed");
    }
  });

  it("l: a refused target says only that it is not allowed: never what the name resolves to, nor whether it exists", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/alerts/new`)).text());
    const said: string[] = [];
    for (const host of ["localhost", "no-such-name.invalid"]) {
      const res = await jar.form(`${srv.url}/alerts`, { _csrf: csrf, name: "ssrf", trigger_type: "run_error", channel: "webhook", target: `http://${host}:9/hook`, enabled: "on" });
      expect(res.status, host).toBe(422);
      const text = await res.text();
      expect(text, host).toContain(`host ${host} is not allowed`);
      said.push(text.split(host).join("HOST"));
      // A project's provider base URL, as its admin saves it through the API.
      const put = await fetch(`${srv.url}/api/provider-keys/openai`, { ...json(alice.key, { api_key: "sk-0123456789", base_url: `http://${host}:11434/v1` }), method: "PUT" });
      const body = (await put.json()) as { error: { field: string; message: string } };
      expect([put.status, body.error.field], host).toEqual([422, "base_url"]);
      expect(body.error.message, host).toMatch(new RegExp(`^base_url host ${host.replace(/\./g, "\\.")} is not allowed`));
      for (const words of [text, body.error.message]) expect(words, host).not.toMatch(/127\.0\.0\.1|::1|resolve[sd]? to \d|ENOTFOUND|EAI_AGAIN/);
    }
    // The page reads the same for a name that resolves to loopback and for one that does not exist.
    const refusal = (html: string) => /host HOST is not allowed[^<]*/.exec(html)?.[0];
    expect(refusal(said[0]!)).toBeDefined();
    expect(refusal(said[0]!)).toBe(refusal(said[1]!));
  });
});

describe("c: logins and registrations are throttled, and say nothing about which accounts exist", () => {
  it("after 10 wrong passwords the account answers 429 with Retry-After, even to the right password", async () => {
    const u = await srv.user();
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
    const statuses: number[] = [];
    const { worstMs } = await worstProbeDuring(async () => {
      for (let i = 0; i < 15; i++) statuses.push((await jar.form(`${srv.url}/login`, { _csrf: csrf, email: u.email, password: `wrong-${i}` })).status);
    });
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(5).fill(429));
    const right = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: u.email, password: "correct horse battery" });
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(60);
    expect(await right.text()).toContain("Too many attempts");
    expect(worstMs).toBeLessThan(500);
    // An unknown email gets the very same answers.
    const ghost = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: "nobody-here@example.com", password: "wrong" });
    expect(ghost.status).toBe(401);
    expect(await ghost.text()).toContain("Wrong email or password.");
    // Another account is not locked by it.
    expect((await jar.form(`${srv.url}/login`, { _csrf: csrf, email: alice.email, password: "correct horse battery" })).status).toBe(302);
  }, 60_000);

  it("registering a taken email answers like any unusable email (no 409)", async () => {
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register`)).text());
    const res = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "Copy", email: alice.email.toUpperCase(), password: "long enough pw", password_confirm: "long enough pw" });
    expect(res.status).toBe(422);
    expect(await res.text()).not.toMatch(/already exists/);
  });

  it("registrations per IP are limited (RUNWATCH_REGISTRATION=closed: security-settings.test.ts)", async () => {
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register`)).text());
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const r = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "N", email: "not-an-email", password: "x", password_confirm: "x" });
      statuses.push(r.status);
    }
    // 20 a window per IP, counting this file's earlier registration.
    const first429 = statuses.indexOf(429);
    expect(first429).toBeGreaterThanOrEqual(18);
    expect(first429).toBeLessThanOrEqual(20);
    expect(statuses.slice(0, first429).every((s) => s === 422)).toBe(true);
    expect(statuses.slice(first429).every((s) => s === 429)).toBe(true);
  });
});

describe("d: sizes are bounded in what is stored and what is answered", () => {
  it("last_error is cut to 1,000 characters in the run; event pages end by bytes too", async () => {
    const send = (e: unknown) => fetch(`${srv.url}/api/ingest`, json(alice.key, e)).then((r) => expect(r.status).toBe(202));
    await send({ event_type: "run_start", sdk_run_id: "big-run", agent_name: "big", payload: {} });
    await send({ event_type: "error", sdk_run_id: "big-run", payload: { error_message: "E".repeat(200_000) } });
    for (let i = 0; i < 16; i++) await send({ event_type: "step", sdk_run_id: "big-run", payload: { node_name: `n${i}`, phase: "end", output: "o".repeat(900_000) } });
    const run = await waitForRun(srv.url, alice.key, "big-run", (b) => b.run.event_count === 18, 30_000);
    expect(run.run.last_error.length).toBeLessThanOrEqual(1_000);
    const res = await fetch(`${srv.url}/api/runs/big-run?limit=5000`, bearer(alice.key));
    const text = await res.text();
    const body = JSON.parse(text) as { events: { event_id: string }[]; next_after: string | null };
    expect(text.length).toBeLessThan(9 * 1024 * 1024);
    expect(body.events.length).toBeLessThan(18);
    expect(body.next_after).toBe(body.events.at(-1)!.event_id);
    const rest = (await (await fetch(`${srv.url}/api/runs/big-run?limit=5000&after=${body.next_after}`, bearer(alice.key))).json()) as { events: unknown[] };
    expect(rest.events.length).toBeGreaterThan(0);
    const list = (await (await fetch(`${srv.url}/api/runs`, bearer(alice.key))).json()) as { runs: { last_error: string }[] };
    expect(Math.max(...list.runs.map((r) => r.last_error.length))).toBeLessThanOrEqual(1_000);
  }, 60_000);
});

describe("e: outbound resources have per-user quotas", () => {
  it("test notifications: the budget per hour, then 429", async () => {
    const jar = await loginJar(srv.url, bob.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/alerts/new`)).text());
    await jar.form(`${srv.url}/alerts`, { _csrf: csrf, name: "dash", trigger_type: "run_error", channel: "dashboard", enabled: "on" });
    const [rule] = await srv.ports.sql.query<{ id: string }>("SELECT id FROM alert_rules WHERE project_id = $1", [bob.id]);
    const t0 = performance.now();
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await jar.form(`${srv.url}/alerts/${rule!.id}/test`, { _csrf: csrf })).status);
    expect(statuses).toEqual([302, 302, 429]);
    expect(performance.now() - t0).toBeLessThan(3_000);
  });

  it("/improve: a quota per user, and a daily spend cap for the operator", async () => {
    const jar = await loginJar(srv.url, bob.email);
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/improve`)).text());
    const first = await jar.form(`${srv.url}/improve`, { _csrf: csrf, code: "print(1)" });
    expect(first.status).not.toBe(429);
    const second = await jar.form(`${srv.url}/improve`, { _csrf: csrf, code: "print(1)" });
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBeTruthy();
    // The operator's budget: spent for today → everyone gets 429 until midnight UTC.
    await srv.ports.sql.query("INSERT INTO improve_spend (day, cost_usd, calls) VALUES ($1, 1000, 1) ON CONFLICT (day) DO UPDATE SET cost_usd = 1000", [new Date().toISOString().slice(0, 10)]);
    const other = await loginJar(srv.url, alice.email);
    const c2 = csrfFrom(await (await other.fetch(`${srv.url}/improve`)).text());
    const capped = await other.form(`${srv.url}/improve`, { _csrf: c2, code: "print(1)" });
    expect(capped.status).toBe(429);
    expect(await capped.text()).toContain("budget for code improvement");
  });
});

describe("f: CSRF is skipped only on routes that authenticate by Bearer", () => {
  it("a session cookie plus any Authorization header, without the token, creates nothing", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const res = await jar.fetch(`${srv.url}/settings/api-keys`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: "Bearer x" },
      body: "name=stolen",
    });
    expect(res.status).toBe(403);
    expect(await srv.ports.sql.query("SELECT 1 FROM api_keys WHERE name = 'stolen'")).toHaveLength(0);
  });
});

describe("g: duplicate detection is per tenant", () => {
  it("another tenant's stored event_id does not drop my event", async () => {
    const id = "0190f0f0-0000-7000-8000-000000000abc";
    const ev = (run: string) => ({ event_type: "run_start", sdk_run_id: run, agent_name: "dup", event_id: id, payload: {} });
    for (let round = 0; round < 3; round++) {
      const [a, b] = await Promise.all([
        fetch(`${srv.url}/api/ingest`, json(alice.key, ev(`dup-a-${round}`))),
        fetch(`${srv.url}/api/ingest`, json(bob.key, ev(`dup-b-${round}`))),
      ]);
      expect([a.status, b.status]).toEqual([202, 202]);
      await waitForRun(srv.url, alice.key, `dup-a-${round}`, (x) => x.events.length === 1);
      await waitForRun(srv.url, bob.key, `dup-b-${round}`, (x) => x.events.length === 1);
    }
  }, 60_000);
});

describe("i: the realtime token stays out of URLs, and logging out closes the session's sockets", () => {
  it("token in the subprotocol; logout closes the socket; the old token opens nothing", async () => {
    const jar = await loginJar(srv.url, alice.email);
    const info = (await (await jar.fetch(`${srv.url}/api/realtime/token`)).json()) as { token: string; protocols: string[]; url: string; channel: string };
    expect(info.url).not.toContain(info.token);
    const open = (protocols: string[]) => {
      const ws = new WebSocket(`${gateway.url}/ws`, protocols);
      const frames: { type: string; error?: { code: string } }[] = [];
      ws.on("message", (d) => {
        const f = JSON.parse(String(d));
        frames.push(f);
        if (f.type === "hello") ws.send(JSON.stringify({ type: "subscribe", channel: info.channel }));
      });
      const closed = new Promise<number>((r) => ws.on("close", (code) => r(code)));
      return { ws, frames, closed };
    };
    const live = open(info.protocols);
    for (let i = 0; !live.frames.some((f) => f.type === "subscribed"); i++) {
      if (i > 100) throw new Error(`not subscribed: ${JSON.stringify(live.frames)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/settings`)).text());
    expect((await jar.form(`${srv.url}/logout`, { _csrf: csrf })).status).toBe(302);
    expect(await live.closed).toBe(4401);
    expect(live.frames.at(-1)?.error?.code).toBe("session_ended");
    const replay = open(info.protocols);
    expect(await replay.closed).toBe(4401);
    expect(replay.frames[0]?.error?.code).toBe("session_ended");
  });
});

describe("j: password hashes", () => {
  it("new hashes use scrypt N=2^17; an old N=2^14 hash still logs in and is upgraded", async () => {
    const u = await srv.user();
    const [row] = await srv.ports.sql.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE id = $1", [u.id]);
    expect(row!.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    await srv.ports.sql.query("UPDATE users SET password_hash = $1 WHERE id = $2", [await hashPasswordWith("correct horse battery", 16384), u.id]);
    await loginJar(srv.url, u.email);
    const [after] = await srv.ports.sql.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE id = $1", [u.id]);
    expect(after!.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    await loginJar(srv.url, u.email);
  });
});

describe("k: response headers", () => {
  it("a Host header that makes no URL still gets a page with a CSP, never a 500", async () => {
    const { port } = new URL(srv.url);
    const statusLine = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(Number(port), "127.0.0.1", () => sock.write("GET /login HTTP/1.1\r\nHost: a b:99999\r\nConnection: close\r\n\r\n"));
      let out = "";
      sock.on("data", (d) => (out += d));
      sock.on("end", () => resolve(out));
      sock.on("error", reject);
    });
    expect(statusLine).toMatch(/^HTTP\/1\.1 [234]\d\d /);
    if (statusLine.startsWith("HTTP/1.1 200")) expect(statusLine).toMatch(/content-security-policy: default-src 'self'; script-src 'self'/i);
  });

  it("pages carry a strict CSP (no inline script), frame-ancestors, Referrer-Policy; no page has an inline script", async () => {
    const jar = await loginJar(srv.url, alice.email);
    for (const p of ["/login", "/dashboard", "/alerts", "/improve", "/agents", "/settings", "/dead-letters"]) {
      const res = await jar.fetch(`${srv.url}${p}`);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp, p).toContain("script-src 'self'");
      expect(csp, p).not.toContain("unsafe-inline'; script");
      expect(csp, p).toContain("frame-ancestors 'none'");
      expect(csp, p).toContain(`connect-src 'self' ws://127.0.0.1:`);
      expect(res.headers.get("referrer-policy"), p).toBe("same-origin");
      expect(res.headers.get("x-frame-options"), p).toBe("DENY");
      const html = await res.text();
      expect(html.match(/<script(?![^>]*\bsrc=)[^>]*>/g) ?? [], p).toEqual([]);
      expect(html, p).not.toMatch(/\son[a-z]+="/);
    }
    expect((await fetch(`${srv.url}/api/runs`, bearer(alice.key))).headers.get("content-security-policy")).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
