/**
 * The live dashboard in a real browser (playwright-core driving Debian's chromium) against a real server:
 * web + pipeline + gateway in-process over a temporary data dir, free ports.
 *
 * Skips when /usr/bin/chromium is absent, unless REQUIRE_BROWSER=1. Screenshots go to test/artifacts/.
 */
import { describe, expect, it } from "vitest";
import path from "node:path";
import type { Page } from "playwright-core";
import { ARTIFACTS, haveBrowser, register, useBrowserStack } from "./stack.js";
import { panelShows, rowOf, traceRows } from "./trace-rows.js";

/** Watches every WebSocket frame a page receives (to prove what a session did and did not get). */
function recordFrames(page: Page): string[] {
  const frames: string[] = [];
  page.on("websocket", (ws) => ws.on("framereceived", (f) => frames.push(typeof f.payload === "string" ? f.payload : f.payload.toString())));
  return frames;
}

const live = (page: Page) => page.waitForSelector('#live-indicator[data-state="live"]', { timeout: 10_000 });

describe.skipIf(!haveBrowser)("live dashboard in a real browser", () => {
  const env = useBrowserStack();

  it("shows a run appear and finish live, its spans in order, and nothing to another user", async () => {
    const stack = env.stack();
    const browser = env.browser();
    const base = stack.url;
    const viewport = { width: 1440, height: 900 };
    const ctxA = await browser.newContext({ viewport });
    const ctxB = await browser.newContext({ viewport });

    // Login and register pages (screenshots of the public pages first).
    const loginPage = await ctxA.newPage();
    await loginPage.goto(`${base}/login`);
    await loginPage.screenshot({ path: path.join(ARTIFACTS, "login.png") });
    await loginPage.close();

    const stamp = Date.now();
    const a = await register(ctxA, base, "Ada Lovelace", `ada-${stamp}@example.com`, "register.png");
    const b = await register(ctxB, base, "Bob Builder", `bob-${stamp}@example.com`);

    // Ada creates an API key on the settings page; it is shown once.
    await a.goto(`${base}/settings/api-keys`);
    await a.fill("#name", "browser test");
    await Promise.all([a.waitForLoadState("load"), a.click("form[action$='/settings/api-keys'] button[type=submit]")]);
    const key = (await a.textContent("#new-key"))!.trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    await a.screenshot({ path: path.join(ARTIFACTS, "api-keys.png"), fullPage: true });

    const framesA = recordFrames(a);
    const framesB = recordFrames(b);
    await a.goto(`${base}/dashboard`);
    await b.goto(`${base}/dashboard`);
    await Promise.all([live(a), live(b)]);
    await a.screenshot({ path: path.join(ARTIFACTS, "dashboard-empty.png") });
    // A marker that a reload would wipe: the row must arrive without one.
    await a.evaluate(() => { (window as any).__noReload = true; });

    const sdkRunId = `browser-run-${stamp}`;
    const post = async (event: Record<string, unknown>) => {
      const res = await fetch(`${base}/api/ingest`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ sdk_run_id: sdkRunId, ...event }),
      });
      expect(res.status).toBe(202);
      return res;
    };
    const t = (ms: number) => new Date(stamp + ms).toISOString();
    await post({ event_type: "run_start", agent_name: "support-triage", occurred_at: t(0), payload: { framework: "langgraph", input: { question: "Where is my order #1234?" } } });
    const row = `tr[data-run="${sdkRunId}"]`;
    // Generous deadlines: this proves the push (no reload, see __noReload); how fast it is lives in bench:freshness.
    await a.waitForSelector(row, { timeout: 10_000 });
    await post({ event_type: "step", occurred_at: t(20), payload: { node_name: "lookup_order", phase: "start" } });
    await post({ event_type: "tool_call", occurred_at: t(40), payload: { tool_name: "orders_api", phase: "start", input_preview: '{"order_id": 1234}' } });
    await post({ event_type: "tool_call", occurred_at: t(460), payload: { tool_name: "orders_api", phase: "end", output_preview: '{"status": "shipped", "carrier": "DHL"}', duration_ms: 420 } });
    await post({ event_type: "step", occurred_at: t(500), payload: { node_name: "lookup_order", phase: "end", duration_ms: 480, output: { found: true } } });
    await post({ event_type: "run_end", occurred_at: t(1900), payload: { output: { answer: "Your order shipped with DHL." }, prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, cost_usd: 0.0123, model: "gpt-4o-mini" } });
    const acked = Date.now();
    await a.waitForSelector(`${row}[data-status="success"]`, { timeout: 10_000 });
    console.log(`dashboard: run_end visible ${Date.now() - acked} ms after its 202`);
    expect(await a.evaluate(() => (window as any).__noReload)).toBe(true);
    expect(await a.textContent(`${row} [data-f="status"]`)).toBe("success");
    expect(await a.textContent(`${row} [data-f="agent"]`)).toBe("support-triage");
    await a.waitForFunction((sel) => !document.querySelector(sel)?.textContent?.includes("$0 ") && document.querySelector(sel)?.textContent?.includes("$0.01"), `${row} [data-f="cost"]`);

    // A failing run and one waiting for a human, for the errors view and the screenshots.
    const errRun = `browser-err-${stamp}`;
    const waitRun = `browser-wait-${stamp}`;
    for (const [id, evs] of [
      [errRun, [
        { event_type: "run_start", agent_name: "research-assistant", payload: { framework: "langgraph" } },
        { event_type: "step", payload: { node_name: "search", phase: "start" } },
        { event_type: "error", payload: { error_type: "RateLimitError", error_message: "429 Too Many Requests", traceback: "Traceback (most recent call last):\n  File \"agent.py\", line 42, in search\n    results = client.search(q)\nRateLimitError: 429 Too Many Requests" } },
      ]],
      [waitRun, [
        { event_type: "run_start", agent_name: "refund-bot", payload: { framework: "langgraph" } },
        { event_type: "human_input_requested", payload: { question: "Refund $42 for order #1234?", channel: "slack" } },
      ]],
    ] as const) {
      for (const e of evs) {
        const res = await fetch(`${base}/api/ingest`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ sdk_run_id: id, ...e }) });
        expect(res.status).toBe(202);
      }
    }
    await a.waitForSelector(`tr[data-run="${errRun}"][data-status="error"]`, { timeout: 10_000 });
    await a.waitForSelector(`tr[data-run="${waitRun}"][data-status="waiting_for_input"]`, { timeout: 10_000 });
    // The summary (counts and panels) follows, throttled.
    await a.waitForFunction(() => document.querySelector(".stat-error .stat-value")?.textContent?.trim() === "1", undefined, { timeout: 10_000 });
    await a.screenshot({ path: path.join(ARTIFACTS, "dashboard.png"), fullPage: true });

    // Bob, connected the whole time, received nothing of Ada's, and has no rows.
    expect(framesA.some((f) => f.includes(sdkRunId))).toBe(true);
    expect(framesB.filter((f) => f.includes('"type":"events"'))).toEqual([]);
    expect(framesB.some((f) => f.includes(sdkRunId) || f.includes("support-triage"))).toBe(false);
    expect(await b.$$(`tr[data-run]`)).toHaveLength(0);

    // Bob forging a subscription to Ada's channel is refused: error frame, close 4403.
    const adaChannel = (await a.evaluate(async () => (await (await fetch("/api/realtime/token")).json()).channel)) as string;
    const forged = await b.evaluate(async (channel) => {
      const info = await (await fetch("/api/realtime/token")).json();
      return await new Promise<{ frames: string[]; code: number }>((resolve) => {
        const ws = new WebSocket(info.url, info.protocols);
        const frames: string[] = [];
        ws.onmessage = (e) => {
          frames.push(e.data);
          if (JSON.parse(e.data).type === "hello") ws.send(JSON.stringify({ type: "subscribe", channel }));
        };
        ws.onclose = (e) => resolve({ frames, code: e.code });
      });
    }, adaChannel);
    expect(forged.code).toBe(4403);
    expect(forged.frames.some((f) => f.includes("forbidden_channel"))).toBe(true);

    // The run page: the header, the spans paired (sent without span ids) with their durations, a span's output and
    // the run's own input and output in the panel.
    await a.goto(`${base}/dashboard/${encodeURIComponent(sdkRunId)}`);
    expect(await a.textContent(".run-head [data-f=status]")).toBe("success");
    await a.waitForSelector('.tv-row[data-span-id^="e:"]');
    const rows = await traceRows(a);
    expect(rows.map((r) => [r.kind, r.dur])).toEqual([["run", "1.90 s"], ["step", "480 ms"], ["tool", "420 ms"]]);
    expect(await panelShows(a, "")).toContain("Your order shipped with DHL.");
    await a.click(rowOf(rows[2]!.id));
    // The tool's output preview is JSON text: it reads as a tree of its fields.
    expect(await panelShows(a, rows[2]!.id)).toMatch(/Output[\s\S]*"status": "shipped"[\s\S]*"carrier": "DHL"/);
    await a.screenshot({ path: path.join(ARTIFACTS, "run.png"), fullPage: true });

    // The run page of a live run gets new events without reload: the run's panel shows the answer.
    await a.goto(`${base}/dashboard/${encodeURIComponent(waitRun)}`);
    await live(a);
    await panelShows(a, "");
    await a.evaluate(() => { (window as any).__noReload = true; });
    const res = await fetch(`${base}/api/ingest`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ sdk_run_id: waitRun, event_type: "human_input_received", payload: { response: "Yes, refund it.", responded_by: "ada" } }) });
    expect(res.status).toBe(202);
    await a.waitForSelector("#trace-panel .tp-event-human_input_received", { timeout: 10_000 });
    expect(await a.textContent("#trace-panel .tp-event-human_input_received")).toContain("Yes, refund it.");
    expect(await a.textContent(".run-head [data-f=status]")).toBe("running");
    expect(await a.evaluate(() => (window as any).__noReload)).toBe(true);
    await a.screenshot({ path: path.join(ARTIFACTS, "run-human-input.png"), fullPage: true });

    await a.goto(`${base}/dashboard/${encodeURIComponent(errRun)}`);
    await a.screenshot({ path: path.join(ARTIFACTS, "run-error.png"), fullPage: true });

    for (const [name, url, check] of [
      ["errors", "/errors", `tr[data-run="${errRun}"]`],
      ["agents", "/agents", "#agents"],
      ["costs", "/costs", "#cost-chart"],
      ["alerts", "/alerts", "#alert-rules"],
    ] as const) {
      const r = await a.goto(`${base}${url}`);
      expect(r?.status(), url).toBe(200);
      await a.waitForSelector(check);
      await a.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
    }
    expect(await a.textContent("body")).not.toContain(sdkRunId); // alerts page: no run data leaks in
    await a.goto(`${base}/costs`);
    expect(await a.textContent("#cost-by-agent-model")).toContain("gpt-4o-mini");
    await ctxA.close();
    await ctxB.close();
  }, 90_000);
});
