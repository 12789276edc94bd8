/**
 * Single sign-on in a real browser against a real OpenID Connect provider on loopback (`oidc-provider`, its
 * development login and consent pages): the authorization code flow with PKCE, a new account with its personal
 * project and the default project's role, the same identity signing in again, and refusals — a domain not allowed,
 * an unverified address, a callback replayed or forged, passwords turned off (docs/TEAMS.md, Single sign-on); and
 * the account someone registered with a colleague's address before the colleague's first sign-in, which single
 * sign-on does not take over, unless its owner links it by logging in with its password first.
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
  victim: { email: "victim@corp.example", email_verified: true, name: "Victor" },
  lin: { email: "lin@corp.example", email_verified: true, name: "Lin" },
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

  /** The status of the last answer from Runwatch's single sign-on callback. */
  let lastCallbackStatus = 0;

  /** From Runwatch's login page through the provider's login and consent pages; the page where it ends. */
  async function signIn(login: string): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    page.on("request", (r) => {
      if (r.url().startsWith(`${srv.url}/auth/oidc/callback`)) lastCallback = r.url();
    });
    page.on("response", (r) => {
      if (r.url().startsWith(`${srv.url}/auth/oidc/callback`)) lastCallbackStatus = r.status();
    });
    await page.goto(`${srv.url}/login?next=%2Fsettings%2Fproject`);
    await page.getByRole("link", { name: "Sign in with Corp" }).click();
    await throughProvider(page, login);
    return page;
  }

  /**
   * On to the provider, through its login page (when it has no session for this browser) and consent page, and back
   * to the page of Runwatch where the sign-in ends.
   */
  async function throughProvider(page: Page, login: string): Promise<void> {
    const atProvider = (u: URL) => !u.href.startsWith(srv.url);
    const settled = (u: URL) => atProvider(u) || !["/login", "/auth/oidc/login"].includes(u.pathname);
    for (let step = 0; step < 3; step++) {
      await page.waitForURL(settled);
      await page.waitForLoadState();
      if (!atProvider(new URL(page.url()))) return;
      const loginForm = (await page.locator("input[name=login]").count()) > 0;
      if (loginForm) {
        await page.locator("input[name=login]").fill(login);
        await page.locator("input[name=password]").fill("any");
      }
      // Login, then consent: each posts and lands on a page again (the same address, or on to Runwatch).
      await Promise.all([page.waitForEvent("framenavigated", (f) => f === page.mainFrame()), page.locator("button[type=submit]").click()]);
    }
    throw new Error(`the sign-in did not come back from the provider: ${page.url()}`);
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

  it("does not take over an account someone registered with the address: the sign-in is refused, saying what to do", async () => {
    // Before the colleague ever signs in, someone registers their address with a password of their own.
    const squatter = await createUser(srv.ports.sql, { email: "victim@corp.example", name: "Not Victor", password: "squatter's password" });
    const page = await signIn("victim");
    expect(lastCallbackStatus).toBe(409);
    const text = await page.locator("main, body").first().innerText();
    expect(text).toContain("An account with victim@corp.example already exists, made with a password, and its address was never verified");
    expect(await page.getByRole("link", { name: "Log in with the password" }).count()).toBe(1);
    await page.screenshot({ path: path.join(ARTIFACTS, "sso-unverified-account.png") });
    // Nothing was linked: the squatter's password does not open the colleague's single sign-on, nor the reverse.
    expect(await srv.ports.sql.query("SELECT 1 FROM user_identities WHERE subject = 'victim'")).toEqual([]);
    expect((await projectsOf(srv.ports.sql, squatter.id)).map((p) => p.slug)).toEqual(["victim"]);
    await page.goto(`${srv.url}/settings/project`);
    expect(new URL(page.url()).pathname).toBe("/login");
  }, 60_000);

  it("links the account when its owner logs in with its password first, and gives it what a first sign-in gets", async () => {
    const lin = await createUser(srv.ports.sql, { email: "lin@corp.example", name: "Lin", password: "correct horse battery" });
    const page = await signIn("lin");
    expect(lastCallbackStatus).toBe(409);
    await page.getByRole("link", { name: "Log in with the password" }).click();
    await page.locator("input[name=email]").fill("lin@corp.example");
    await page.locator("input[name=password]").fill("correct horse battery");
    await page.locator("form[action='/login'] button[type=submit]").click();
    await page.waitForURL((u) => u.pathname === "/auth/oidc/link");
    expect(await page.locator("main, body").first().innerText()).toContain("You are logged in as lin@corp.example");
    await page.getByRole("link", { name: "Sign in with Corp" }).click();
    await throughProvider(page, "lin");
    expect(lastCallbackStatus).toBe(302);
    expect(new URL(page.url()).pathname).toBe("/settings/project");
    await page.screenshot({ path: path.join(ARTIFACTS, "sso-linked-account.png") });
    expect((await srv.ports.sql.query<{ user_id: unknown }>("SELECT user_id FROM user_identities WHERE subject = 'lin'")).map((r) => Number(r.user_id))).toEqual([lin.id]);
    expect((await projectsOf(srv.ports.sql, lin.id)).map((p) => [p.slug, p.role])).toEqual([["lin", "owner"], [teamSlug, "member"]]);
    // From now on single sign-on alone opens it.
    const again = await signIn("lin");
    expect(new URL(again.url()).pathname).toBe("/settings/project");
    expect(await again.content()).toContain("lin@corp.example");
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
