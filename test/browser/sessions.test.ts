/**
 * Sessions in Chromium against web + pipeline + gateway: /sessions lists the user's sessions; /sessions/{id} shows
 * each turn's input and output in order, links to the runs, and grows live (no reload) when the next turn of the
 * conversation arrives. Screenshots: test/artifacts/sessions-list.png, session-page.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("sessions in a real browser", () => {
  const env = useBrowserStack();

  it("lists sessions and shows a conversation's turns in order, the next turn arriving live", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sol", `sessions-${Date.now()}@example.com`);
    const turn = async (id: string, question: string, answer: string) => {
      const events = [
        { event_type: "run_start", sdk_run_id: id, agent_name: "support-bot", session_id: "thread-7", payload: { input: { message: question } } },
        { event_type: "run_end", sdk_run_id: id, payload: { output: { answer }, prompt_tokens: 100, completion_tokens: 20, model: "gpt-4o" } },
      ];
      expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
      await waitForRun(stack.url, key, id, (b) => b.run.status === "success");
    };
    await turn("turn-1", "Where is my order?", "It ships tomorrow.");
    await turn("turn-2", "Can I change the address?", "Yes, until it ships.");

    await page.goto(`${stack.url}/sessions`);
    expect(await page.$$eval("#sessions tbody tr[data-session]", (trs) => trs.map((tr) => (tr as HTMLElement).dataset.session))).toEqual(["thread-7"]);
    expect((await page.textContent("#sessions tbody tr td:nth-child(3)"))?.trim()).toBe("2");
    await page.screenshot({ path: path.join(ARTIFACTS, "sessions-list.png") });

    await page.click("#sessions a[href$='/sessions/thread-7']");
    await page.waitForSelector(".turn[data-run='turn-2']");
    await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
    const turns = () => page.$$eval(".turn", (els) => els.map((el) => [el.getAttribute("data-run"), el.querySelector(".turn-input")?.textContent ?? "", el.querySelector(".turn-output")?.textContent ?? ""]));
    expect(await turns()).toEqual([
      ["turn-1", JSON.stringify({ message: "Where is my order?" }, null, 2), JSON.stringify({ answer: "It ships tomorrow." }, null, 2)],
      ["turn-2", JSON.stringify({ message: "Can I change the address?" }, null, 2), JSON.stringify({ answer: "Yes, until it ships." }, null, 2)],
    ]);

    await turn("turn-3", "Thanks!", "You're welcome.");
    await page.waitForSelector(".turn[data-run='turn-3'] .turn-output", { timeout: 10_000 });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true); // pushed, not reloaded
    expect(await page.textContent(".session-totals")).toContain("3 runs");
    await page.screenshot({ path: path.join(ARTIFACTS, "session-page.png"), fullPage: true });
    await ctx.close();
  });
});
