/**
 * A team in Chromium against web + pipeline + gateway (docs/TEAMS.md): Ada registers, creates a project from the
 * project page and invites Bob as a member and Carol as a viewer (the links are shown: no mail server here); each
 * registers in a browser of their own and accepts. A run sent with a key of the project appears live on all three
 * dashboards; Carol reads it but her feedback is refused; Ada removes Bob and his open socket closes. Screenshots:
 * test/artifacts/project-settings.png, project-switcher.png.
 */
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createApiKey } from "../../stores/accounts/api-keys.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { ARTIFACTS, haveBrowser, register, useBrowserStack } from "./stack.js";

const live = (page: Page) => page.waitForSelector('#live-indicator[data-state="live"]', { timeout: 10_000 });

describe.skipIf(!haveBrowser)("a team shares a project", () => {
  const env = useBrowserStack();

  it("register, create a project, invite a member and a viewer, see the same live dashboard, remove a member", async () => {
    const stack = env.stack();
    const base = stack.url;
    const viewport = { width: 1400, height: 900 };
    const stamp = Date.now();
    const contexts: BrowserContext[] = [];
    const browserOf = async () => {
      const c = await env.browser().newContext({ viewport });
      contexts.push(c);
      return c;
    };
    const ada = await register(await browserOf(), base, "Ada Lovelace", `ada-${stamp}@example.com`);

    // A project from the project page; the dashboard switches to it.
    await ada.goto(`${base}/settings/project`);
    await ada.click(".new-project summary");
    await ada.fill(".new-project input[name=name]", "Support team");
    await Promise.all([ada.waitForURL(/\/p\/support-team\/settings\/project/), ada.click(".new-project button[type=submit]")]);
    expect(await ada.textContent("h1")).toBe("Support team");
    expect(await ada.inputValue("#project-switch-select")).toBe("support-team");

    const invite = async (email: string, role: string) => {
      await ada.fill("form[action$='/invitations'] input[name=email]", email);
      await ada.selectOption("form[action$='/invitations'] select[name=role]", role);
      await Promise.all([ada.waitForLoadState("load"), ada.click("form[action$='/invitations'] button[type=submit]")]);
      return (await ada.textContent("#invitation-link"))!.trim();
    };
    const join = async (name: string, email: string, link: string) => {
      const page = await register(await browserOf(), base, name, email);
      await page.goto(link);
      await Promise.all([page.waitForURL(/\/p\/support-team\/settings\/project/), page.click("form[action$='/accept'] button[type=submit]")]);
      return page;
    };
    const bob = await join("Bob Builder", `bob-${stamp}@example.com`, await invite(`bob-${stamp}@example.com`, "member"));
    const carol = await join("Carol Viewer", `carol-${stamp}@example.com`, await invite(`carol-${stamp}@example.com`, "viewer"));
    await ada.goto(`${base}/settings/project`);
    expect(await ada.$$eval("section.card table tbody tr td:nth-child(3)", (tds) => tds.map((td) => td.textContent!.trim()).slice(0, 3).sort())).toEqual(["member", "owner", "viewer"]);
    await ada.screenshot({ path: path.join(ARTIFACTS, "project-settings.png"), fullPage: true });

    // A key of the project sends a run; every member's dashboard shows it without a reload.
    const owner = (await findUserByEmail(stack.ports.sql, `ada-${stamp}@example.com`))!;
    const [team] = await stack.ports.sql.query<{ id: number }>("SELECT id FROM projects WHERE slug = 'support-team'");
    const { key } = await createApiKey(stack.ports.sql, owner.id, "team agent", null, { projectId: Number(team!.id) });
    for (const page of [ada, bob, carol]) {
      await page.goto(`${base}/dashboard`);
      await live(page);
      await page.evaluate(() => { (window as unknown as { __noReload: boolean }).__noReload = true; });
    }
    const run = `team-run-${stamp}`;
    const res = await fetch(`${base}/api/ingest`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ sdk_run_id: run, event_type: "run_start", agent_name: "support-bot", payload: {} }),
    });
    expect(res.status).toBe(202);
    for (const page of [ada, bob, carol]) {
      await page.waitForSelector(`tr[data-run="${run}"]`, { timeout: 10_000 });
      expect(await page.evaluate(() => (window as unknown as { __noReload: boolean }).__noReload)).toBe(true);
    }
    await bob.click("#project-switch-select");
    await bob.screenshot({ path: path.join(ARTIFACTS, "project-switcher.png") });

    // The viewer reads the run; her feedback is refused.
    await carol.goto(`${base}/dashboard/${run}`);
    const refused = await carol.request.post(`${base}/dashboard/${run}/scores`, {
      form: { _csrf: (await carol.getAttribute("input[name=_csrf]", "value"))!, value: "up" }, maxRedirects: 0,
    });
    expect(refused.status()).toBe(403);

    // Ada removes Bob: his open dashboard loses the project's channel at once.
    await bob.goto(`${base}/dashboard`);
    await live(bob);
    await ada.goto(`${base}/settings/project`);
    await Promise.all([ada.waitForLoadState("load"), ada.click(`form[action$='/members/remove']:has(input[value="bob-${stamp}@example.com"]) button`)]);
    await bob.waitForSelector('#live-indicator:not([data-state="live"])', { timeout: 10_000 });
    await bob.goto(`${base}/dashboard/${run}`);
    expect(await bob.textContent("h1")).toContain("not found");
    for (const c of contexts) await c.close();
  }, 120_000);
});
