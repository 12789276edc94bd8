/**
 * The run page's header and the session page's turns follow the pushed runs, in Chromium, even when the fragment
 * fetched after a message is older than the message: the message goes out once the run's events are stored,
 * beside the write of the run's new version the page is rendered from (docs/DASHBOARD.md). The tests make that race
 * certain: the first fragment fetched after the message is served as it was before. A live run page's trace reads
 * only what changed since its cursor (web/runs/trace-reads.ts), keeps the reader's selection and folds, and then
 * shows what a fresh load shows.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf, traceRows } from "./trace-rows.js";

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

/** The run page's trace as a reader sees it: every row (the list is scrolled through), without the highlight of new ones. */
async function pageView(page: Page) {
  const rows: Awaited<ReturnType<typeof traceRows>> = [];
  const height = await page.$eval("#tv-scroll", (el) => el.scrollHeight);
  for (let y = 0; ; y += 300) {
    await page.$eval("#tv-scroll", (el, top) => { el.scrollTop = top; }, y);
    await page.waitForTimeout(30);
    for (const r of await traceRows(page)) if (!rows.some((x) => x.id === r.id)) rows.push(r);
    if (y > height) break;
  }
  // Durations of running spans and of the run grow with the clock.
  return rows.map(({ id, level, expanded, text }) => [id, level, expanded, text.replace(/running….*$|[\d.]+ (ms|s|m \d+ s)$/, "")]);
}

const HOSTILE = `q"]' <img src=x onerror=alert(1)> \\ ☃ 𝄞`;

