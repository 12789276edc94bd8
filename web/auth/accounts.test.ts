/** Accounts over real HTTP: register, login, logout, sessions, CSRF, and API keys (shown once, stored hashed). */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../core/ids.js";
import { CookieJar, csrfFrom, json, startTestServer, type TestServer } from "../../test/e2e/harness.js";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv?.close());

/** Registers a fresh account in a new browser; returns the logged-in jar. */
async function registered(email = `u${Date.now()}${Math.random().toString(36).slice(2, 6)}@example.com`) {
  const jar = new CookieJar();
  const page = await jar.fetch(`${srv.url}/register`);
  const res = await jar.form(`${srv.url}/register`, { _csrf: csrfFrom(await page.text()), name: "Ada", email, password: "s3cret-pass", password_confirm: "s3cret-pass" });
  expect(res.status).toBe(302);
  expect(res.headers.get("location")).toBe("/settings/api-keys");
  return { jar, email };
}

async function keysPage(jar: CookieJar) {
  const res = await jar.fetch(`${srv.url}/settings/api-keys`);
  expect(res.status).toBe(200);
  return res.text();
}

describe("pages and redirects", () => {
  it("GET / goes to /login when logged out, to /dashboard when logged in", async () => {
    const anon = await fetch(`${srv.url}/`, { redirect: "manual" });
    expect(anon.status).toBe(302);
    expect(anon.headers.get("location")).toBe("/login");
    const { jar } = await registered();
    const res = await jar.fetch(`${srv.url}/`);
    expect(res.headers.get("location")).toBe("/dashboard");
  });

  it("session-only pages redirect to /login with next; session APIs answer 401 JSON", async () => {
    const res = await fetch(`${srv.url}/settings/api-keys`, { redirect: "manual" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("/login?next=%2Fsettings%2Fapi-keys");
  });
});

describe("register", () => {
  it("creates the account, logs in with a session cookie that is httpOnly and SameSite=Lax", async () => {
    const { jar } = await registered();
    const sid = jar.seen.filter((c) => c.startsWith("runwatch.sid="));
    expect(sid.length).toBeGreaterThan(0);
    expect(sid.at(-1)).toMatch(/httponly/i);
    expect(sid.at(-1)).toMatch(/samesite=lax/i);
    expect(sid.at(-1)).not.toMatch(/secure/i); // the public URL is http here
    expect(await keysPage(jar)).toContain("Your keys");
  });

  it("re-renders the form with a clear error per field, keeping the values typed", async () => {
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register`)).text());
    const short = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "Bob", email: "bob@example.com", password: "short", password_confirm: "short" });
    expect(short.status).toBe(422);
    const html = await short.text();
    expect(html).toContain("The password needs at least 8 characters.");
    expect(html).toContain('value="bob@example.com"');
    const bad = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "Bob", email: "not-an-email", password: "long enough", password_confirm: "long enough" });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain("Enter a valid email address");
    const mismatch = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "Bob", email: "bob@example.com", password: "long enough", password_confirm: "other one" });
    expect(await mismatch.text()).toContain("The passwords do not match.");
  });

  it("a taken email (case-insensitive) is refused with the same 422 as any unusable email, not a 409 that confirms the account", async () => {
    const { email } = await registered();
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/register`)).text());
    const res = await jar.form(`${srv.url}/register`, { _csrf: csrf, name: "X", email: email.toUpperCase(), password: "long enough", password_confirm: "long enough" });
    expect(res.status).toBe(422);
    const text = await res.text();
    expect(text).toContain("This email cannot be used for a new account.");
    expect(text).not.toContain("already exists");
  });

  it("stores only a scrypt hash of the password", async () => {
    const { email } = await registered();
    const rows = await srv.ports.sql.query<{ password_hash: string }>("SELECT password_hash FROM users WHERE email = $1", [email]);
    expect(rows[0]!.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(rows[0]!.password_hash).not.toContain("s3cret-pass");
  });
});

describe("login and logout", () => {
  it("wrong password → 401 with the form again; right one → session, then logout ends it server-side", async () => {
    const { email } = await registered();
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
    const wrong = await jar.form(`${srv.url}/login`, { _csrf: csrf, email, password: "nope nope" });
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Wrong email or password.");
    const unknown = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: "ghost@example.com", password: "whatever1" });
    expect(unknown.status).toBe(401);

    const ok = await jar.form(`${srv.url}/login`, { _csrf: csrf, email, password: "s3cret-pass", next: "/settings/api-keys" });
    expect(ok.status).toBe(302);
    expect(ok.headers.get("location")).toBe("/settings/api-keys");
    const page = await keysPage(jar);
    const stolenCookie = jar.header();

    const out = await jar.form(`${srv.url}/logout`, { _csrf: csrfFrom(page) });
    expect(out.status).toBe(302);
    expect(out.headers.get("location")).toBe("/login");
    // The old cookie no longer opens a session: the row is gone from the store.
    const replay = await fetch(`${srv.url}/settings/api-keys`, { headers: { cookie: stolenCookie }, redirect: "manual" });
    expect(replay.status).toBe(302);
    expect(replay.headers.get("location")).toMatch(/^\/login/);
  });

  it("never redirects off-site after login", async () => {
    const { email } = await registered();
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
    const res = await jar.form(`${srv.url}/login`, { _csrf: csrf, email, password: "s3cret-pass", next: "//evil.example.com/x" });
    expect(res.headers.get("location")).toBe("/dashboard");
  });

  it("a new session id is issued at login (no session fixation)", async () => {
    const { email, jar: first } = await registered();
    const before = first.header();
    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
    await jar.form(`${srv.url}/login`, { _csrf: csrf, email, password: "s3cret-pass" });
    expect(jar.header()).not.toBe(before);
  });
});

