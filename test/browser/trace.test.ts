/**
 * The run page's trace view in Chromium: a LangGraph-like run (an agent node holding two LLM calls of two models and
 * a tool call, a subgraph node with its own call) as a tree beside the selected span's panel. Rows nest and carry
 * kind, model, tokens, cost and subtree totals; a subtree folds and unfolds; selecting a span reads its payload (one
 * request, when selected) into the panel, where the span can be given feedback; a span sent later appears live under
 * its parent; the keyboard moves, folds,
 * opens and closes; a `#span=` link opens the page with that span selected; at 390 px the tree and the panel stack.
 * Without JavaScript the page links to its first spans as a list. Screenshots go to test/artifacts/.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, login, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf, traceRows } from "./trace-rows.js";

describe.skipIf(!haveBrowser)("the run trace in a real browser", () => {
  const env = useBrowserStack();
  const id = "trace-run-1";
  let email = "";
  let key = "";
  const t0 = Date.now() - 5_000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const ev = (event_type: string, payload: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ sdk_run_id: id, event_type, payload, ...extra });
  const send = async (events: unknown[]) => expect((await fetch(`${env.stack().url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
  const open = async (page: Page, hash = "") => {
    await page.goto(`${env.stack().url}/dashboard/${id}${hash}`);
    await page.waitForSelector(rowOf("sub-1-a"), { timeout: 10_000 });
  };

  it("nests spans with their facts, folds, reads a span's payload when it is selected, and grows live", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    email = `trace-${Date.now()}@example.com`;
    const reg = await registerWithKey(ctx, stack, "Tracy", email);
    const page = reg.page;
    key = reg.key;
    await send([
      ev("run_start", { framework: "langgraph", input: { question: "Book me a trip to Lisbon" } }, { agent_name: "researcher", occurred_at: at(0), tags: ["travel", "beta"] }),
      ev("step", { node_name: "agent", phase: "start" }, { span_id: "agent-1", occurred_at: at(10) }),
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "start", input: [{ role: "user", content: "Find flights to Lisbon" }], temperature: 0.2 }, { span_id: "llm-1", parent_span_id: "agent-1", occurred_at: at(20) }),
      ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o", provider: "openai", prompt_tokens: 1200, completion_tokens: 180, cached_tokens: 1000, output: "calling search_flights", duration_ms: 600 }, { span_id: "llm-1", parent_span_id: "agent-1", occurred_at: at(620) }),
      ev("tool_call", { tool_name: "search_flights", phase: "start", input_preview: '{"to": "LIS"}' }, { span_id: "tool-1", parent_span_id: "agent-1", occurred_at: at(630) }),
      ev("tool_call", { tool_name: "search_flights", phase: "end", output_preview: "3 flights", duration_ms: 400 }, { span_id: "tool-1", parent_span_id: "agent-1", occurred_at: at(1030) }),
      ev("step", { kind: "llm", node_name: "ChatAnthropic", phase: "end", model: "claude-sonnet-4-5", provider: "anthropic", prompt_tokens: 900, completion_tokens: 120, duration_ms: 800 }, { span_id: "llm-2", parent_span_id: "agent-1", occurred_at: at(1840) }),
      ev("step", { node_name: "agent", phase: "end", duration_ms: 1840 }, { span_id: "agent-1", occurred_at: at(1850) }),
      ev("step", { node_name: "booking", phase: "start" }, { span_id: "sub-1", occurred_at: at(1860) }),
      ev("step", { node_name: "booking/confirm", phase: "start" }, { span_id: "sub-1-a", parent_span_id: "sub-1", occurred_at: at(1870) }),
    ]);
    await waitForRun(stack.url, key, id, (b) => b.run.event_count === 10);
    await open(page);
    // The header keeps the run's totals, status and tags.
    expect(await page.$$eval(".run-head .run-tags li", (els) => els.map((e) => e.textContent))).toEqual(["beta", "travel"]);
    expect(await page.textContent(".run-head [data-f=status]")).toBe("running");
    // Nesting: the run's own row, then each span after its parent, one level deeper.
    expect((await traceRows(page)).map((r) => [r.id, r.level])).toEqual([
      ["", 1], ["agent-1", 2], ["llm-1", 3], ["tool-1", 3], ["llm-2", 3], ["sub-1", 2], ["sub-1-a", 3],
    ]);
    const llm = (await traceRows(page)).find((r) => r.id === "llm-1")!;
    expect(llm.kind).toBe("llm");
    expect(llm.text).toContain("gpt-4o");
    expect(llm.text).toMatch(/1,380 tok · \$0\.0\d+/);
    expect((await traceRows(page)).find((r) => r.id === "agent-1")!.text).toContain("2 calls");
    expect(await page.locator(rowOf("tool-1")).getAttribute("class")).toContain("tv-k-tool");

    // Selecting a span reads it whole (one request, at that moment) into the panel.
    const read = page.waitForResponse((r) => r.url().includes(`/dashboard/${id}/spans/llm-1`));
    await page.click(rowOf("llm-1"));
    expect((await read).status()).toBe(200);
    const panel = await panelShows(page, "llm-1");
    expect(panel).toContain("Find flights to Lisbon");
    expect(panel).toContain("calling search_flights");
    expect(panel).toMatch(/Tokens in\s*1,200/);
    expect(panel).toMatch(/Cached\s*1,000/);
    expect(panel).toContain("temperature"); // metadata
    expect(await page.locator(rowOf("llm-1")).getAttribute("aria-selected")).toBe("true");
    expect(new URL(page.url()).hash).toBe("#span=llm-1");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace.png"), fullPage: true });

    // Fold and unfold the agent's subtree.
    await page.click(`${rowOf("agent-1")} .tv-caret`);
    expect((await traceRows(page)).map((r) => r.id)).toEqual(["", "agent-1", "sub-1", "sub-1-a"]);
    expect(await page.locator(rowOf("agent-1")).getAttribute("aria-expanded")).toBe("false");
    await page.click(`${rowOf("agent-1")} .tv-caret`);
    expect((await traceRows(page)).map((r) => r.id)).toContain("llm-1");

    // Live: a call inside the subgraph node arrives; the tree grows without a reload, the selection stays.
    await page.evaluate(() => { (window as any).__noReload = true; });
    await send([ev("step", { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 50, completion_tokens: 10, duration_ms: 90 }, { span_id: "llm-3", parent_span_id: "sub-1-a", occurred_at: at(1990) })]);
    await page.waitForSelector(rowOf("llm-3"), { timeout: 10_000 });
    expect((await traceRows(page)).map((r) => [r.id, r.level]).slice(-2)).toEqual([["sub-1-a", 3], ["llm-3", 4]]);
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(await page.locator(rowOf("llm-1")).getAttribute("aria-selected")).toBe("true");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-live.png"), fullPage: true });
    await ctx.close();

    // Without JavaScript the page links to its first spans as a list, nested, and <details> still folds them.
    const noJs = await env.browser().newContext({ javaScriptEnabled: false, viewport: { width: 1400, height: 1000 } });
    const p2 = await noJs.newPage();
    await p2.goto(`${stack.url}/login`);
    await p2.fill("#email", email);
    await p2.fill("#password", "correct horse battery");
    await Promise.all([p2.waitForURL((u) => u.pathname.endsWith("/dashboard")), p2.click("button[type=submit]")]);
    await p2.goto(`${stack.url}/dashboard/${id}`);
    await Promise.all([p2.waitForURL((u) => u.searchParams.get("static") === "1"), p2.click("#trace a[href*='static=1']")]);
    expect(await p2.$$eval("#span-tree-static li[data-span-id]", (els) => els.length)).toBe(7); // the six, and the one that came live
    expect(await p2.$$eval('#span-tree-static li[data-span-id="agent-1"] > details > ul > li', (els) => els.map((e) => (e as HTMLElement).dataset.spanId))).toEqual(["llm-1", "tool-1", "llm-2"]);
    await p2.screenshot({ path: path.join(ARTIFACTS, "run-trace-no-js.png"), fullPage: true });
    await noJs.close();
  }, 90_000);

  it("moves, folds, opens and closes from the keyboard, and opens at a #span= link", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await login(ctx, stack.url, email);

    // A link to a span: the page opens with it selected, in view, its payload in the panel.
    await open(page, "#span=tool-1");
    expect(await panelShows(page, "tool-1")).toContain("3 flights");
    expect(await page.locator(rowOf("tool-1")).getAttribute("aria-selected")).toBe("true");

    const cursor = async () => (await page.$eval(".tv-row.tv-cursor", (el) => (el as HTMLElement).dataset.spanId)) ?? null;
    await page.focus("#tv-scroll");
    await page.keyboard.press("Home");
    expect(await cursor()).toBe("");
    await page.keyboard.press("ArrowDown");
    expect(await cursor()).toBe("agent-1");
    await page.keyboard.press("j");
    expect(await cursor()).toBe("llm-1");
    await page.keyboard.press("k");
    expect(await cursor()).toBe("agent-1");
    // ← folds the agent; ← again goes to its parent (the run); → unfolds it.
    await page.keyboard.press("ArrowLeft");
    expect(await page.locator(rowOf("agent-1")).getAttribute("aria-expanded")).toBe("false");
    expect((await traceRows(page)).map((r) => r.id)).not.toContain("llm-1");
    await page.keyboard.press("ArrowLeft");
    expect(await cursor()).toBe("");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowRight");
    expect(await page.locator(rowOf("agent-1")).getAttribute("aria-expanded")).toBe("true");
    // → on an unfolded span goes to its first child; Enter opens it.
    await page.keyboard.press("ArrowRight");
    expect(await cursor()).toBe("llm-1");
    await page.keyboard.press("Enter");
    expect(await panelShows(page, "llm-1")).toContain("Find flights to Lisbon");
    expect(new URL(page.url()).hash).toBe("#span=llm-1");
    // Esc closes the span: the panel shows the run.
    await page.keyboard.press("Escape");
    expect(await panelShows(page, "")).toContain("Book me a trip to Lisbon");
    expect(new URL(page.url()).hash).toBe("");
    // `/` goes to the search box; a name found, Enter opens the match; Esc clears the search.
    await page.keyboard.press("/");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("trace-search");
    await page.keyboard.type("ChatAnthropic");
    await page.waitForFunction(() => document.getElementById("trace-matches")?.textContent === "0 of 1");
    await page.keyboard.press("Enter");
    expect(await panelShows(page, "llm-2")).toContain("claude-sonnet-4-5");
    await page.keyboard.press("Escape");
    expect(await page.inputValue("#trace-search")).toBe("");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tv-scroll");

    // A node of the agent graph chosen: the trace opens its first span and marks the others.
    await page.click("#agent-graph > summary");
    await page.click("#agent-graph .rw-gnode[data-node='llm:ChatOpenAI']");
    expect(await panelShows(page, "llm-1")).toContain("Find flights to Lisbon");
    expect(await page.locator(rowOf("llm-3")).getAttribute("class")).toContain("tv-match");
    await ctx.close();
  }, 60_000);

  it("gives a span feedback from its panel: the score is the span's, its row shows it, and the page comes back to it", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const page = await login(ctx, stack.url, email);
    await open(page, "#span=tool-1");
    await panelShows(page, "tool-1");
    await page.fill("#trace-panel .span-feedback textarea[name=comment]", "wrong airport");
    await Promise.all([page.waitForURL((u) => u.hash === "#span=tool-1"), page.click("#trace-panel .span-feedback button[value=down]")]);
    expect(await panelShows(page, "tool-1")).toMatch(/user_feedback bad[\s\S]*wrong airport/);
    expect(await page.textContent(`${rowOf("tool-1")} .tv-chips`)).toBe("user_feedback ✗");
    const scores = (await (await page.request.get(`${stack.url}/api/runs/${id}/scores`, { headers: { authorization: `Bearer ${key}` } })).json()) as { scores: { span_id: string; value: unknown }[] };
    expect(scores.scores.map((s) => [s.span_id, s.value])).toEqual([["tool-1", false]]);
    await ctx.close();
  }, 60_000);

  it("at 390 px stacks the tree and the panel, without a page wider than the screen", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const page = await login(ctx, stack.url, email);
    await open(page);
    expect(await page.isVisible("#trace-panel")).toBe(false); // opens with a span
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-390.png"), fullPage: false });
    await page.tap(rowOf("llm-1"));
    await panelShows(page, "llm-1");
    const box = async (sel: string) => (await page.locator(sel).boundingBox())!;
    const [tree, panel] = [await box(".trace-tree"), await box("#trace-panel")];
    expect(panel.y).toBeGreaterThanOrEqual(tree.y + tree.height - 1);
    expect(panel.width).toBeGreaterThan(300);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator("#trace-panel").scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-390-span.png"), fullPage: false });
    // The panel's section titles line up with their sections (no card heading's padding on them).
    const [title, section] = [await box("#trace-panel .tp-section >> nth=0 >> .tp-title"), await box("#trace-panel .tp-section >> nth=0")];
    expect(title.x).toBeLessThanOrEqual(section.x + 1);
    // A span's feedback, then the run's scores: each score a card whose span is on the screen, not scrolled out of it.
    await page.fill("#trace-panel .span-feedback textarea[name=comment]", "too slow");
    await Promise.all([page.waitForURL((u) => u.hash === "#span=llm-1"), page.click("#trace-panel .span-feedback button[value=down]")]);
    const span = page.locator("#scores .score-list td[data-label=Span]", { hasText: "llm-1" });
    await span.scrollIntoViewIfNeeded();
    const cell = (await span.boundingBox())!;
    expect(cell.x + cell.width).toBeLessThanOrEqual(390);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(ARTIFACTS, "run-trace-390-scores.png"), fullPage: false });
    await ctx.close();
  }, 60_000);
});
