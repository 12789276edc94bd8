/**
 * Every page a team reaches from the sidebar, crawled in Chromium as the project's owner over realistic data
 * (the demo's runs, a dataset, an alert rule, an evaluator): no page may cause a Content-Security-Policy violation
 * (an inline style or handler that the app's own policy refuses leaves the page unstyled or dead).
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { demoRuns, ingestDemo } from "../../deploy/demo.js";
import path from "node:path";
import { addVersion } from "../../stores/agent-registry.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

/** Where the crawl starts: the sidebar's pages, and pages only a form or a button leads to. */
const START = ["/dashboard", "/alerts/new", "/improve", "/settings/project", "/admin"];

/** Links not to follow: leaving, downloads, the JSON API and static files. */
const SKIP = /^\/(logout|api\/|static\/|v1\/|metrics|healthz)|\/(export|download)(\/|$)|\.[a-z]+$/;

/** A path's shape (ids replaced), so a list of 50 runs is visited once, not 50 times. */
export const shapeOf = (pathname: string): string =>
  pathname.replace(/^\/p\/[a-z0-9-]+(?=\/)/, "").replace(/^\/(dashboard|agents|sessions|datasets|queues|evaluators)\/[^/]+/, "/$1/:name").replace(/\/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, "/:uuid").replace(/\/\d+(?=\/|$)/g, "/:n").replace(/\/[0-9a-f]{16,}(?=\/|$)/gi, "/:hex");

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

  /** An owner's logged-in page over the demo's runs, a dataset and a second project. */
  async function seeded(width: number, email: string): Promise<{ page: Page; close: () => Promise<void> }> {
    const ctx = await browser().newContext({ viewport: { width, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack(), "Crawler", email);
    await ingestDemo(stack().url, key, demoRuns());
    const api = (path: string, body: unknown, method = "POST") =>
      fetch(stack().url + path, { method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await api("/api/datasets", { name: "support-faq" })).status).toBe(201);
    expect((await api("/api/datasets/support-faq/items", { items: [{ input: { question: "refund?" }, expected_output: "30 days" }] })).status).toBeLessThan(300);
    // Config versions and experiments: the widest tables (agents' versions, the experiments list).
    const user = (await findUserByEmail(stack().ports.sql, email))!;
    for (const v of [1, 2]) await addVersion(stack().ports.sql, user.id, "research-assistant", { config: JSON.stringify({ model: "gpt-4o-mini", temperature: v / 10, prompt: "You research carefully." }), changelog: `v${v}`, activate: v === 1, createdBy: user.id });
    for (const v of [1, 2]) {
      expect((await api("/api/experiments", { dataset: "support-faq", name: `research v${v} on faq`, agent_name: "research-assistant", config_version: v })).status).toBeLessThan(300);
    }
    // A second project, so the pages show their project switchers.
    const csrf = await page.locator("input[name=_csrf]").first().inputValue();
    const personal = await page.locator("#project-switch-select").getAttribute("data-current");
    const post = (path: string, form: Record<string, string>) => page.request.post(`${stack().url}${path}`, { form: { _csrf: csrf, ...form }, maxRedirects: 0 });
    expect((await post("/projects", { name: "Support Bots" })).status()).toBeLessThan(400);
    expect((await post("/projects/switch", { project: personal! })).status()).toBeLessThan(400);
    return { page, close: () => ctx.close() };
  }

  it("causes no Content-Security-Policy violation", async () => {
    const { page, close } = await seeded(1400, "crawler@example.com");
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content.Security.Policy/i.test(m.text())) violations.push(`${new URL(page.url()).pathname}: ${m.text()}`);
    });
    // A script that throws leaves its control dead, as a refused one does.
    page.on("pageerror", (err) => violations.push(`${new URL(page.url()).pathname}: ${err.message}`));
    const visited = await crawl(page, stack().url, START, 80, async (at) => {
      await page.waitForLoadState("load");
      // An inline handler is refused only when it runs: find them before anyone clicks.
      const handlers = await page.$$eval("*", (els) => els.flatMap((el) => Array.from(el.attributes).filter((a) => /^on/i.test(a.name)).map((a) => `<${el.tagName.toLowerCase()} ${a.name}>`)));
      for (const h of handlers) violations.push(`${at}: inline handler ${h}`);
    });
    expect(visited.length).toBeGreaterThan(15);
    for (const must of ["/improve", "/alerts", "/alerts/new", "/settings/project", "/datasets", "/agents", "/query"]) {
      expect(visited.map((v) => v.split("?")[0]!.replace(/^\/p\/[a-z0-9-]+/, ""))).toContain(must);
    }
    expect(violations).toEqual([]);
    await close();
  });

  for (const width of [1400, 390]) {
    it(`has no page wider than the viewport at ${width} px`, async () => {
      const { page, close } = await seeded(width, `crawler-${width}@example.com`);
      const wide: string[] = [];
      const visited = await crawl(page, stack().url, START, 80, async (at) => {
        await page.waitForLoadState("load");
        // The page, and at 1400 px also each card and table: nothing is cut off or needs a sideways scroll (a table
        // too wide for a phone scrolls inside its card).
        const { scroll, inner, clipped, sticking } = await page.evaluate((desktop) => ({
          scroll: document.documentElement.scrollWidth,
          inner: window.innerWidth,
          // The outermost elements that reach past the right edge: what to fix when the page is too wide.
          sticking: Array.from(document.querySelectorAll<HTMLElement>("body *"))
            .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && (el.parentElement?.getBoundingClientRect().right ?? 0) <= window.innerWidth + 1)
            .filter((el) => { for (let p = el.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== "visible") return false; return true; })
            .slice(0, 3).map((el) => `<${el.tagName.toLowerCase()} class="${el.className}">`),
          clipped: desktop ? Array.from(document.querySelectorAll<HTMLElement>("main .card, main .table-wrap, main table"))
            .filter((el) => el.offsetParent !== null && el.scrollWidth > el.clientWidth + 1)
            .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${el.className.split(" ")[0]} ${el.scrollWidth}>${el.clientWidth}`) : [],
        }), width >= 1000);
        for (const c of clipped) wide.push(`${at}: ${c}`);
        const name = shapeOf(at.split("?")[0]!.replace(/^\/p\/[a-z0-9-]+/, "")).replace(/[/:]+/g, "_").replace(/^_/, "") || "root";
        if (process.env.RUNWATCH_SCREENSHOTS === "1") await page.screenshot({ path: path.join(ARTIFACTS, `page-${width}-${name}.png`), fullPage: true });
        if (scroll > inner) wide.push(`${at}: ${scroll} px (${sticking.join(" ")})`);
      });
      expect(visited.length).toBeGreaterThan(15);
      expect(wide).toEqual([]);
      await close();
    });
  }
});
