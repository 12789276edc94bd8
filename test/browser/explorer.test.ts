/**
 * The runs explorer in Chromium against web + pipeline + gateway: a filter typed into the filter bar with its
 * completion, a malformed one shown by the box, the table sorted by clicking a header, the page saved as a view and
 * reproduced from its URL and from the sidebar, the chart's values read back against the chart API and a new run
 * reaching the chart live; the Models column chosen in the columns chooser, showing each run's LLM-call models as chips
 * (a new run's too, live), and `model:` completing from them. Screenshots at 1400 and 390 px: test/artifacts/explorer-*.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { bearer, json, until } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

const rowsOf = (page: Page) => page.$$eval("#runs tbody tr[data-run]", (trs) => trs.map((tr) => (tr as HTMLElement).dataset.run!));

describe.skipIf(!haveBrowser)("the runs explorer in a real browser", () => {
  const env = useBrowserStack();

  it("filters with completion, sorts, saves a view, reloads it from its URL and reads the chart back", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(ctx, stack, "Ada", `explorer-${Date.now()}@example.com`);
    const t0 = Date.now() - 2 * 3_600_000;
    const t = (ms: number) => new Date(t0 + ms).toISOString();
    const events: unknown[] = [];
    for (let i = 0; i < 14; i++) {
      const id = `e-${String(i).padStart(2, "0")}`;
      const agent = i % 2 === 0 ? "refund-bot" : "search-bot";
      const start = i * 6 * 60_000;
      events.push({ event_type: "run_start", sdk_run_id: id, agent_name: agent, occurred_at: t(start), tags: i % 3 === 0 ? ["vip"] : [], environment: "production", payload: { input: `Refund order ${1000 + i}?` } });
      if (i % 4 === 0) events.push({ event_type: "error", sdk_run_id: id, occurred_at: t(start + 500 + i * 100), payload: { error_message: "payment gateway timeout" } });
      else events.push({ event_type: "run_end", sdk_run_id: id, occurred_at: t(start + 300 + i * 250), payload: { output: `Done ${i}`, total_tokens: 100 + i * 10, cost_usd: ((i * 7) % 5) / 100 } });
    }
    const sent = await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }));
    expect([sent.status, (await sent.json()).rejected]).toEqual([207, 0]);
    await until("the runs are stored", async () => (await (await fetch(`${stack.url}/api/runs?limit=100`, bearer(key))).json()).runs.filter((r: { status: string }) => r.status !== "running").length, (n) => n === 14);

    // Type a filter: the agent's name completes from the project's agents.
    await page.goto(`${stack.url}/dashboard`);
    await page.waitForSelector('#runs-chart[data-state="ready"]');
    await page.click("#q");
    await page.keyboard.type("agent:ref");
    await page.waitForSelector('#filter-suggestions li:has-text("agent:refund-bot")');
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-suggestions.png") });
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    expect(await page.inputValue("#q")).toBe("agent:refund-bot ");
    await page.keyboard.type("-status:error");
    await Promise.all([page.waitForURL(/q=agent%3Arefund-bot/), page.keyboard.press("Enter")]);
    const filtered = await rowsOf(page);
    const expected = (await (await fetch(`${stack.url}/api/runs?${new URLSearchParams({ q: "agent:refund-bot -status:error" })}`, bearer(key))).json()).runs.map((r: { sdk_run_id: string }) => r.sdk_run_id);
    expect(filtered).toEqual(expected);
    expect(filtered).toEqual(["e-10", "e-06", "e-02"]);

    // A malformed filter: the message by the box, the page still there.
    await page.fill("#q", "agent:refund-bot colour:red");
    await Promise.all([page.waitForURL(/colour/), page.press("#q", "Enter")]);
    expect(await page.textContent("#filter-error")).toContain('unknown field "colour"');
    expect(await page.textContent("h1")).toBe("Dashboard");
    expect(await page.getAttribute("#q", "aria-invalid")).toBe("true");
    await page.fill("#q", "agent:refund-bot -status:error");
    await Promise.all([page.waitForURL(/status%3Aerror/), page.press("#q", "Enter")]);

    // Sort by clicking the Cost header: dearest first, then cheapest first; ties by the run's id.
    await Promise.all([page.waitForURL(/sort=cost&order=desc/), page.click('th[data-col="cost"] a')]);
    const byCostDesc = (await (await fetch(`${stack.url}/api/runs?${new URLSearchParams({ q: "agent:refund-bot -status:error", sort: "cost", order: "desc" })}`, bearer(key))).json()).runs.map((r: { sdk_run_id: string }) => r.sdk_run_id);
    expect(await rowsOf(page)).toEqual(byCostDesc);
    await Promise.all([page.waitForURL(/sort=cost&order=asc/), page.click('th[data-col="cost"] a')]);
    const byCostAsc = (await (await fetch(`${stack.url}/api/runs?${new URLSearchParams({ q: "agent:refund-bot -status:error", sort: "cost", order: "asc" })}`, bearer(key))).json()).runs.map((r: { sdk_run_id: string }) => r.sdk_run_id);
    expect(await rowsOf(page)).toEqual(byCostAsc);
    expect(byCostAsc).not.toEqual(byCostDesc);
    expect(await page.getAttribute('th[data-col="cost"]', "aria-sort")).toBe("ascending");

    // Save the view: its URL is the page's, the sidebar lists it.
    await page.click("#save-view-tool summary");
    await page.fill("#view-name", "Refunds that worked");
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-save-view.png") });
    await Promise.all([page.waitForURL(/sort=cost&order=asc/), page.click("#save-view-form button[type=submit]")]);
    const viewUrl = page.url();
    expect(await page.textContent("h1")).toBe("Refunds that worked");
    expect(await page.getAttribute('.nav-view[title="Refunds that worked"]', "class")).toContain("active");
    const shown = await rowsOf(page);

    // The URL alone reproduces it, in a new page; so does the sidebar's link from anywhere.
    const again = await ctx.newPage();
    await again.goto(viewUrl);
    expect(await rowsOf(again)).toEqual(shown);
    // The view keeps the filter in its canonical form (core/runs-filter): the same filter, tokens in a fixed order.
    expect(await again.inputValue("#q")).toBe("-status:error agent:refund-bot");
    expect(await again.getAttribute('th[data-col="cost"]', "aria-sort")).toBe("ascending");
    await again.goto(`${stack.url}/settings`);
    await Promise.all([again.waitForURL(/sort=cost/), again.click('.nav-view[title="Refunds that worked"]')]);
    expect(await rowsOf(again)).toEqual(shown);
    expect(again.url()).toBe(viewUrl);

    // The chart's values, read from its table, are the chart API's for the same filter.
    await again.waitForSelector('#runs-chart[data-state="ready"]');
    const table = await again.$$eval("#chart-data tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent)));
    const api = (await (await fetch(`${stack.url}/api/runs/chart?${new URLSearchParams({ q: "agent:refund-bot -status:error" })}`, bearer(key))).json());
    expect(table.map((r) => [r[0], Number(r[1]), Number(r[2])])).toEqual(api.buckets.map((b: { at: string; runs: number; errors: number }) => [b.at, b.runs, b.errors]));
    expect(Number(await again.getAttribute("#runs-chart", "data-total-runs"))).toBe(shown.length);
    expect(await again.locator("#runs-chart canvas").count()).toBeGreaterThanOrEqual(4);
    await again.screenshot({ path: path.join(ARTIFACTS, "explorer-view-1400.png"), fullPage: true });

    // Live: a new matching run reaches the chart without a reload.
    await again.evaluate(() => { (window as unknown as { __noReload: boolean }).__noReload = true; });
    const live = await fetch(`${stack.url}/api/ingest/batch`, json(key, { events: [
      { event_type: "run_start", sdk_run_id: "e-live", agent_name: "refund-bot", payload: { input: "Refund order 2000?" } },
      { event_type: "run_end", sdk_run_id: "e-live", payload: { output: "Done", total_tokens: 5, cost_usd: 0.001 } },
    ] }));
    expect([live.status, (await live.json()).rejected]).toEqual([207, 0]);
    await again.waitForFunction((n) => Number(document.getElementById("runs-chart")!.dataset.totalRuns) === n, shown.length + 1, { timeout: 20_000 });
    expect(await again.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);

    // Narrow: 390 px wide, nothing wider than the screen but the table's own scroller.
    await again.setViewportSize({ width: 390, height: 900 });
    await again.reload();
    await again.waitForSelector('#runs-chart[data-state="ready"]');
    await again.screenshot({ path: path.join(ARTIFACTS, "explorer-view-390.png"), fullPage: true });
    const wide = await again.evaluate(() => Array.from(document.querySelectorAll("body *"))
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest(".table-wrap, .sidebar nav, .visually-hidden"))
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${Array.from(el.classList).join(".")}`).slice(0, 8));
    expect(wide).toEqual([]);
    expect(await again.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await ctx.close();
  }, 90_000);

  it("shows the models of each run's LLM calls as chips in the Models column, live, and completes model: from them", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(ctx, stack, "Grace", `models-${Date.now()}@example.com`);
    // A call nested under a tool span, or several calls, or none: the run's models are its calls', sorted.
    const llm = (id: string, span: string, model: string, parent?: string) => ({
      event_type: "step", sdk_run_id: id, span_id: span, ...(parent ? { parent_span_id: parent } : {}),
      payload: { kind: "llm", node_name: "chat", phase: "end", model, prompt_tokens: 10, completion_tokens: 5 },
    });
    const runs: Record<string, unknown[]> = {
      "m-nested": [{ event_type: "step", sdk_run_id: "m-nested", span_id: "tool", payload: { kind: "agent", node_name: "researcher", phase: "start" } }, llm("m-nested", "c1", "gpt-4o-mini", "tool")],
      "m-many": ["claude-sonnet-4", "gpt-4o", "gpt-4o-mini", "o3-mini", "gemini-2.5-pro"].map((m, i) => llm("m-many", `c${i}`, m)),
      "m-none": [],
    };
    const events = Object.entries(runs).flatMap(([id, calls]) => [
      { event_type: "run_start", sdk_run_id: id, agent_name: "model-bot", payload: { input: `question ${id}` } }, ...calls,
      { event_type: "run_end", sdk_run_id: id, payload: { output: "done" } },
    ]);
    const sent = await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }));
    expect([sent.status, (await sent.json()).rejected]).toEqual([207, 0]);
    const apiRuns = async () => (await (await fetch(`${stack.url}/api/runs?q=agent:model-bot`, bearer(key))).json()).runs as { sdk_run_id: string; status: string; models: string[] | null }[];
    await until("the runs have ended", async () => (await apiRuns()).filter((r) => r.status === "success").length, (n) => n === 3);

    // The columns chooser offers Models; chosen, the column shows each run's models as the API lists them.
    await page.goto(`${stack.url}/dashboard?q=agent%3Amodel-bot`);
    await page.click("#columns-tool summary");
    await page.check('.columns-form input[value="models"]');
    await Promise.all([page.waitForURL(/cols=[^&]*models/), page.click(".columns-form button")]);
    const cells = () => page.$$eval('#runs tbody tr[data-run] td[data-f="models"]', (tds) => Object.fromEntries(tds.map((td) => [
      (td.closest("tr") as HTMLElement).dataset.run!, Array.from(td.querySelectorAll(".chip")).map((c) => [c.textContent, c.getAttribute("title")]),
    ])));
    const byApi = Object.fromEntries((await apiRuns()).map((r) => [r.sdk_run_id, r.models]));
    expect(byApi).toEqual({ "m-nested": ["gpt-4o-mini"], "m-many": ["claude-sonnet-4", "gemini-2.5-pro", "gpt-4o", "gpt-4o-mini", "o3-mini"], "m-none": [] });
    const many = "claude-sonnet-4, gemini-2.5-pro, gpt-4o, gpt-4o-mini, o3-mini";
    expect(await cells()).toEqual({
      "m-nested": [["gpt-4o-mini", null]],
      "m-many": [["claude-sonnet-4", null], ["gemini-2.5-pro", null], ["gpt-4o", null], ["+2", many]],
      "m-none": [],
    });
    expect(await page.textContent('tr[data-run="m-none"] td[data-f="models"]')).toBe("—");
    expect(await page.textContent('th[data-col="models"]')).toContain("Models");

    // Live: a new run's chips arrive without a reload, from the pushed run's models.
    await page.evaluate(() => { (window as unknown as { __noReload: boolean }).__noReload = true; });
    const live = await fetch(`${stack.url}/api/ingest/batch`, json(key, { events: [
      { event_type: "run_start", sdk_run_id: "m-live", agent_name: "model-bot", payload: {} }, llm("m-live", "c1", "mistral-large"),
    ] }));
    expect([live.status, (await live.json()).rejected]).toEqual([207, 0]);
    await page.waitForFunction(() => document.querySelector('tr[data-run="m-live"] td[data-f="models"]')?.textContent === "mistral-large", undefined, { timeout: 20_000 });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-models-1400.png"), fullPage: true });

    // The filter bar completes model: from the runs' models.
    await page.click("#q");
    await page.keyboard.press("End");
    await page.keyboard.type(" model:gem");
    await page.waitForSelector('#filter-suggestions li:has-text("model:gemini-2.5-pro")');

    await page.setViewportSize({ width: 390, height: 900 });
    await page.goto(page.url());
    await page.waitForSelector('#runs-chart[data-state="ready"]');
    await page.waitForSelector('#runs tbody tr[data-run="m-live"] td[data-f="models"] .chip');
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-models-390.png"), fullPage: true });
    const wide = await page.evaluate(() => Array.from(document.querySelectorAll("body *"))
      .filter((el) => el.checkVisibility() && el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest(".table-wrap, .sidebar nav, .visually-hidden"))
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${Array.from(el.classList).join(".")}`).slice(0, 8));
    // What a closed menu holds is not shown (checkVisibility): its panel may lie past the edge until it opens.
    expect(wide, wide.join(" ")).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
    await ctx.close();
  }, 90_000);
});
