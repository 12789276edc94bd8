/**
 * Sessions in Chromium against web + pipeline + gateway: /sessions lists the user's sessions; /sessions/{id} reads as
 * a conversation — each turn's question and the agent's answer (its tool calls included) as messages, linked to the
 * turn's trace — and grows live (no reload) when the next turn arrives, the turns already read left as they were.
 * The turns are a real LangGraph.js agent's (test/browser/react-agent.ts), whose output is the thread's whole state:
 * each turn shows only its own part. Screenshots: test/artifacts/sessions-list.png, session-page.png,
 * session-page-390.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { weatherAgent } from "./react-agent.js";

describe.skipIf(!haveBrowser)("sessions in a real browser", () => {
  const env = useBrowserStack();

  it("lists sessions and reads a conversation as a transcript, the next turn arriving live", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sol", `sessions-${Date.now()}@example.com`);
    const agent = weatherAgent(stack.url, key);
    const ask = async (question: string) => {
      const id = await agent.ask("thread-7", question);
      await waitForRun(stack.url, key, id, (b) => b.run.status === "success");
      return id;
    };
    const first = await ask("Weather in Paris?");
    const second = await ask('And in Oslo? <img src=x onerror="window.__pwned=1">');

    await page.goto(`${stack.url}/sessions`);
    expect(await page.$$eval("#sessions tbody tr[data-session]", (trs) => trs.map((tr) => (tr as HTMLElement).dataset.session))).toEqual(["thread-7"]);
    expect((await page.textContent("#sessions tbody tr td:nth-child(3)"))?.trim()).toBe("2");
    await page.screenshot({ path: path.join(ARTIFACTS, "sessions-list.png") });

    await page.click("#sessions a[href$='/sessions/thread-7']");
    await page.waitForSelector(`.turn[data-run='${second}'] .turn-output .rw-msg`);
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    const side = (run: string, which: "input" | "output") =>
      page.$$eval(`.turn[data-run='${run}'] .turn-${which} > .rw-msgs > .rw-msg`, (els) => els.map((e) => `${(e as HTMLElement).dataset.role}: ${e.querySelector(".rw-tool-name")?.textContent ?? e.querySelector(".rw-text")?.textContent ?? ""}`));
    // Each turn: the user's question, then the agent's tool call, the tool's result and the answer — not the thread's history.
    expect(await side(first, "input")).toEqual(["user: Weather in Paris?"]);
    expect(await side(first, "output")).toEqual(["assistant: get_weather", "tool: get_weather", "assistant: Here is the weather: Paris: 18°C, sunny."]);
    expect(await side(second, "input")).toEqual(['user: And in Oslo? <img src=x onerror="window.__pwned=1">']);
    expect(await side(second, "output")).toEqual(["assistant: get_weather", "tool: get_weather", "assistant: Here is the weather: Oslo: 18°C, sunny."]);
    expect(await page.textContent(`.turn[data-run='${second}'] .turn-output .rw-tool-call`)).toContain('"city": "Oslo"');
    expect(await page.locator(".turn img").count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // The whole state is one click away; each turn links to its trace.
    await page.click(`.turn[data-run='${second}'] .turn-output .turn-full > summary`);
    expect(await page.locator(`.turn[data-run='${second}'] .turn-output .turn-full .rw-msg`).count()).toBe(8);
    expect(await page.getAttribute(`.turn[data-run='${first}'] a.run-link`, "href")).toMatch(new RegExp(`/dashboard/${first}$`));

    // The next turn arrives live; the turns already shown keep their DOM (the opened "Full output" stays open).
    const third = await ask("Thanks! What about Lisbon?");
    await page.waitForSelector(`.turn[data-run='${third}'] .turn-output .rw-msg`, { timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true); // pushed, not reloaded
    expect(await page.textContent(".session-totals")).toContain("3 runs");
    expect(await page.getAttribute(`.turn[data-run='${second}'] .turn-output .turn-full`, "open")).not.toBeNull();
    expect(await side(third, "output")).toEqual(["assistant: get_weather", "tool: get_weather", "assistant: Here is the weather: Lisbon: 18°C, sunny."]);
    expect(await page.$$eval(".turn .turn-head strong", (els) => els.map((e) => e.textContent))).toEqual(["Turn 1", "Turn 2", "Turn 3"]);
    await page.screenshot({ path: path.join(ARTIFACTS, "session-page.png"), fullPage: true });

    // A turn sent by hand with plain values: text shows as the message it is; no answer yet reads as running.
    const events = [{ event_type: "run_start", sdk_run_id: "turn-plain", agent_name: "support-bot", session_id: "thread-7", payload: { input: { message: "Where is my order?" } } }];
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await page.waitForSelector(".turn[data-run='turn-plain'] .turn-input .rw-msg", { timeout: 10_000 });
    expect(await page.textContent(".turn[data-run='turn-plain'] .turn-input .rw-msg[data-role='user']")).toContain("Where is my order?");
    expect(await page.textContent(".turn[data-run='turn-plain'] .turn-agent")).toMatch(/running/i);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: path.join(ARTIFACTS, "session-page-390.png"), fullPage: true });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await agent.client.shutdown(5_000);
    await ctx.close();
  });
});
