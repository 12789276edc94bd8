/**
 * Projects in the URL (docs/TEAMS.md): every project page is /p/{slug}/…, and its forms post there, so two tabs on
 * two projects work side by side: a form acts in the project its page was shown for, whatever the other tab did.
 */
import { describe, expect, it } from "vitest";
import { listApiKeys } from "../../stores/accounts/api-keys.js";
import { findProjectBySlug } from "../../stores/accounts/projects.js";
import { haveBrowser, register, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("projects in the URL", () => {
  const { stack, browser } = useBrowserStack();

  it("two tabs on two projects: a key made in the first tab belongs to its project, not the one the second switched to", async () => {
    const ctx = await browser().newContext({ viewport: { width: 1400, height: 900 } });
    const tab1 = await register(ctx, stack().url, "Ada Admin", "ada-urls@example.com");
    const personal = (await tab1.locator("#project-switch-select").getAttribute("data-current"))!;
    expect(new URL(tab1.url()).pathname).toMatch(new RegExp(`^/p/${personal}/`));

    // A team project: made on the project page, which opens it.
    await tab1.goto(`${stack().url}/p/${personal}/settings/project`);
    await tab1.locator("details.new-project summary").click();
    await tab1.fill("details.new-project input[name=name]", "Support Bots");
    await Promise.all([tab1.waitForURL(/\/p\/support-bots\/settings\/project/), tab1.locator("details.new-project button[type=submit]").click()]);

    await tab1.goto(`${stack().url}/p/support-bots/settings/api-keys`);
    const tab2 = await ctx.newPage();
    await tab2.goto(`${stack().url}/p/${personal}/dashboard`);
    // The second tab switches with the sidebar's switcher: it stays on the page it is on, in the other project.
    await tab2.goto(`${stack().url}/p/${personal}/datasets`);
    await Promise.all([tab2.waitForURL(/\/p\/support-bots\/datasets$/), tab2.selectOption("#project-switch-select", "support-bots")]);
    await Promise.all([tab2.waitForURL(new RegExp(`/p/${personal}/datasets$`)), tab2.selectOption("#project-switch-select", personal)]);

    // The first tab's form still names Support Bots.
    await tab1.fill("#name", "production agents");
    await Promise.all([tab1.waitForLoadState("load"), tab1.click("form[action$='/settings/api-keys'] button[type=submit]")]);
    expect(new URL(tab1.url()).pathname).toBe("/p/support-bots/settings/api-keys");
    const support = (await findProjectBySlug(stack().ports.sql, "support-bots"))!;
    const mine = (await findProjectBySlug(stack().ports.sql, personal))!;
    expect((await listApiKeys(stack().ports.sql, support.id)).map((k) => k.name)).toEqual(["production agents"]);
    expect((await listApiKeys(stack().ports.sql, mine.id)).map((k) => k.name)).not.toContain("production agents");

    // Links on a project's page stay in it.
    const hrefs = await tab1.$$eval("nav[aria-label=Main] a", (as) => as.map((a) => a.getAttribute("href")));
    expect(hrefs.filter((h) => h !== "/admin").every((h) => h!.startsWith("/p/support-bots/"))).toBe(true);

    // An old URL opens the same page of the project last used (here the second tab's).
    await tab2.goto(`${stack().url}/p/${personal}/dashboard`);
    await tab1.goto(`${stack().url}/datasets`);
    expect(new URL(tab1.url()).pathname).toBe(`/p/${personal}/datasets`);

    // Someone else's project is not found, and not named.
    const other = await browser().newContext();
    const eve = await register(other, stack().url, "Eve", "eve-urls@example.com");
    const res = await eve.goto(`${stack().url}/p/support-bots/settings/api-keys`);
    expect(res!.status()).toBe(404);
    const post = await eve.request.post(`${stack().url}/p/support-bots/settings/api-keys`, {
      form: { _csrf: await eve.locator("input[name=_csrf]").first().inputValue(), name: "sneaky" }, maxRedirects: 0,
    });
    expect(post.status()).toBe(404);
    expect((await listApiKeys(stack().ports.sql, support.id)).map((k) => k.name)).toEqual(["production agents"]);
    // Only project pages live under /p/.
    expect((await eve.goto(`${stack().url}/p/${personal}/login`))!.status()).toBe(404);
    await other.close();
    await ctx.close();
  });
});
