/**
 * Single sign-on in a real browser against a real OpenID Connect provider on loopback (`oidc-provider`, its
 * development login and consent pages): the authorization code flow with PKCE, a new account with its personal
 * project and the default project's role, the same identity signing in again, and refusals — a domain not allowed,
 * an unverified address, a callback replayed or forged, passwords turned off (docs/TEAMS.md, Single sign-on).
 */
import http from "node:http";
import path from "node:path";
import Provider from "oidc-provider";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, projectsOf } from "../../stores/accounts/projects.js";
import { createUser, findUserByEmail } from "../../stores/accounts/users.js";
import { freePort, startTestServer, type TestServer } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, launchBrowser } from "./stack.js";

/** The provider's accounts: login name → claims. Any password logs in (its development pages). */
const ACCOUNTS: Record<string, { email: string; email_verified: boolean; name: string }> = {
  ada: { email: "ada@corp.example", email_verified: true, name: "Ada Lovelace" },
  eve: { email: "eve@elsewhere.example", email_verified: true, name: "Eve" },
  mal: { email: "owner@corp.example", email_verified: false, name: "Mallory" },
};

describe.skipIf(!haveBrowser)("single sign-on with OpenID Connect", () => {
  let srv: TestServer;
  let idp: http.Server;
  let browser: Browser;
  let teamSlug = "";

  beforeAll(async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    srv = await startTestServer({
      env: {
        RUNWATCH_OIDC_ISSUER: issuer, RUNWATCH_OIDC_CLIENT_ID: "runwatch", RUNWATCH_OIDC_CLIENT_SECRET: "a-client-secret",
        RUNWATCH_OIDC_ALLOWED_DOMAINS: "corp.example", RUNWATCH_OIDC_DEFAULT_PROJECT: "corp-agents", RUNWATCH_OIDC_DEFAULT_ROLE: "member",
        RUNWATCH_OIDC_LABEL: "Sign in with Corp", SMTP_HOST: "",
      },
    });
    const owner = await createUser(srv.ports.sql, { email: "owner@corp.example", name: "Owner", password: "correct horse battery" });
    teamSlug = (await createProject(srv.ports.sql, owner.id, "Corp agents")).slug;
    const provider = new Provider(issuer, {
      clients: [{ client_id: "runwatch", client_secret: "a-client-secret", redirect_uris: [`${srv.url}/auth/oidc/callback`], grant_types: ["authorization_code"], response_types: ["code"] }],
      claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
      findAccount: async (_ctx: unknown, sub: string) => (ACCOUNTS[sub] ? { accountId: sub, claims: async () => ({ sub, ...ACCOUNTS[sub] }) } : undefined),
      pkce: { required: () => true },
      features: { devInteractions: { enabled: true } },
    });
    idp = http.createServer(provider.callback());
    await new Promise<void>((resolve) => idp.listen(port, "127.0.0.1", resolve));
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => idp?.close(resolve));
    await srv?.close();
  });

  /** The callback URL the provider sent the browser to, last. */
  let lastCallback = "";

  /** From Runwatch's login page through the provider's login and consent pages; the page where it ends. */
  async function signIn(login: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.on("request", (r) => {
      if (r.url().startsWith(`${srv.url}/auth/oidc/callback`)) lastCallback = r.url();
    });
    await page.goto(`${srv.url}/login?next=%2Fsettings%2Fproject`);
    await page.getByRole("link", { name: "Sign in with Corp" }).click();
    await page.locator("input[name=login]").fill(login);
    await page.locator("input[name=password]").fill("any");
    await page.locator("button[type=submit]").click();
    await page.waitForLoadState();
    if (page.url().startsWith("http://127.0.0.1") && !page.url().startsWith(srv.url)) await page.locator("button[type=submit]").click(); // consent
    await page.waitForURL((u) => u.href.startsWith(srv.url));
    return page;
  }

  it("makes an account at the first sign-in, in its personal project and the default project, and signs it in again", async () => {
    const page = await signIn("ada");
    expect(new URL(page.url()).pathname).toBe("/settings/project");
    await page.screenshot({ path: path.join(ARTIFACTS, "sso-first-sign-in.png") });
    const ada = (await findUserByEmail(srv.ports.sql, "ada@corp.example"))!;
    expect(ada.name).toBe("Ada Lovelace");
    expect((await projectsOf(srv.ports.sql, ada.id)).map((p) => [p.slug, p.role, p.personal])).toEqual([["ada", "owner", true], [teamSlug, "member", false]]);
    const again = await signIn("ada");
    expect(new URL(again.url()).pathname).toBe("/settings/project");
    expect(await again.content()).toContain("ada@corp.example");
    expect((await srv.ports.sql.query("SELECT 1 FROM users WHERE lower(email) = 'ada@corp.example'")).length).toBe(1);
  }, 60_000);

  it("refuses a domain not allowed and an unverified address (which would take over an account)", async () => {
    const eve = await signIn("eve");
    expect(await eve.content()).toContain("elsewhere.example addresses may not sign in here");
    const mal = await signIn("mal");
    expect(await mal.content()).toContain("has not verified owner@corp.example");
    expect((await srv.ports.sql.query("SELECT 1 FROM user_identities WHERE subject IN ('eve', 'mal')")).length).toBe(0);
  }, 60_000);

  it("refuses a callback it did not start, or one replayed", async () => {
    const forged = await fetch(`${srv.url}/auth/oidc/callback?code=abc&state=xyz`, { redirect: "manual" });
    expect(forged.status).toBe(400);
    const page = await signIn("ada");
    expect(new URL(page.url()).pathname).toBe("/settings/project");
    const callback = lastCallback;
    expect(callback).toContain("code=");
    const replay = await page.goto(callback);
    expect(replay!.status()).toBe(400);
  }, 60_000);
});