describe("CSRF", () => {
  it("rejects POSTs without the token or with a wrong one (403), for forms and for logged-in actions", async () => {
    const anon = new CookieJar();
    await anon.fetch(`${srv.url}/login`);
    const noToken = await anon.form(`${srv.url}/login`, { email: "a@example.com", password: "x" });
    expect(noToken.status).toBe(403);
    expect(await noToken.text()).toContain("Reload the page");

    const { jar } = await registered();
    const page = await keysPage(jar);
    const missing = await jar.form(`${srv.url}/settings/api-keys`, { name: "k" });
    expect(missing.status).toBe(403);
    const wrong = await jar.form(`${srv.url}/settings/api-keys`, { _csrf: "A".repeat(43), name: "k" });
    expect(wrong.status).toBe(403);
    // A token from another browser's session does not work either.
    const other = await registered();
    const foreign = csrfFrom(await keysPage(other.jar));
    expect((await jar.form(`${srv.url}/settings/api-keys`, { _csrf: foreign, name: "k" })).status).toBe(403);
    // JSON clients of session APIs can send the header instead.
    const viaHeader = await jar.fetch(`${srv.url}/settings/api-keys`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-csrf-token": csrfFrom(page) },
      body: "name=via-header",
    });
    expect(viaHeader.status).toBe(201);
  });
});

describe("API keys page", () => {
  it("shows a new key exactly once, stores only its hash, lists it by last 4, and revocation stops it at once", async () => {
    const { jar } = await registered();
    const page = await keysPage(jar);
    const created = await jar.form(`${srv.url}/settings/api-keys`, { _csrf: csrfFrom(page), name: "prod agents", expires: "30d" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const html = await created.text();
    const key = /<code id="new-key">([0-9a-f]{64})<\/code>/.exec(html)?.[1];
    expect(key).toBeDefined();

    const list = await keysPage(jar);
    expect(list).not.toContain(key!);
    expect(list).toContain("prod agents");
    expect(list).toContain(`…${key!.slice(-4)}`);

    const rows = await srv.ports.sql.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE name = 'prod agents'");
    const row = rows.find((r) => r.key_hash === hashApiKey(key!));
    expect(row).toBeDefined();
    expect(Object.values(row!).map(String)).not.toContain(key);
    const days = (new Date(row!.expires_at as string).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThan(30.1);

    const event = { event_type: "run_start", sdk_run_id: "from-page", agent_name: "a", payload: {} };
    expect((await fetch(`${srv.url}/api/ingest`, json(key!, event))).status).toBe(202);
    await new Promise((r) => setTimeout(r, 50));
    // last_used_at is recorded (at most once a minute).
    const used = await srv.ports.sql.query<{ last_used_at: unknown }>("SELECT last_used_at FROM api_keys WHERE id = $1", [row!.id]);
    expect(used[0]!.last_used_at).not.toBeNull();
    expect(await keysPage(jar)).not.toMatch(/<td>never<\/td>\s*<td>\s*<form/);

    const id = Number(row!.id);
    const revoke = await jar.form(`${srv.url}/settings/api-keys/${id}/revoke`, { _csrf: csrfFrom(list) });
    expect(revoke.status).toBe(302);
    const denied = await fetch(`${srv.url}/api/ingest`, json(key!, event));
    expect(denied.status).toBe(401);
    expect(((await denied.json()) as { error: { code: string } }).error.code).toBe("invalid_api_key");
    expect(await keysPage(jar)).not.toContain("prod agents");
  });

  it("refuses to revoke another user's key", async () => {
    const a = await registered();
    const b = await registered();
    const pageA = await keysPage(a.jar);
    await a.jar.form(`${srv.url}/settings/api-keys`, { _csrf: csrfFrom(pageA), name: "a-key" });
    const [row] = await srv.ports.sql.query<{ id: number }>("SELECT id FROM api_keys WHERE name = 'a-key'");
    const res = await b.jar.form(`${srv.url}/settings/api-keys/${row!.id}/revoke`, { _csrf: csrfFrom(await keysPage(b.jar)) });
    expect(res.status).toBe(404);
    expect((await srv.ports.sql.query("SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL", [row!.id])).length).toBe(1);
  });

  it("explains a missing name and an expiry in the past", async () => {
    const { jar } = await registered();
    const page = await keysPage(jar);
    const noName = await jar.form(`${srv.url}/settings/api-keys`, { _csrf: csrfFrom(page), name: " " });
    expect(noName.status).toBe(422);
    expect(await noName.text()).toContain("the key needs a name");
    const past = await jar.form(`${srv.url}/settings/api-keys`, { _csrf: csrfFrom(page), name: "old", expires_on: "2020-01-01" });
    expect(past.status).toBe(422);
    expect(await past.text()).toContain("the expiry must be in the future");
  });
});
