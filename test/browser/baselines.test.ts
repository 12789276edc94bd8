/**
 * The agent page's "Usual and changed" card in Chromium: per metric, the agent's band, each environment's and recent
 * config version's (a young version "learning", with the hours it has), and a config activation compared as its two
 * versions' own bands; at 390 px every cell of a metric stays on screen, labelled. History is seeded through the
 * baselines store (four weeks of hours), the agent and its versions through the registry.
 * Screenshots: test/artifacts/baselines-1400.png, baselines-390.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { insertMetricHours, type MetricHour } from "../../stores/baselines/metric-hours.js";
import { insertDimensionHours, type DimensionHour } from "../../stores/baselines/dimension-hours.js";
import { addVersion, createAgent } from "../../stores/agent-registry.js";

const HOUR = 3_600_000;

describe.skipIf(!haveBrowser)("learned baselines on the agent page in a real browser", () => {
  const env = useBrowserStack();

  it("shows each environment's and config version's band and compares an activation by its versions", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const email = `baselines-${Date.now()}@example.com`;
    const { page } = await registerWithKey(ctx, stack, "Bea", email);
    const pid = (await findUserByEmail(stack.ports.sql, email))!.id;
    const violations: string[] = [];
    page.on("console", (m) => { if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text()); });

    const hourStart = Math.floor(Date.now() / HOUR) * HOUR;
    const agentWide: MetricHour[] = [];
    const split: DimensionHour[] = [];
    const dim = (dimension: DimensionHour["dimension"], value: string, hour: Date, v: number): DimensionHour =>
      ({ agent_name: "support-bot", dimension, dimension_value: value, metric: "latency_p95", hour, runs: 20, value: v });
    for (let h = 1; h <= 28 * 24; h++) {
      const hour = new Date(hourStart - h * HOUR);
      agentWide.push({ agent_name: "support-bot", metric: "latency_p95", hour, runs: 40, value: [2, 2.2, 2, 1.8][h % 4]! });
      split.push(dim("environment", "production", hour, [1, 1.1, 1, 0.9][h % 4]!), dim("environment", "staging", hour, [3, 3.3, 3, 2.7][h % 4]!));
      split.push(dim("config_version", h > 30 ? "1" : h > 5 ? "2" : "3", hour, h > 30 ? 2 : 2.6));
    }
    await insertMetricHours(stack.ports.clickhouse, pid, agentWide);
    await insertDimensionHours(stack.ports.clickhouse, pid, split);
    await createAgent(stack.ports.sql, pid, { name: "support-bot" });
    for (const model of ["a", "b"]) await addVersion(stack.ports.sql, pid, "support-bot", { config: JSON.stringify({ model }), activate: true });

    await page.goto(`${stack.url}/agents/support-bot`);
    await page.waitForSelector("#baselines");
    const row = async () => page.$eval('#baselines tr:has(td:text-is("p95 latency"))', (tr) =>
      Array.from(tr.querySelectorAll("td")).map((td) => (td as HTMLElement).innerText.replace(/\s+/g, " ").trim()));
    const [label, usual, , change, dims] = await row();
    expect(label).toBe("p95 latency");
    expect(usual).toMatch(/^2\.0 s \(up to [\d.]+ s\) for \w+ \d\d:00$/);
    expect(change).toMatch(/^config v2 \([0-9-]+ [0-9:]+ UTC\): v1 usually 2\.0 s → v2 usually 2\.6 s \(each version's own baseline\)$/);
    expect(dims).toMatch(/^production 1\.0 s \(up to [\d.]+ s\) staging 3\.0 s \(up to [\d.]+ s\) v3 learning: 5 of 24 hours v2 2\.6 s \(up to [\d.]+ s\) any hour v1 2\.0 s \(up to [\d.]+ s\)$/);
    await page.locator("#baselines").screenshot({ path: path.join(ARTIFACTS, "baselines-1400.png") });

    // At 390 px each cell of the row is a labelled block inside the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${stack.url}/agents/support-bot#baselines`);
    await page.waitForSelector("#baselines");
    const boxes = await page.$$eval('#baselines tr:has(td:text-is("p95 latency")) td', (tds) => tds.map((td) => {
      const r = td.getBoundingClientRect();
      return { left: r.left, right: r.right, visible: r.width > 0 && r.height > 0, label: getComputedStyle(td, "::before").content };
    }));
    expect(boxes).toHaveLength(5);
    for (const b of boxes) {
      expect(b.visible, JSON.stringify(b)).toBe(true);
      expect(b.left, JSON.stringify(b)).toBeGreaterThanOrEqual(0);
      expect(b.right, JSON.stringify(b)).toBeLessThanOrEqual(390);
    }
    expect(boxes.slice(1).map((b) => b.label)).toEqual(['"Usual now"', '"Last 30 min"', '"Latest change"', '"Per environment and version"']);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator("#baselines").screenshot({ path: path.join(ARTIFACTS, "baselines-390.png") });
    expect(violations).toEqual([]);
    await ctx.close();
  }, 90_000);
});
