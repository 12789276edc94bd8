/**
 * /slos in Chromium: reached from /alerts, it shows each SLO's objective, its good share, the budget left and the burn
 * rates of runs just ingested (the API's numbers), with no Content-Security-Policy violation.
 * Screenshot: test/artifacts/slos-1400.png.
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
    const [name, agent, objective, now, left, fast, slow] = cells[0]!;
    expect([name, agent, objective]).toEqual(["Checkout works", "shop-bot", "90% of runs succeed over 7 days"]);
    expect(now).toBe("90% good 1 bad of 10 runs");
    expect(left).toMatch(/^0% 1 of 1 bad runs allowed$/);
    expect(fast).toBe("1× / 1×");
    expect(slow).toBe("1× / 1×");
    await page.screenshot({ path: path.join(ARTIFACTS, "slos-1400.png"), fullPage: true });
    expect(violations).toEqual([]);
    await ctx.close();
  }, 120_000);
});
