/**
 * The run page's trace in Chromium: a LangGraph-like run (an agent node holding two LLM calls of two models and a
 * tool call, a subgraph node with its own call) renders as a tree waterfall; an LLM span shows its model, tokens
 * and cost; a subtree collapses and expands (without JS: <details>); a span sent later appears live, without a
 * reload; the page renders the tree with JavaScript off. Screenshots go to test/artifacts/.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";


describe.skipIf(!haveBrowser)("the run trace in a real browser", () => {
  const env = useBrowserStack();

  it("nests spans as the run went, shows LLM calls with model, tokens and cost, collapses, and grows live", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1440, height: 1000 } });
    const email = `trace-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(ctx, stack, "Tracy", email);
    const t0 = Date.now() - 5_000;
    const at = (ms: number) => new Date(t0 + ms).toISOString();
    const id = "trace-run-1";
    const ev = (event_type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ sdk_run_id: id, event_type, payload, ...extra });
    const send = async (events: unknown[]) => expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await send([
      ev("run_start", { framework: "langgraph" }, { agent_name: "researcher", occurred_at: at(0) }),
      ev("step", { node_name: "agent", phase: "start" }, { span_id: "agent-1", occurred_at: at(10) }),
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "start", input: [{ role: "user", content: "Find flights to Lisbon" }] }, { span_id: "llm-1", parent_span_id: "agent-1", occurred_at: at(20) }),
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o", provider: "openai", prompt_tokens: 1200, completion_tokens: 180, cached_tokens: 1000, output: "calling search_flights", duration_ms: 600 }, { span_id: "llm-1", parent_span_id: "agent-1", occurred_at: at(620) }),
      ev("tool_call", { tool_name: "search_flights", phase: "start", input_preview: '{"to": "LIS"}' }, { span_id: "tool-1", parent_span_id: "agent-1", occurred_at: at(630) }),
      ev("tool_call", { tool_name: "search_flights", phase: "end", output_preview: "3 flights", duration_ms: 400 }, { span_id: "tool-1", parent_span_id: "agent-1", occurred_at: at(1030) }),
      ev("step", { kind: "llm", node_name: "ChatAnthropic", phase: "end", model: "claude-sonnet-4-5", provider: "anthropic", prompt_tokens: 900, completion_tokens: 120, duration_ms: 800 }, { span_id: "llm-2", parent_span_id: "agent-1", occurred_at: at(1840) }),
      ev("step", { node_name: "agent", phase: "end", duration_ms: 1840 }, { span_id: "agent-1", occurred_at: at(1850) }),
      ev("step", { node_name: "booking", phase: "start" }, { span_id: "sub-1", occurred_at: at(1860) }),
      ev("step", { node_name: "booking/confirm", phase: "start" }, { span_id: "sub-1-a", parent_span_id: "sub-1", occurred_at: at(1870) }),
    ]);

    await waitForRun(stack.url, key, id, (b) => b.run.event_count === 10);
    await page.goto(`${stack.url}/dashboard/${id}`);
    await page.waitForSelector('#span-tree li[data-span-id="sub-1-a"]', { timeout: 10_000 });
    // Nesting in the DOM: each child inside its parent's list.
    expect(await page.$$eval('#span-tree > li', (els) => els.map((e) => (e as HTMLElement).dataset.spanId))).toEqual(["agent-1", "sub-1"]);
    expect(await page.$$eval('li[data-span-id="agent-1"] > details > ul > li', (els) => els.map((e) => (e as HTMLElement).dataset.spanId))).toEqual(["llm-1", "tool-1", "llm-2"]);
    const llm = page.locator('li[data-span-id="llm-1"]');
    expect(await llm.getAttribute("data-kind")).toBe("llm");
    const llmText = (await llm.textContent()) ?? "";
    expect(llmText).toContain("gpt-4o");
    expect(llmText).toMatch(/in\s*1,?200/);
    expect(llmText).toMatch(/cached\s*1,?000/);
    expect(llmText).toMatch(/\$0\.0\d+/);
    // The agent's subtree totals: two calls.
    expect(await page.textContent('li[data-span-id="agent-1"] > details > summary .sp-facts')).toContain("2 calls");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace.png"), fullPage: true });

    // Collapse and expand the agent's subtree.
    await page.click('li[data-span-id="agent-1"] > details > summary');
    expect(await page.isVisible('li[data-span-id="llm-1"]')).toBe(false);
    await page.click('li[data-span-id="agent-1"] > details > summary');
    expect(await page.isVisible('li[data-span-id="llm-1"]')).toBe(true);

    // Live: a call inside the subgraph node arrives; the tree grows without a reload.
    await page.evaluate(() => { (window as any).__noReload = true; });
    await send([ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 50, completion_tokens: 10, duration_ms: 90 }, { span_id: "llm-3", parent_span_id: "sub-1-a", occurred_at: at(1990) })]);
    await page.waitForSelector('li[data-span-id="sub-1-a"] li[data-span-id="llm-3"]', { timeout: 10_000 });
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-live.png"), fullPage: true });
    await ctx.close();

    // Without JavaScript the tree is there, and <details> still collapses it.
    const noJs = await env.browser().newContext({ javaScriptEnabled: false, viewport: { width: 1440, height: 1000 } });
    const p2 = await noJs.newPage();
    await p2.goto(`${stack.url}/login`);
    await p2.fill("#email", email);
    await p2.fill("#password", "correct horse battery");
    await Promise.all([p2.waitForURL((u) => u.pathname.endsWith("/dashboard")), p2.click("button[type=submit]")]);
    await p2.goto(`${stack.url}/dashboard/${id}`);
    expect(await p2.$$eval("#span-tree li[data-span-id]", (els) => els.length)).toBe(7); // the six, and the one that came live
    await p2.screenshot({ path: path.join(ARTIFACTS, "run-trace-no-js.png"), fullPage: true });
    await noJs.close();
  }, 90_000);
});
