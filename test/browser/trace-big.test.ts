/**
 * A run of 20,000 spans on its page, in Chromium: the page stays small (the tree is read after it, in pages of
 * skeletons), the list draws only the rows on screen, and a search for a text found only in one span's output deep
 * in the run (read by the server from the payloads) scrolls to that span and opens it.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { waitForRun } from "../e2e/harness.js";
import { sendBatches, traceRunEvents } from "../bench/trace-run.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf } from "./trace-rows.js";

describe.skipIf(!haveBrowser)("a run of 20,000 spans in a real browser", () => {
  const env = useBrowserStack(() => ({ RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0" }));

  it("opens with a small page, draws only the rows on screen, and finds a span deep in it by the text of its output", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Bigsby", `big-${Date.now()}@example.com`);
    const id = "big-trace";
    const events = traceRunEvents(id, { spans: 20_000, needle: "zebra-crossing-42" });
    const needle = String(events.find((e) => String(e.span_id ?? "").startsWith("needle-"))!.span_id);
    await sendBatches(stack.url, key, events);
    await waitForRun(stack.url, key, id, (b) => b.run.event_count === events.length, 120_000);

    const html = page.waitForResponse((r) => new URL(r.url()).pathname.endsWith(`/dashboard/${id}`) && r.status() === 200);
    const started = Date.now();
    await page.goto(`${stack.url}/dashboard/${id}`);
    expect((await (await html).body()).length).toBeLessThan(200 * 1024);
    await page.waitForSelector(rowOf("turn-0-0"));
    console.log(`20,000 spans: first rows ${Date.now() - started} ms after the page was asked for`);
    await page.waitForFunction(() => /^20,000 spans$/.test(document.getElementById("trace-count")?.textContent ?? ""), undefined, { timeout: 30_000 });
    expect(await page.$$eval(".tv-row", (els) => els.length)).toBeLessThan(120);
    expect(await page.isVisible(rowOf(needle))).toBe(false);

    await page.fill("#trace-search", "zebra-crossing-42");
    await page.waitForFunction(() => document.getElementById("trace-matches")?.textContent === "0 of 1", undefined, { timeout: 10_000 });
    await page.press("#trace-search", "Enter");
    expect(await panelShows(page, needle)).toContain("found zebra-crossing-42 in the results");
    const [row, list] = [await page.locator(rowOf(needle)).boundingBox(), await page.locator("#tv-scroll").boundingBox()];
    expect(row!.y).toBeGreaterThanOrEqual(list!.y);
    expect(row!.y + row!.height).toBeLessThanOrEqual(list!.y + list!.height);
    expect(await page.locator(rowOf(needle)).getAttribute("aria-selected")).toBe("true");
    expect(await page.$eval("#tv-scroll", (el) => el.scrollTop)).toBeGreaterThan(100_000);
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-20000-search.png"), fullPage: false });
    await ctx.close();
  }, 240_000);
});
