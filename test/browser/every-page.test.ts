/**
 * Every page a team reaches from the sidebar, crawled in Chromium as the project's owner over realistic data
 * (the demo's runs, a dataset, an alert rule, an evaluator): no page may cause a Content-Security-Policy violation
 * (an inline style or handler that the app's own policy refuses leaves the page unstyled or dead).
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { demoRuns, ingestDemo } from "../../deploy/demo.js";
import { haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

/** Links not to follow: leaving, downloads, the JSON API and static files. */
const SKIP = /^\/(logout|api\/|static\/|v1\/|metrics|healthz)|\/(export|download)(\/|$)|\.[a-z]+$/;

/** A path's shape (ids replaced), so a list of 50 runs is visited once, not 50 times. */
export const shapeOf = (pathname: string): string =>
  pathname.replace(/\/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, "/:uuid").replace(/\/\d+(?=\/|$)/g, "/:n").replace(/\/[0-9a-f]{16,}(?=\/|$)/gi, "/:hex");

/** Same-origin page links of the page, without their fragments. */
async function linksOf(page: Page, origin: string): Promise<string[]> {
  const hrefs = await page.$$eval("a[href]:not([download])", (as) => as.map((a) => (a as HTMLAnchorElement).href));
  return hrefs.map((h) => new URL(h)).filter((u) => u.origin === origin && !SKIP.test(u.pathname)).map((u) => u.pathname + u.search);
}

/** Visits every page shape reachable from `start` (breadth first, at most `limit`), calling `visit` on each. */
export async function crawl(page: Page, origin: string, start: string[], limit: number, visit: (path: string) => Promise<void>): Promise<string[]> {
  const seen = new Set<string>();
  const queue = [...start];
  const visited: string[] = [];
  while (queue.length && visited.length < limit) {
    const next = queue.shift()!;
    const shape = shapeOf(next.split("?")[0]!);
    if (seen.has(shape)) continue;
    seen.add(shape);
    const res = await page.goto(origin + next);
    if (!res || res.status() >= 400 || new URL(page.url()).origin !== origin) continue;
    visited.push(next);
    await visit(next);
    queue.push(...(await linksOf(page, origin)));
  }
  return visited;
}

describe.skipIf(!haveBrowser)("every page", () => {
  const { stack, browser } = useBrowserStack();

  it("causes no Content-Security-Policy violation", async () => {
    const ctx = await browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack(), "Crawler", "crawler@example.com");
    await ingestDemo(stack().url, key, demoRuns());
    const api = (path: string, body: unknown, method = "POST") =>
      fetch(stack().url + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await api("/api/datasets", { name: "support-faq" })).status).toBe(201);
    // A second project, so the pages show their project switchers.
    const csrf = await page.locator("input[name=_csrf]").first().inputValue();
    const personal = await page.locator("#project-switch-select").getAttribute("data-current");
    const post = (path: string, form: Record<string, string>) => page.request.post(`${stack().url}${path}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
    expect((await post("/projects", { name: "Support Bots" })).status()).toBeLessThan(400);
    expect((await post("/projects/switch", { project: personal! })).status()).toBeLessThan(400);
    expect((await api("/api/datasets/support-faq/items", { items: [{ input: { question: "refund?" }, expected_output: "30 days" }] })).status).toBeLessThan(300);

    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content.Security.Policy/i.test(m.text())) violations.push(`${new URL(page.url()).pathname}: ${m.text()}`);
    });
    const visited = await crawl(page, stack().url, ["/dashboard", "/alerts/new", "/improve", "/settings/project"], 80, async (at) => {
      await page.waitForLoadState("load");
      // An inline handler is refused only when it runs: find them before anyone clicks.
      const handlers = await page.$$eval("*", (els) => els.flatMap((el) => [...el.attributes].filter((a) => /^on/i.test(a.name)).map((a) => `<${el.tagName.toLowerCase()} ${a.name}>`)));
      for (const h of handlers) violations.push(`${at}: inline handler ${h}`);
    });
    expect(visited.length).toBeGreaterThan(15);
    for (const must of ["/improve", "/alerts", "/alerts/new", "/settings/project", "/datasets", "/agents"]) {
      expect(visited.map((v) => v.split("?")[0])).toContain(must);
    }
    expect(violations).toEqual([]);
    await ctx.close();
  });
});
