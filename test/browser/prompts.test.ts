/**
 * The prompts pages in Chromium over a real stack: reached from the sidebar, a prompt pushed by the API is listed
 * with its labels; its page compares two versions, saves a new version from the prefilled form, and moves the
 * production label back (a rollback) with the label form. At 1400 and 390 px nothing is wider than the viewport; no
 * console error or CSP violation on the way. Screenshots: test/artifacts/prompts-1400.png, prompts-390.png.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

function watch(page: Page, into: string[]): void {
  page.on("console", (m) => {
    if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) into.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (err) => into.push(`${page.url()}: ${err.message}`));
}

const widthOf = (page: Page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));

describe.skipIf(!haveBrowser)("the prompts pages in a real browser", () => {
  const env = useBrowserStack();

  for (const width of [1400, 390]) {
    it(`lists, compares, saves a version and rolls a label back at ${width} px`, async () => {
      const stack = env.stack();
      const ctx = await env.browser().newContext({ viewport: { width, height: 1000 } });
      const { page, key } = await registerWithKey(ctx, stack, "Pat", `prompts-${width}-${Date.now()}@example.com`);
      const problems: string[] = [];
      watch(page, problems);
      const push = (body: unknown) => fetch(`${stack.url}/api/prompts/support-reply/versions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
      });
      expect((await push({ prompt: [{ role: "system", content: "You are a kind support agent." }, { role: "user", content: "Reply to {{ticket}} in {{lang}}." }], config: { provider: "openai", model: "gpt-4o-mini" }, message: "first", labels: ["production"] })).status).toBe(201);
      expect((await push({ prompt: [{ role: "system", content: "You are a kind, brief support agent." }, { role: "user", content: "Reply to {{ticket}} in {{lang}}." }], config: { provider: "openai", model: "gpt-4o" }, message: "brief", labels: ["production"] })).status).toBe(201);

      await page.goto(`${stack.url}/dashboard`);
      if (width >= 1000) {
        await Promise.all([page.waitForURL(/\/prompts$/), page.click('nav a.nav-link[href$="/prompts"]')]);
      } else {
        await page.goto(`${stack.url}/prompts`);
      }
      expect(await page.textContent("h1")).toBe("Prompts");
      expect(await page.textContent("#prompts tbody")).toContain("production → v2");
      expect(await widthOf(page).then((w) => w.scroll <= w.inner)).toBe(true);

      await Promise.all([page.waitForURL(/\/prompts\/support-reply$/), page.click('#prompts a[href$="/prompts/support-reply"]')]);
      expect(await page.textContent("#shown-version h2")).toContain("Version 2");
      expect(await page.$$eval("#prompt-diff .del", (els) => els.map((e) => e.textContent))).toEqual(["- You are a kind support agent."]);
      expect(await page.$$eval("#prompt-diff .add", (els) => els.map((e) => e.textContent))).toEqual(["+ You are a kind, brief support agent."]);

      // A new version from the prefilled form.
      await page.click("#new-version summary");
      expect(await page.inputValue('#new-version select[name="format"]')).toBe("chat");
      const messages = JSON.parse(await page.inputValue('#new-version textarea[name="prompt"]'));
      messages[1].content = "Reply to {{ticket}} in {{lang}}, signed {{agent}}.";
      await page.fill('#new-version textarea[name="prompt"]', JSON.stringify(messages, null, 2));
      await page.fill('#new-version input[name="message"]', "sign replies");
      await Promise.all([page.waitForURL(/flash=/), page.click('#new-version button[type="submit"]')]);
      expect(await page.textContent(".notice")).toContain("Saved v3");
      expect(await page.textContent("#shown-version")).toContain("agent");

      // Roll production back to v1.
      await page.fill('#move-label input[name="label"]', "production");
      await page.selectOption('#move-label select[name="version"]', "1");
      await Promise.all([page.waitForURL(/flash=/), page.click('#move-label button[type="submit"]')]);
      expect(await page.textContent(".notice")).toContain("production moved v2 → v1");
      expect(await page.textContent('#labels tr[data-label="production"]')).toContain("v1");
      const answer = await (await fetch(`${stack.url}/api/prompts/support-reply?label=production`, { headers: { authorization: `Bearer ${key}` } })).json();
      expect(answer.prompt.version).toBe(1);

      const w = await widthOf(page);
      expect(w.scroll, `page ${w.scroll} px wide at ${w.inner}`).toBeLessThanOrEqual(w.inner);
      await page.screenshot({ path: path.join(ARTIFACTS, `prompts-${width}.png`), fullPage: true });
      expect(problems).toEqual([]);
      await ctx.close();
    });
  }
});
