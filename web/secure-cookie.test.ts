/** Behind a TLS proxy (https public URL), session and CSRF cookies are Secure. */
import { afterAll, beforeAll, expect, it } from "vitest";
import { CookieJar, csrfFrom, startTestServer, type TestServer } from "../test/e2e/harness.js";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ env: { RUNWATCH_PUBLIC_URL: "https://runwatch.example.com" } });
});
afterAll(() => srv?.close());

it("sets Secure, httpOnly, SameSite=Lax cookies when the public URL is https", async () => {
  const jar = new CookieJar();
  const proxied = { "x-forwarded-proto": "https" };
  const page = await jar.fetch(`${srv.url}/register`, { headers: proxied });
  const res = await jar.fetch(`${srv.url}/register`, {
    method: "POST",
    headers: { ...proxied, "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ _csrf: csrfFrom(await page.text()), name: "S", email: "secure@example.com", password: "long enough", password_confirm: "long enough" }).toString(),
  });
  expect(res.status).toBe(302);
  const sid = jar.seen.filter((c) => c.startsWith("runwatch.sid="));
  expect(sid.length).toBeGreaterThan(0);
  for (const c of [...sid, ...jar.seen.filter((c) => c.startsWith("runwatch.csrf="))]) {
    expect(c).toMatch(/; secure/i);
    expect(c).toMatch(/; httponly/i);
    expect(c).toMatch(/; samesite=lax/i);
  }
});
