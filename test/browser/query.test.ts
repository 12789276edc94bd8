/**
 * The /query page in Chromium over a real stack: reached from the sidebar, a query typed (Tab indents, Ctrl+Enter
 * runs) answers as a table with its column types, numbers to the right, and a chart of its first numeric column over
 * its day; a small max rows shows the cut banner; a query outside the sandbox shows its refusal and field; a
 * parameter is bound; CSV (formulas defused) and JSON Lines downloads hold the rows; a link carries the SQL; a saved
 * query is found again after a reload, opened from the list and deleted; at 390 px the editor is above the results,
 * the table scrolls inside its card and the page does not. No console error or CSP violation on the way.
 * Screenshots: test/artifacts/query-1400.png, query-390.png.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, login, registerWithKey, useBrowserStack } from "./stack.js";

const DAY = 86_400_000;
const DAILY_SQL = "SELECT toDate(started_at) AS day, count() AS started, sum(cost_usd) AS cost\nFROM runs\nGROUP BY day\nORDER BY day";

/**
 * Console errors and CSP reports of a page, for the end of the test; but Chromium's own line for the refused query's
 * 422, which the page answers with its banner.
 */
function watch(page: Page, into: string[]): void {
  page.on("console", (m) => {
    if (/status of 422/.test(m.text())) return;
    if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) into.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (err) => into.push(`${page.url()}: ${err.message}`));
}

