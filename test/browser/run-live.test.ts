/**
 * The run page's header and the session page's turns follow the pushed runs, in Chromium, even when the fragment
 * fetched after a message is older than the message: the message goes out once the run's events are stored,
 * beside the write of the run's new version the page is rendered from (docs/DASHBOARD.md). The tests make that race
 * certain: the first fragment fetched after the message is served as it was before.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

/**
 * Serves the page's next `?fragment=live` fetch as the fragment is now (stale once a message has come), lets later
 * ones through, and marks the page so a reload would show; answers how many fragments the page has fetched.
 */
async function serveNextFragmentStale(page: Page): Promise<() => number> {
  const stale = await page.evaluate(async () => (await fetch(`${location.pathname}?fragment=live`)).text());
  let fetched = 0;
  await page.route((url) => url.searchParams.get("fragment") === "live", async (route) => {
    fetched++;
    if (fetched === 1) await route.fulfill({ status: 200, contentType: "text/html; charset=utf-8", body: stale });
    else await route.continue();
  });
  await page.evaluate(() => { (window as any).__noReload = true; });
  return () => fetched;
}

describe.skipIf(!haveBrowser)("the run page, live", () => {
  const env = useBrowserStack();

  it("shows the run's end although the first fragment fetched after the message still shows it running", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Liv", `run-live-${Date.now()}@example.com`);
    const id = "live-header-run";
    const send = async (events: unknown[]) => expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await send([
      { sdk_run_id: id, event_type: "run_start", agent_name: "header-bot", payload: { framework: "langgraph" } },
      { sdk_run_id: id, event_type: "step", span_id: "s1", payload: { node_name: "plan", phase: "end", duration_ms: 5 } },
    ]);
    await waitForRun(stack.url, key, id, (b) => b.run.event_count === 2);
    await page.goto(`${stack.url}/dashboard/${id}`);
    await page.waitForSelector('#run-live .run-head[data-status="running"][data-events="2"]');

    const fetched = await serveNextFragmentStale(page);
    await send([{ sdk_run_id: id, event_type: "run_end", payload: { output: "done" } }]);

    await page.waitForSelector('#run-live .run-head[data-status="success"][data-events="3"]', { timeout: 10_000 });
    expect(fetched()).toBeGreaterThanOrEqual(2); // the stale answer came first, and the page asked again
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(await page.textContent("#run-live .run-head")).toMatch(/success/i);
    await ctx.close();
  });

  it("shows a session's new turn although the first fragment fetched after its message does not have it yet", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sasha", `session-live-${Date.now()}@example.com`);
    const turn = (id: string, question: string) => [
      { sdk_run_id: id, event_type: "run_start", agent_name: "support-bot", session_id: "race-thread", payload: { input: { message: question } } },
      { sdk_run_id: id, event_type: "run_end", payload: { output: { answer: `re: ${question}` } } },
    ];
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events: turn("turn-a", "first") }))).status).toBe(207);
    await waitForRun(stack.url, key, "turn-a", (b) => b.run.status === "success");
    await page.goto(`${stack.url}/sessions/race-thread`);
    await page.waitForSelector(".turn[data-run='turn-a'][data-events='2']");

    const fetched = await serveNextFragmentStale(page);
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events: turn("turn-b", "second") }))).status).toBe(207);

    await page.waitForSelector(".turn[data-run='turn-b'][data-events='2'] .turn-output", { timeout: 10_000 });
    expect(fetched()).toBeGreaterThanOrEqual(2);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(await page.$$eval(".turn", (els) => els.map((el) => (el as HTMLElement).dataset.run))).toEqual(["turn-a", "turn-b"]);
    await ctx.close();
  });
});
