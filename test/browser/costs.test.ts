/**
 * /costs counts runs, not (day, agent, model) groups: a run that called two models and a run whose calls span
 * midnight are one run each in the totals, the average per run and every table; and the "By model" table fits its
 * card at 1400 px. Screenshot: test/artifacts/costs-1400.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

const DAY = 86_400_000;

describe.skipIf(!haveBrowser)("costs in a real browser", () => {
  const env = useBrowserStack();

  it("a two-model run and a run across midnight count once everywhere; the model table fits at 1400 px", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(ctx, stack, "Cora", `costs-${Date.now()}@example.com`);
    const midnight = Math.floor(Date.now() / DAY) * DAY - DAY; // yesterday 00:00 UTC
    const iso = (ms: number) => new Date(ms).toISOString();
    // Without a cost, a call is priced from the price table: its cell then also shows the computed part.
    const llm = (run: string, span: string, at: number, model: string, cost?: number) => ({
      event_type: "step", sdk_run_id: run, span_id: span, occurred_at: iso(at),
      payload: { node_name: "call_model", kind: "llm", phase: "end", model, prompt_tokens: 1_200_000, completion_tokens: 300_000, ...(cost === undefined ? {} : { cost_usd: cost }), duration_ms: 900 },
    });
    const events = [
      { event_type: "run_start", sdk_run_id: "two-models", agent_name: "costs-bot", occurred_at: iso(midnight + 10 * 3600_000), payload: {} },
      llm("two-models", "a1", midnight + 10 * 3600_000 + 1000, "gpt-4o", 0.01),
      llm("two-models", "a2", midnight + 10 * 3600_000 + 2000, "claude-sonnet-4-5", 0.02),
      { event_type: "run_end", sdk_run_id: "two-models", occurred_at: iso(midnight + 10 * 3600_000 + 3000), payload: {} },
      { event_type: "run_start", sdk_run_id: "across-midnight", agent_name: "costs-bot", occurred_at: iso(midnight - 60_000), payload: {} },
      llm("across-midnight", "b1", midnight - 30_000, "gpt-4o"),
      llm("across-midnight", "b2", midnight + 30_000, "gpt-4o"),
      { event_type: "run_end", sdk_run_id: "across-midnight", occurred_at: iso(midnight + 60_000), payload: {} },
    ];
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await waitForRun(stack.url, key, "two-models", (b) => b.run.status === "success" && b.run.llm_calls === 2);
    await waitForRun(stack.url, key, "across-midnight", (b) => b.run.status === "success" && b.run.llm_calls === 2);

    await page.goto(`${stack.url}/costs?days=7`);
    expect((await page.textContent("#total-runs"))?.trim()).toBe("2");
    const rows = async (id: string) => page.$$eval(`#${id} tbody tr`, (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent!.trim())));
    const byAgent = await rows("cost-by-agent");
    expect(byAgent.map((r) => [r[0], r[1]])).toEqual([["costs-bot", "2"]]);
    const byModel = Object.fromEntries((await rows("cost-by-model")).map((r) => [r[0], r[1]]));
    expect(byModel).toEqual({ "gpt-4o": "2", "claude-sonnet-4-5": "1" });
    expect(await page.textContent("body")).toContain("(1 run) was computed");

    // Every cell of the model table is inside its card.
    const overflow = await page.$eval("#cost-by-model", (table) => {
      const card = table.closest(".card")!.getBoundingClientRect();
      return Array.from(table.querySelectorAll("th, td")).some((c) => c.getBoundingClientRect().right > card.right + 0.5);
    });
    await page.screenshot({ path: path.join(ARTIFACTS, "costs-1400.png"), fullPage: true });
    expect(overflow).toBe(false);
    await ctx.close();
  });
});
