/**
 * /slos in Chromium: reached from /alerts, it shows each SLO's objective, its good share, the budget left and the burn
 * rates of runs just ingested (the API's numbers) and the burn over the window as a chart, with no
 * Content-Security-Policy violation; an SLO is created and deleted through the page's form; at 390 px the budget and
 * burn cells stay on screen. Screenshots: test/artifacts/slos-1400.png, slos-390.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("SLOs in a real browser", () => {
  const env = useBrowserStack();

  it("the budget left and the burn rates of an agent's SLO", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sam", `slos-${Date.now()}@example.com`);
    const violations: string[] = [];
    page.on("console", (m) => { if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text()); });
    const created = await fetch(`${stack.url}/api/slos`, json(key, { name: "Checkout works", agent_name: "shop-bot", objective: "success_rate", target: 0.9, window_days: 7 }));
    expect(created.status).toBe(201);
    // 10 runs a minute ago, 1 failed: 10% bad against a 10% allowance — the whole budget, burning at 1×.
    const at = new Date(Date.now() - 60_000).toISOString();
    const events = Array.from({ length: 10 }, (_, i) => [
      { event_type: "run_start", sdk_run_id: `s-${i}`, agent_name: "shop-bot", occurred_at: at, payload: {} },
      i === 0
        ? { event_type: "error", sdk_run_id: `s-${i}`, occurred_at: at, payload: { error_type: "Timeout", error_message: "slow" } }
        : { event_type: "run_end", sdk_run_id: `s-${i}`, occurred_at: at, payload: {} },
    ]).flat();
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    for (let i = 0; i < 10; i++) await waitForRun(stack.url, key, `s-${i}`, (b) => b.run.status !== "running");

    await page.goto(`${stack.url}/alerts`);
    await page.click("#slos-link");
    await page.waitForSelector("#slos");
    const cells = await page.$$eval("#slos tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => (td as HTMLElement).innerText.replace(/\s+/g, " ").trim())));
    expect(cells).toHaveLength(1);
    const [slo, now, left, fast, slow] = cells[0]!;
    expect(slo).toBe("Checkout works shop-bot · 90% of runs succeed over 7 days");
    expect(now).toBe("90% good 1 bad of 10 runs");
    expect(left).toMatch(/^0% 1 of 1 bad runs allowed$/);
    expect(fast).toBe("1× / 1×");
    expect(slow).toBe("1× / 1×");
    // The burn over the window: a uPlot canvas drawn from the page's points.
    await page.waitForSelector(".slo-chart[data-state=drawn] canvas");

    // The form: a refused field is named and kept, then the SLO is created, then deleted (after the confirmation).
    await page.click("#new-slo summary");
    await page.fill("#slo-name", "Answers correct");
    await page.fill("#slo-agent", "shop-bot");
    await page.selectOption("#slo-objective", "score_mean");
    await page.fill("#slo-target", "0.8");
    await page.fill("#slo-window", "30");
    await page.click("#create-slo");
    await page.waitForSelector("#new-slo[open] .field-error");
    expect(await page.textContent("#new-slo .field-error")).toContain("score_name is required");
    await page.fill("#slo-score", "correctness");
    await page.click("#create-slo");
    await page.waitForSelector("text=Created the SLO “Answers correct”.");
    expect(await page.$$eval("#slos tbody tr", (trs) => trs.length)).toBe(2);
    expect(await page.innerText("#slos")).toContain("mean correctness ≥ 0.8 over 30 days");
    await page.screenshot({ path: path.join(ARTIFACTS, "slos-1400.png"), fullPage: true });
    page.once("dialog", (d) => void d.accept());
    await page.click('#slos tr:has-text("Answers correct") .slo-actions button');
    await page.waitForSelector("text=SLO deleted.");
    expect(await page.$$eval("#slos tbody tr", (trs) => trs.length)).toBe(1);

    // At 390 px every cell of the row, the budget and both burn rates included, is inside the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${stack.url}/slos`);
    await page.waitForSelector(".slo-chart[data-state=drawn] canvas");
    const boxes = await page.$$eval("#slos tbody tr:first-child td", (tds) => tds.map((td) => {
      const r = td.getBoundingClientRect();
      return { label: td.getAttribute("data-label"), left: r.left, right: r.right, visible: r.width > 0 && r.height > 0 };
    }));
    for (const b of boxes.filter((x) => x.label)) expect(b, JSON.stringify(b)).toMatchObject({ visible: true });
    for (const b of boxes) expect(b.right, JSON.stringify(b)).toBeLessThanOrEqual(390);
    expect(boxes.map((b) => b.label)).toEqual(expect.arrayContaining(["Budget left", "Burn 1 h / 5 min", "Burn 6 h / 30 min"]));
    // The chart fits inside its card.
    const [canvasRight, cardRight] = await page.$eval(".slo-chart canvas", (c) => [c.getBoundingClientRect().right, c.closest(".card")!.getBoundingClientRect().right]);
    expect(canvasRight).toBeLessThanOrEqual(cardRight!);
    await page.screenshot({ path: path.join(ARTIFACTS, "slos-390.png"), fullPage: true });
    expect(violations).toEqual([]);
    await ctx.close();
  }, 120_000);
});