const resultsReady = (page: Page) => page.waitForSelector('#query-results[data-state="ready"], #query-results[data-state="refused"]');
async function runSql(page: Page, sql: string): Promise<void> {
  await page.fill("#sql", sql);
  await page.evaluate(() => { document.getElementById("query-results")!.dataset.state = "idle"; });
  await page.focus("#sql");
  await page.keyboard.press("Control+Enter");
  await resultsReady(page);
}
const cells = (page: Page) => page.$$eval("#result-table tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent!.trim())));

describe.skipIf(!haveBrowser)("the query page in a real browser", () => {
  const env = useBrowserStack();

  it("runs, charts, cuts, refuses, binds, downloads, shares, saves and deletes", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 }, acceptDownloads: true });
    const email = `query-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(ctx, stack, "Quinn", email);
    const problems: string[] = [];
    watch(page, problems);

    // Six runs over three days, two agents; one agent's name starts like a spreadsheet formula.
    const today = Math.floor(Date.now() / DAY) * DAY;
    const runs = [0, 1, 2, 3, 4, 5].map((i) => ({ id: `q-${i}`, agent: i % 2 ? "=refund-bot" : "triage-bot", at: today - (i % 3) * DAY + 3600_000 * (i + 1), cost: (i + 1) / 100 }));
    const events = runs.flatMap((r) => [
      { event_type: "run_start", sdk_run_id: r.id, agent_name: r.agent, occurred_at: new Date(r.at).toISOString(), payload: {} },
      { event_type: "run_end", sdk_run_id: r.id, occurred_at: new Date(r.at + 5000).toISOString(), payload: { cost_usd: r.cost } },
    ]);
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    for (const r of runs) await waitForRun(stack.url, key, r.id, (b) => b.run.status === "success");

    // From the sidebar.
    await page.goto(`${stack.url}/dashboard`);
    await Promise.all([page.waitForURL(/\/query$/), page.click('nav a.nav-link[href$="/query"]')]);
    expect(await page.textContent("h1")).toBe("Query");
    expect(await page.$$eval(".schema-table summary .schema-name", (els) => els.map((e) => e.textContent))).toContain("runs");

    // Tab indents in the editor; a click on a schema name inserts it at the caret.
    await page.fill("#sql", "SELECT");
    await page.focus("#sql");
    await page.keyboard.press("End");
    await page.keyboard.press("Tab");
    expect(await page.inputValue("#sql")).toBe("SELECT  ");
    await page.click('.schema-table summary .schema-name[data-insert="runs"]');
    expect(await page.inputValue("#sql")).toBe("SELECT  runs");

    // A query by day: the table with its types, numbers right-aligned, the row count and time, and the chart.
    await runSql(page, DAILY_SQL);
    expect(await page.getAttribute("#query-results", "data-state")).toBe("ready");
    const heads = await page.$$eval("#result-table thead th", (ths) => ths.map((th) => [th.querySelector(".col-name")!.textContent, th.querySelector(".col-type")!.textContent, th.className]));
    expect(heads.map((h) => h[0])).toEqual(["day", "started", "cost"]);
    expect(heads[0]![1]).toMatch(/Date/);
    expect(heads[1]![1]).toMatch(/UInt64/);
    expect(heads.map((h) => h[2])).toEqual(["", "num", "num"]);
    const daily = await cells(page);
    expect(daily.map((r) => Number(r[1]))).toEqual([2, 2, 2]);
    expect(daily.map((r) => r[0])).toEqual([2, 1, 0].map((d) => new Date(today - d * DAY).toISOString().slice(0, 10)));
    expect(await page.textContent("#query-meta")).toMatch(/^3 rows · \d[\d,]* ms$/);
    expect(await page.isHidden("#query-banner")).toBe(true);
    expect(await page.isVisible("#query-chart")).toBe(true);
    expect(await page.getAttribute("#query-chart", "data-points")).toBe("3");
    expect([await page.getAttribute("#query-chart", "data-x"), await page.getAttribute("#query-chart", "data-y")]).toEqual(["day", "started"]);
    expect(await page.$("#query-chart canvas")).not.toBeNull();
    await page.screenshot({ path: path.join(ARTIFACTS, "query-1400.png"), fullPage: true });

    // The URL now carries the SQL: a reload opens it and runs it again.
    expect(new URL(page.url()).searchParams.get("sql")).toBe(DAILY_SQL);

    // Cut at a small max rows: the banner says so, and the row count.
    await page.fill("#max-rows", "2");
    await runSql(page, "SELECT sdk_run_id, cost_usd FROM runs ORDER BY sdk_run_id");
    expect(await cells(page)).toHaveLength(2);
    expect(await page.getAttribute("#query-results", "data-truncated")).toBe("true");
    expect(await page.getAttribute("#query-banner", "data-kind")).toBe("cut");
    expect(await page.textContent("#query-banner")).toBe("First 2 rows — raise max rows or aggregate.");
    expect(await page.isHidden("#query-chart")).toBe(true);

    // Refused: the message and the field, no rows, no chart.
    await page.fill("#max-rows", "1000");
    await runSql(page, "SELECT name FROM system.tables");
    expect(await page.getAttribute("#query-results", "data-state")).toBe("refused");
    expect(await page.getAttribute("#query-banner", "data-kind")).toBe("refused");
    expect(await page.getAttribute("#query-banner", "role")).toBe("alert");
    expect(await page.textContent("#query-banner")).toMatch(/^Refused: .+\(field: sql\)$/);
    expect(await page.$$("#result-table tr")).toHaveLength(0);

    // A parameter, bound by name.
    await page.click("#param-add");
    await page.fill("#param-rows .param-row:last-child .param-name", "agent");
    await page.fill("#param-rows .param-row:last-child .param-value", "=refund-bot");
    await runSql(page, "SELECT count() AS n, sum(cost_usd) AS cost FROM runs WHERE agent_name = {agent:String}");
    expect((await cells(page))[0]![0]).toBe("3");

    // Downloads of the same query: CSV with the formula defused, JSON Lines with the values.
    await page.click("#param-rows .param-remove");
    await page.fill("#sql", "SELECT agent_name, count() AS n, round(sum(cost_usd), 2) AS cost FROM runs GROUP BY agent_name ORDER BY agent_name");
    const file = async (button: string) => {
      const [download] = await Promise.all([page.waitForEvent("download"), page.click(button)]);
      return { name: download.suggestedFilename(), text: await fs.readFile((await download.path())!, "utf8") };
    };
    const csv = await file("#download-csv");
    expect(csv.name).toMatch(/^query-\d{4}-\d{2}-\d{2}\.csv$/);
    expect(csv.text).toBe("agent_name,n,cost\r\n'=refund-bot,3,0.12\r\ntriage-bot,3,0.09\r\n");
    const jsonl = await file("#download-jsonl");
    expect(jsonl.name).toMatch(/\.jsonl$/);
    const lines = jsonl.text.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.agent_name, Number(l.n), l.cost])).toEqual([["=refund-bot", 3, 0.12], ["triage-bot", 3, 0.09]]);
    expect(await page.textContent("#query-banner")).toMatch(/^Downloaded query-.+\.jsonl: 2 rows\.$/);

    // A link that carries the SQL, opened in another tab, runs it.
    await page.click("#share-query");
    const link = await page.inputValue("#share-url");
    expect(new URL(link).searchParams.get("sql")).toContain("GROUP BY agent_name");
    const other = await ctx.newPage();
    watch(other, problems);
    await other.goto(link);
    await other.waitForSelector('#query-results[data-state="ready"]');
    expect((await cells(other)).map((r) => r[0])).toEqual(["=refund-bot", "triage-bot"]);
    await other.close();

    // Saved: named, found again after a reload, opened from the list (and run), then deleted.
    await page.fill("#sql", DAILY_SQL);
    await page.click("#save-tool summary");
    await page.fill("#query-name", "Runs and cost per day");
    await page.fill("#query-description", "for the weekly review");
    await Promise.all([page.waitForURL(/\?saved=/), page.click("#save-as-query")]);
    await page.reload();
    await page.goto(`${stack.url}/query`);
    const entry = page.locator("#saved-queries a", { hasText: "Runs and cost per day" });
    expect(await entry.textContent()).toContain("for the weekly review");
    await Promise.all([page.waitForURL(/\?saved=/), entry.click()]);
    expect(await page.textContent("h1")).toBe("Runs and cost per day");
    expect(await page.inputValue("#sql")).toBe(DAILY_SQL);
    await page.waitForSelector('#query-results[data-state="ready"]');
    expect(await cells(page)).toHaveLength(3);
    page.once("dialog", (d) => d.accept());
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith("/query") && !u.search), page.click("#delete-query-form button")]);
    expect(await page.locator("#saved-queries a", { hasText: "Runs and cost per day" }).count()).toBe(0);

    // At 390 px: the editor above the results, a wide answer scrolls inside its card, the page does not.
    const phone = await env.browser().newContext({ viewport: { width: 390, height: 844 } });
    const small = await login(phone, stack.url, email);
    watch(small, problems);
    const wide = "SELECT sdk_run_id, agent_name, status, started_at, ended_at, duration_ms, cost_usd, total_tokens, tags, input_preview FROM runs ORDER BY sdk_run_id";
    await small.goto(`${stack.url}/query?${new URLSearchParams({ sql: wide })}`);
    await small.waitForSelector('#query-results[data-state="ready"]');
    const layout = await small.evaluate(() => {
      const wrap = document.querySelector("#query-results .table-wrap")!;
      return {
        page: Math.max(0, document.documentElement.scrollWidth - window.innerWidth),
        editorAbove: document.getElementById("sql")!.getBoundingClientRect().bottom < document.getElementById("query-results")!.getBoundingClientRect().top,
        scrolls: wrap.scrollWidth > wrap.clientWidth,
      };
    });
    expect(layout).toEqual({ page: 0, editorAbove: true, scrolls: true });
    await small.screenshot({ path: path.join(ARTIFACTS, "query-390.png"), fullPage: true });
    await phone.close();

    expect(problems).toEqual([]);
    await ctx.close();
  });
});
