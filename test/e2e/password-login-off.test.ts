/**
 * RUNWATCH_PASSWORD_LOGIN=off with single sign-on configured (docs/TEAMS.md): the login page offers only the
 * provider's button, and a password login or a registration posted anyway is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CookieJar, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    env: { RUNWATCH_PASSWORD_LOGIN: "off", RUNWATCH_OIDC_ISSUER: "http://127.0.0.1:9/", RUNWATCH_OIDC_CLIENT_ID: "runwatch", RUNWATCH_OIDC_LABEL: "Sign in with Corp" },
  });
});
afterAll(async () => {
  await srv?.close();
});

describe("passwords turned off", () => {
  it("shows only single sign-on, refuses password logins and registrations, and reports an unreachable provider", async () => {
    const user = await srv.user(`pw-${Date.now()}@example.com`);
    const jar = new CookieJar();
    const page = await (await jar.fetch(`${srv.url}/login`)).text();
    expect(page).toContain("Sign in with Corp");
    expect(page).not.toContain('name="password"');
    expect(page).not.toContain('href="/register"');
    // No form on the page: the anonymous CSRF token is the value of its signed cookie (what a form would carry).
    const csrf = /runwatch\.csrf=([^;]+)/.exec(jar.header())![1]!;
    const login = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" });
    expect(login.status).toBe(403);
    expect(await login.text()).toContain("Passwords are turned off here");
    expect((await jar.fetch(`${srv.url}/register`)).status).toBe(403);
    expect((await jar.form(`${srv.url}/register`, { _csrf: csrf, email: "x@example.com", name: "X", password: "correct horse battery" })).status).toBe(403);
    // The provider does not answer (port 9): a clear 503 page, not a 500.
    const sso = await jar.fetch(`${srv.url}/auth/oidc/login`);
    expect(sso.status).toBe(503);
    expect(await sso.text()).toContain("cannot be reached right now");
  }, 60_000);
});
