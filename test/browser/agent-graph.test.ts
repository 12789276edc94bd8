/**
 * The agent graph of a real LangGraph.js run with a loop (test/browser/react-agent.ts: agent → tools → agent, twice
 * round, then the answer) in Chromium: the run page's "Agent graph" draws each node once with how often it ran, the
 * loop as one pair of handoff arrows with their counts, and the model and tool calls; clicking a node announces its
 * spans. The same graph from GET /api/runs/{id}/graph; an unknown run is a 404 naming it. Screenshots:
 * test/artifacts/agent-graph-1400.png, agent-graph-390.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bearer, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { weatherAgent } from "./react-agent.js";

describe.skipIf(!haveBrowser)("the agent graph in a real browser", () => {
  const env = useBrowserStack();

  it("draws a LangGraph loop once with its counts, and selects a node's spans", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(ctx, stack, "Gray", `graph-${Date.now()}@example.com`);
    const agent = weatherAgent(stack.url, key);
    const runId = await agent.ask("thread-graph", "Weather in Paris and Lisbon?");
    await agent.client.shutdown(5_000);
    // agent ×3 (two tool calls, then the answer), tools ×2, each with its model call or tool run: 10 spans, 20 events + start and end.
    await waitForRun(stack.url, key, runId, (b) => b.run.status === "success" && b.run.event_count === 22);

    const api = await fetch(`${stack.url}/api/runs/${runId}/graph`, bearer(key));
    expect(api.status).toBe(200);
    const { graph } = (await api.json()) as { graph: { nodes: { id: string; count: number }[]; edges: { from: string; to: string; type: string; count: number }[]; span_count: number } };
    expect(graph.span_count).toBe(10);
    expect(Object.fromEntries(graph.nodes.map((n) => [n.id, n.count]))).toEqual({ run: 1, "step:agent": 3, "llm:WeatherModel": 3, "step:tools": 2, "tool:get_weather": 2 });
    expect(graph.edges.map((e) => `${e.type} ${e.from} → ${e.to} ×${e.count}`).sort()).toEqual([
      "call run → step:agent ×1", "call step:agent → llm:WeatherModel ×3", "call step:tools → tool:get_weather ×2",
      "handoff step:agent → step:tools ×2", "handoff step:tools → step:agent ×2",
    ]);
    const missing = await fetch(`${stack.url}/api/runs/no-such-run/graph`, bearer(key));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: { code: "not_found", message: expect.stringContaining("no-such-run") } });

    await page.goto(`${stack.url}/dashboard/${runId}`);
    await page.click("#agent-graph > summary");
    await page.waitForSelector("#agent-graph .rw-gnode[data-node='step:agent']");
    // Each node once, with its count; the loop as one arrow each way, with its count.
    expect(await page.$$eval("#agent-graph .rw-gnode", (els) => els.map((e) => `${e.getAttribute("data-node")}=${e.getAttribute("data-count")}`).sort()))
      .toEqual(["llm:WeatherModel=3", "run=1", "step:agent=3", "step:tools=2", "tool:get_weather=2"]);
    const edge = (from: string, to: string) => page.locator(`#agent-graph .rw-gedge[data-from='${from}'][data-to='${to}']`);
    expect(await edge("step:agent", "step:tools").count()).toBe(1);
    expect(await edge("step:agent", "step:tools").textContent()).toContain("2×");
    expect(await edge("step:tools", "step:agent").getAttribute("class")).toContain("is-back"); // the loop goes back up
    expect(await edge("step:tools", "step:agent").textContent()).toContain("2×");
    expect(await page.textContent("#agent-graph .rw-gnode[data-node='step:agent'] .rw-gnode-facts")).toMatch(/^3× · \d/);
    // No node drawn over another.
    const boxes = await page.$$eval("#agent-graph .rw-gnode", (els) => els.map((e) => e.getBoundingClientRect()).map((r) => [r.left, r.top, r.right, r.bottom]));
    for (const [i, a] of boxes.entries()) for (const b of boxes.slice(i + 1)) expect(a[2] <= b[0] || b[2] <= a[0] || a[3] <= b[1] || b[3] <= a[1]).toBe(true);

    // Clicking a node (or Enter on it) selects it and announces its spans.
    await page.evaluate(() => document.addEventListener("runwatch:select-spans", (e) => ((window as unknown as { picked: unknown }).picked = (e as CustomEvent).detail.span_ids)));
    await page.click("#agent-graph .rw-gnode[data-node='step:tools']");
    expect(await page.getAttribute("#agent-graph .rw-gnode[data-node='step:tools']", "class")).toContain("is-selected");
    expect(await page.evaluate(() => (window as unknown as { picked: string[] }).picked)).toHaveLength(2);
    await page.focus("#agent-graph .rw-gnode[data-node='tool:get_weather']");
    await page.keyboard.press("Enter");
    expect(await page.getAttribute("#agent-graph .rw-gnode[data-node='tool:get_weather']", "class")).toContain("is-selected");
    await page.locator("#agent-graph").screenshot({ path: path.join(ARTIFACTS, "agent-graph-1400.png") });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator("#agent-graph").screenshot({ path: path.join(ARTIFACTS, "agent-graph-390.png") });
    // The page itself does not scroll sideways: a wide graph scrolls inside its card.
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await ctx.close();
  });
});