describe.skipIf(!haveBrowser)("the run page, live", () => {
  const env = useBrowserStack();

  it("grows as a run goes on, reading only what changed, keeping the selection and what the reader folded, and ends as a fresh load shows it", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Delta", `run-delta-${Date.now()}@example.com`);
    const id = "live-delta-run";
    const t0 = Date.now() - 60_000;
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const ev = (event_type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ sdk_run_id: id, event_type, payload, ...extra });
    const llm = (span: string, parent: string, ms: number) => [
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "start", input: "x".repeat(600) }, { span_id: span, parent_span_id: parent, occurred_at: at(ms) }),
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 100, completion_tokens: 10, output: "y".repeat(600), duration_ms: 50 }, { span_id: span, parent_span_id: parent, occurred_at: at(ms + 50) }),
    ];
    let sent = 0;
    const send = async (events: unknown[]) => {
      expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
      sent += events.length;
    };
    // A run with 40 spans when the page opens.
    await send([
      ev("run_start", { input: { question: "plan a trip" } }, { agent_name: "delta-bot", occurred_at: at(0) }),
      ev("step", { node_name: "agent", phase: "start" }, { span_id: "agent", occurred_at: at(1) }),
      ...Array.from({ length: 20 }, (_, i) => llm(`warm-${i}`, "agent", 10 + i * 100)).flat(),
      ev("step", { node_name: "research", phase: "start" }, { span_id: "research", occurred_at: at(2_100) }),
      ...Array.from({ length: 19 }, (_, i) => llm(`r-${i}`, "research", 2_200 + i * 100)).flat(),
    ]);
    await waitForRun(stack.url, key, id, (b) => b.run.event_count === sent);
    const answers: { kind: string; bytes: number }[] = [];
    page.on("response", async (res) => {
      const url = new URL(res.url());
      if (!url.pathname.endsWith(`/${id}/tree`)) return;
      answers.push({ kind: url.searchParams.has("since") ? "changes" : "page", bytes: (await res.body()).length });
    });
    await page.goto(`${stack.url}/dashboard/${id}`);
    await page.waitForSelector(`#run-live .run-head[data-events="${sent}"]`);
    await page.waitForSelector(rowOf("research"));
    // The reader folds the research subtree (new calls under it must not unfold it) and opens warm-3.
    await page.click(`${rowOf("research")} .tv-caret`);
    await page.click(rowOf("warm-3"));
    await panelShows(page, "warm-3");
    await page.evaluate(() => { (window as any).__noReload = true; });

    // It grows: an LLM call under each agent, a tool call that starts, a leaf that gains a child, a new root span.
    const batches = [
      llm("live-0", "agent", 5_000),
      [ev("tool_call", { tool_name: "search", phase: "start", input_preview: '{"q": "Lisbon"}' }, { span_id: "tool-1", parent_span_id: "agent", occurred_at: at(5_100) })],
      llm("live-1", "research", 5_200),
      llm("nested-0", "warm-3", 5_300), // warm-3 was a leaf
      [ev("step", { node_name: "review", phase: "start" }, { span_id: "review", occurred_at: at(5_400) })],
      llm("review-llm", "review", 5_500),
      // A hostile span id and name: markup in them stays text, and a child finds its parent by that id.
      [ev("step", { node_name: `<script>alert(1)</script>${HOSTILE}`, phase: "start" }, { span_id: HOSTILE, parent_span_id: "agent", occurred_at: at(5_600) })],
      llm("under-hostile", HOSTILE, 5_700),
    ];
    for (const batch of batches) {
      await send(batch);
      await page.waitForSelector(`#run-live .run-head[data-events="${sent}"]`, { timeout: 10_000 });
    }
    await page.waitForSelector(rowOf("under-hostile"), { timeout: 10_000 });
    const rows = await pageView(page);
    const row = (rid: string) => rows.find((r) => r[0] === rid)!;
    expect(row(HOSTILE)[1]).toBe(3);
    expect(row("under-hostile")[1]).toBe(4);
    expect(rows.findIndex((r) => r[0] === "under-hostile")).toBe(rows.findIndex((r) => r[0] === HOSTILE) + 1);
    expect(String(row(HOSTILE)[3])).toContain("<script>alert(1)</script>");
    expect(await page.$$("#trace img, #trace script")).toHaveLength(0);
    // What the reader folded stays folded; what they opened stays open, and gained its child.
    expect(row("research")[2]).toBe("false");
    expect(rows.some((r) => String(r[0]).startsWith("r-") || r[0] === "live-1")).toBe(false);
    expect(await page.locator(rowOf("warm-3")).getAttribute("aria-selected")).toBe("true");
    expect(await page.$eval("#trace-panel", (p) => (p as HTMLElement).dataset.spanId)).toBe("warm-3");
    expect(rows[rows.findIndex((r) => r[0] === "warm-3") + 1]!.slice(0, 2)).toEqual(["nested-0", 4]);

    // The selected span updates while the run goes on: a tool call opened while running shows its end.
    await page.click(rowOf("tool-1"));
    expect(await panelShows(page, "tool-1")).toMatch(/Duration\s*running/);
    await send([ev("tool_call", { tool_name: "search", phase: "end", output_preview: "3 results", duration_ms: 80 }, { span_id: "tool-1", parent_span_id: "agent", occurred_at: at(5_180) })]);
    await page.waitForFunction(() => document.getElementById("trace-panel")?.textContent?.includes("3 results"), undefined, { timeout: 10_000 });
    expect(await page.textContent("#trace-panel")).toMatch(/Duration\s*80 ms/);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);

    // Each update read only what changed: a small part of what the whole tree is.
    const changes = answers.filter((a) => a.kind === "changes");
    expect(changes.length).toBeGreaterThanOrEqual(batches.length);
    const whole = await page.evaluate(async (path) => (await fetch(`${path}/tree?limit=20000`)).text(), new URL(page.url()).pathname);
    expect(Math.max(...changes.map((d) => d.bytes))).toBeLessThan(whole.length / 4);

    // The page now shows what a fresh load shows, with the same fold.
    const fresh = await ctx.newPage();
    await fresh.goto(`${stack.url}/dashboard/${id}`);
    await fresh.waitForSelector(rowOf("under-hostile"));
    await fresh.click(`${rowOf("research")} .tv-caret`);
    expect(await pageView(fresh)).toEqual(await pageView(page));
    await ctx.close();
  }, 90_000);

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
