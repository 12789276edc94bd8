/**
 * Feedback on a run from its page, in Chromium against web + pipeline + gateway: thumbs up with a comment and
 * thumbs down (session + CSRF form), the run's scores listed with an API score beside them, the same scores
 * through GET /api/runs/{id}/scores, and another user's post to the run refused. Screenshot:
 * test/artifacts/run-scores.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bearer, json, waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { addVersion } from "../../stores/agent-registry.js";
import { findUserByEmail } from "../../stores/accounts/users.js";

describe.skipIf(!haveBrowser)("scoring a run from its page", () => {
  const env = useBrowserStack();

  it("thumbs up with a comment and thumbs down are stored as user_feedback scores and listed with the run's other scores", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sam", `scores-${Date.now()}@example.com`);
    const events = [
      { event_type: "run_start", sdk_run_id: "feedback-run", agent_name: "support-bot", payload: { input: { question: "Where is my order?" } } },
      { event_type: "step", sdk_run_id: "feedback-run", span_id: "answer", payload: { node_name: "answer", phase: "end", kind: "llm", model: "gpt-4o", prompt_tokens: 120, completion_tokens: 30 } },
      { event_type: "run_end", sdk_run_id: "feedback-run", payload: { output: { answer: "It ships tomorrow." } } },
    ];
    expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
    await waitForRun(stack.url, key, "feedback-run", (b) => b.run.status === "success");
    expect((await fetch(`${stack.url}/api/scores`, json(key, { sdk_run_id: "feedback-run", span_id: "answer", name: "correctness", value: 0.9, source: "llm_judge" }))).status).toBe(201);

    await page.goto(`${stack.url}/dashboard/feedback-run`);
    await page.waitForSelector("#scores .score-list");
    await page.fill("#score-comment", "Right answer, <b>fast</b>");
    await Promise.all([page.waitForURL(/#scores$/), page.click("#scores button[value=up]")]);
    await Promise.all([page.waitForURL(/#scores$/), page.click("#scores button[value=down]")]);
    const rows = await page.$$eval("#scores .score-list tbody tr", (trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).slice(0, 5).map((td) => td.textContent!.trim())));
    expect(rows).toEqual([
      ["user_feedback", "bad", "", "human", ""],
      ["user_feedback", "good", "Right answer, <b>fast</b>", "human", ""],
      ["correctness", "0.9", "", "llm_judge", "answer"],
    ]);
    expect(await page.textContent("#scores .score-tally")).toBe("1 good · 1 bad");
    await page.locator("#scores").screenshot({ path: path.join(ARTIFACTS, "run-scores.png") });
    // The whole run page in one tall viewport (a fullPage capture misplaces the sticky sidebar).
    await page.setViewportSize({ width: 1280, height: 1120 });
    await page.screenshot({ path: path.join(ARTIFACTS, "run-scores-page.png") });

    const api = (await (await fetch(`${stack.url}/api/runs/feedback-run/scores`, bearer(key))).json()) as { scores: { name: string; value: unknown; comment: string }[] };
    expect(api.scores.map((s) => [s.name, s.value, s.comment])).toEqual([
      ["correctness", 0.9, ""], ["user_feedback", true, "Right answer, <b>fast</b>"], ["user_feedback", false, ""],
    ]);

    // Another user, logged in with their own session, cannot score this run (it is not theirs: 404), nor post without CSRF.
    const other = await env.browser().newContext();
    const { page: otherPage } = await registerWithKey(other, stack, "Eve", `eve-${Date.now()}@example.com`);
    const csrf = await otherPage.evaluate(async () => {
      const html = await (await fetch("/settings")).text();
      return /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? "";
    });
    const statuses = await otherPage.evaluate(async (token) => {
      const post = (body: string) => fetch("/dashboard/feedback-run/scores", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" }, body, redirect: "manual" });
      return [(await post(`_csrf=${token}&value=up`)).status, (await post("value=up")).status];
    }, csrf);
    expect(statuses).toEqual([404, 403]);
    expect((await (await fetch(`${stack.url}/api/runs/feedback-run/scores`, bearer(key))).json() as { scores: unknown[] }).scores).toHaveLength(3);
    await other.close();
    await ctx.close();
  }, 30_000);

  it("/agents shows each agent's average scores, and its page the averages per config version", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1440, height: 900 } });
    const email = `agents-scores-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(ctx, stack, "Ada", email);
    const user = (await findUserByEmail(stack.ports.sql, email))!;
    const runOn = async (id: string, configVersion: number) => {
      const events = [
        { event_type: "run_start", sdk_run_id: id, agent_name: "triage-bot", config_version: configVersion, payload: {} },
        { event_type: "run_end", sdk_run_id: id, config_version: configVersion, payload: {} },
      ];
      expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
      await waitForRun(stack.url, key, id, (b) => b.run.status === "success");
    };
    await runOn("t-1", 1);
    await addVersion(stack.ports.sql, user.id, "triage-bot", { config: JSON.stringify({ model: "gpt-4o-mini" }), changelog: "first", activate: true });
    await addVersion(stack.ports.sql, user.id, "triage-bot", { config: JSON.stringify({ model: "gpt-4o" }), changelog: "bigger model", activate: true });
    await runOn("t-2", 2);
    await runOn("t-3", 2);
    const score = (id: string, name: string, value: unknown) => fetch(`${stack.url}/api/scores`, json(key, { sdk_run_id: id, name, value }));
    for (const [id, name, value] of [["t-1", "helpful", 0.2], ["t-2", "helpful", 0.8], ["t-3", "helpful", 1], ["t-2", "user_feedback", true], ["t-3", "label", "great"]] as const) {
      expect((await score(id, name, value)).status).toBe(201);
    }
    await page.goto(`${stack.url}/agents`);
    const cell = await page.textContent("tr:has-text('triage-bot') td.agent-scores");
    expect(cell?.replace(/\s+/g, " ").trim()).toBe("helpful 0.67 (3) · user_feedback 1 (1)"); // a string score has no average
    await page.goto(`${stack.url}/agents/triage-bot`);
    const byVersion = await page.$$eval("#versions tbody tr", (trs) => trs.map((tr) => [tr.getAttribute("data-version"), tr.querySelector("td.agent-scores")!.textContent!.replace(/\s+/g, " ").trim()]));
    expect(byVersion).toEqual([["2", "helpful 0.9 (2) · user_feedback 1 (1)"], ["1", "helpful 0.2 (1)"]]);
    await page.screenshot({ path: path.join(ARTIFACTS, "agent-scores.png"), fullPage: true });

    // The dashboard's score filter, through its filter bar.
    await page.goto(`${stack.url}/dashboard`);
    await page.fill("#q", "score.helpful>=0.5");
    await Promise.all([page.waitForURL(/q=score\.helpful/), page.press("#q", "Enter")]);
    expect((await page.$$eval("#runs tbody tr[data-run]", (trs) => trs.map((tr) => (tr as HTMLElement).dataset.run))).sort()).toEqual(["t-2", "t-3"]);
    expect(await page.inputValue("#q")).toBe("score.helpful>=0.5");
    await page.screenshot({ path: path.join(ARTIFACTS, "dashboard-score-filter.png") });
    await ctx.close();
  }, 30_000);
});
