/**
 * /api/docs in Chromium: Swagger UI, served from this server (no request leaves it), renders the generated document —
 * every path, the Bearer scheme — without a Content-Security-Policy violation. Screenshot: test/artifacts/api-docs.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, haveBrowser, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("API reference page in a real browser", () => {
  const env = useBrowserStack();

  it("renders every operation of /api/openapi.json from local assets only", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await ctx.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    page.on("pageerror", (e) => problems.push(String(e)));
    page.on("response", (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
    page.on("request", (r) => !r.url().startsWith(stack.url) && !r.url().startsWith("data:") && elsewhere.push(r.url()));
    await page.goto(`${stack.url}/api/docs`);
    await page.waitForSelector(".opblock-summary-path");
    const paths = await page.$$eval(".opblock-summary-path", (els) => els.map((e) => e.getAttribute("data-path")));
    for (const p of ["/api/ingest", "/api/ingest/batch", "/api/runs", "/api/runs/{sdk_run_id}/spans", "/api/sessions/{session_id}", "/api/scores", "/api/realtime/token", "/v1/traces"]) {
      expect(paths, p).toContain(p);
    }
    expect(await page.textContent(".info .title")).toContain("Runwatch API");
    expect(await page.isVisible(".auth-wrapper .authorize")).toBe(true); // the Bearer scheme: "Authorize"
    await page.screenshot({ path: path.join(ARTIFACTS, "api-docs.png") });
    await page.click(".opblock-summary-path[data-path='/api/scores']");
    await page.waitForSelector(".opblock.is-open .responses-table");
    await page.screenshot({ path: path.join(ARTIFACTS, "api-docs-scores.png"), fullPage: false });
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
    await ctx.close();
  });
});
