/**
 * Turning on an LLM judge and working an annotation queue in Chromium (docs/EVALUATION.md), with agents-service in front of
 * a fake OpenAI server on loopback: a newcomer starts from the ready "helpfulness" judge, tries it on a run in the
 * playground (the rendered prompt, the raw answer, the score) and a change to it before saving it, turns on a rule
 * for the support agent, and watches the scores of new runs arrive on the evaluator's page without reloading; then creates an annotation queue, adds a run
 * from its page, takes it as the next item, scores it and completes it. A queue that fills itself: a rule made on
 * the queue's page adds the run given thumbs down on its page, and the dashboard's selected runs join it too.
 * The project's own provider key saved from the settings page, shown by its last four characters only.
 * Screenshots: test/artifacts/evaluator.png, evaluator-playground.png, evaluators.png, queue-review.png, queue.png,
 * provider-keys.png.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("evaluators and annotation queues in the dashboard", () => {
  let agents: Harness;
  let worker: EvaluationWorker;
  const projects: number[] = []; // the scale pass shares Postgres between test files: only these are this worker's
  beforeAll(async () => {
    agents = await startHarness();
    agents.fake.judge = (prompt) => ({ explanation: prompt.includes("refund") ? "Answers the refund question directly." : "Helpful enough.", score: prompt.includes("refund") ? 5 : 4 });
  });
  // Every project may judge on the service's keys here: in the scale pass the registered user is not the first (the admin).
  const env = useBrowserStack(() => ({ RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_OPERATOR_JUDGE_KEY: "all" }));
  beforeAll(async () => {
    const s = env.stack();
    worker = await startEvaluationWorker(s.ports, s.ports.config, createLogger("error"), { settings: { concurrency: 4, pollMs: 100, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 500 }, projects: () => projects });
  });
  afterAll(async () => {
    await worker?.close();
    await agents?.close();
  });

  it("from a ready judge to live scores on production runs, and a review from the queue", async () => {
    const base = env.stack().url;
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const email = `dana-eval-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(context, env.stack(), "Dana", email);
    projects.push((await findUserByEmail(env.stack().ports.sql, email))!.id); // the personal project has the user's id
    const send = async (ids: string[]) => {
      const events = ids.flatMap((id, i) => [
        { sdk_run_id: id, event_type: "run_start", agent_name: "support-bot", payload: { input: { question: i % 2 ? "Where is my parcel?" : "Can I get a refund?" } } },
        { sdk_run_id: id, event_type: "run_end", payload: { output: i % 2 ? "It ships tomorrow." : "Yes, within 30 days: use the refund form." } },
      ]);
      const res = await fetch(`${base}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events }) });
      expect(res.status).toBe(207);
    };
    const first = `support-${Date.now()}`;
    await send([first]);

    await page.goto(`${base}/evaluators`);
    await page.screenshot({ path: path.join(ARTIFACTS, "evaluators-empty.png") });
    await page.click("#templates a:has-text('helpfulness')");
    expect(await page.inputValue("#new-evaluator input[name=name]")).toBe("helpfulness");
    expect(await page.inputValue("#new-evaluator textarea[name=prompt]")).toContain("{{output}}");
    await Promise.all([page.waitForURL(/\/evaluators\/[0-9a-f-]{36}\?flash=/), page.click("#new-evaluator button[type=submit]")]);
    const evaluatorUrl = page.url().split("?")[0]!;

    // The playground: the run's prompt, the judge's raw answer, the score, its cost.
    for (let i = 0; i < 50 && (await (await fetch(`${base}/api/runs/${first}`, { headers: { authorization: `Bearer ${key}` } })).json()).run?.status !== "success"; i++) await page.waitForTimeout(100);
    await page.fill("#playground input[name=sdk_run_id]", first);
    await page.click("#playground button[type=submit]");
    await page.waitForSelector("#try-result");
    expect(await page.textContent("#try-prompt")).toContain("Yes, within 30 days: use the refund form.");
    expect(JSON.parse((await page.textContent("#try-raw"))!)).toEqual({ explanation: "Answers the refund question directly.", score: 5 });
    expect(await page.textContent("#try-result .notice")).toContain("Score 5");
    await page.locator("#playground").screenshot({ path: path.join(ARTIFACTS, "evaluator-playground.png") });

    // A change tried on the run before it is saved: the draft's prompt is what the judge saw, and no version is made.
    await page.click("#edit summary");
    await page.fill("#edit textarea[name=prompt]", `${await page.inputValue("#edit textarea[name=prompt]")}\nBe strict about refunds.`);
    await page.fill("#edit input[name=try_run]", first);
    await page.click("#try-draft");
    await page.waitForSelector("#try-result[data-draft=yes]");
    expect(await page.textContent("#try-result[data-draft=yes] #try-prompt")).toContain("Be strict about refunds.");
    expect(await page.inputValue("#edit textarea[name=prompt]")).toContain("Be strict about refunds.");
    const evaluatorId = evaluatorUrl.split("/").pop()!;
    expect((await (await fetch(`${base}/api/evaluators/${evaluatorId}`, { headers: { authorization: `Bearer ${key}` } })).json()).evaluator.version).toBe(1);

    // A rule for the support agent; new runs are judged as they end, and the page shows it without a reload.
    await page.goto(evaluatorUrl);
    await page.click("#new-rule summary");
    await page.fill("#new-rule input[name=agent_name]", "support-bot");
    await page.fill("#new-rule input[name=sampling_pct]", "100");
    await Promise.all([page.waitForURL(/flash=/), page.click("#new-rule button[type=submit]")]);
    expect(await page.textContent(".notice")).toContain("100% of the matching runs");
    await page.waitForFunction(() => (window as unknown as { __runwatchLive?: string }).__runwatchLive === "open" || document.querySelector("#live-indicator")?.getAttribute("data-state") === "open", null, { timeout: 10_000 }).catch(() => {});
    const live = Array.from({ length: 4 }, (_, i) => `${first}-live-${i}`);
    await send(live);
    await page.waitForFunction((n) => document.querySelectorAll("#jobs tbody tr .score-value").length >= n, 4, { timeout: 30_000 });
    expect(await page.locator("#jobs tbody tr", { hasText: live[0]! }).locator(".score-value").textContent()).toBe("5");
    expect(await page.locator("#jobs tbody tr", { hasText: live[1]! }).textContent()).toContain("Helpful enough.");
    await page.screenshot({ path: path.join(ARTIFACTS, "evaluator.png"), fullPage: true });

    // A annotation queue: a run added from its page, taken as the next item, scored and completed.
    await page.goto(`${base}/queues`);
    await page.click("#new-queue summary");
    await page.fill("#new-queue input[name=name]", "support review");
    await Promise.all([page.waitForURL(/\/queues\/[0-9a-f-]{36}\?flash=/), page.click("#new-queue button[type=submit]")]);
    await page.goto(`${base}/dashboard/${live[1]}`);
    await Promise.all([page.waitForURL(/flash=/), page.click("#add-to-queue button")]);
    await page.goto(`${base}/queues`);
    await page.click("#queues a:has-text('support review')");
    await Promise.all([page.waitForURL(/\/items\//), page.click("#review-next")]);
    expect(await page.textContent("#review-output")).toContain("It ships tomorrow.");
    await page.selectOption("#review select[name='score.correct']", "false");
    await page.fill("#review input[name='score.quality']", "2");
    await page.fill("#review textarea[name=comment]", "Does not say when it arrives.");
    await page.locator("#review").screenshot({ path: path.join(ARTIFACTS, "queue-review.png") });
    await Promise.all([page.waitForURL(/flash=/), page.click("#complete")]);
    expect(await page.textContent(".notice")).toContain("Nothing left to review");
    expect(await page.textContent("#progress")).toContain("dana-eval-");
    const scores = (await (await fetch(`${base}/api/runs/${live[1]}/scores`, { headers: { authorization: `Bearer ${key}` } })).json()).scores;
    expect(scores.map((s: { name: string; value: unknown; source: string }) => [s.name, s.value, s.source]).sort()).toEqual([
      ["correct", false, "human"], ["helpfulness", 4, "llm_judge"], ["quality", 2, "human"],
    ]);
    await page.goto(`${base}/evaluators`);
    await page.screenshot({ path: path.join(ARTIFACTS, "evaluators.png") });
    await context.close();
  }, 120_000);

  it("a queue that fills itself with the runs given thumbs down, and takes the dashboard's selection", async () => {
    const base = env.stack().url;
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(context, env.stack(), "Eli", `eli-queue-${Date.now()}@example.com`);
    const ids = Array.from({ length: 3 }, (_, i) => `triage-${Date.now()}-${i}`);
    const events = ids.flatMap((id) => [
      { sdk_run_id: id, event_type: "run_start", agent_name: "support-bot", payload: { input: { question: `question ${id}` } } },
      { sdk_run_id: id, event_type: "run_end", payload: { output: `answer ${id}` } },
    ]);
    expect((await fetch(`${base}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events }) })).status).toBe(207);

    await page.goto(`${base}/queues`);
    await page.click("#new-queue summary");
    await page.fill("#new-queue input[name=name]", "triage");
    await Promise.all([page.waitForURL(/\/queues\/[0-9a-f-]{36}\?flash=/), page.click("#new-queue button[type=submit]")]);
    const queueUrl = page.url().split("?")[0]!;
    await page.click("#new-queue-rule summary");
    await page.selectOption("#new-queue-rule select[name=when]", "thumbs_down");
    await page.fill("#new-queue-rule input[name=agent_name]", "support-bot");
    await Promise.all([page.waitForURL(/flash=/), page.click("#new-queue-rule button[type=submit]")]);
    expect(await page.textContent("#queue-rules tbody")).toContain("it is given thumbs down");

    // Thumbs down on a run's page puts the run in the queue.
    for (let i = 0; i < 50 && (await (await fetch(`${base}/api/runs/${ids[2]}`, { headers: { authorization: `Bearer ${key}` } })).json()).run?.status !== "success"; i++) await page.waitForTimeout(100);
    await page.goto(`${base}/dashboard/${ids[0]}`);
    await Promise.all([page.waitForURL(/#scores/), page.click("button[aria-label='Thumbs down']")]);

    // Two runs picked on the dashboard join it by hand.
    await page.goto(`${base}/dashboard`);
    for (const id of ids.slice(1)) await page.check(`input[name=sdk_run_id][value="${id}"]`);
    await page.selectOption("#add-runs select[name=queue_id]", { label: "triage" });
    await page.locator("#add-runs").screenshot({ path: path.join(ARTIFACTS, "selection-to-queue.png") });
    await Promise.all([page.waitForURL(/\/queues\/[0-9a-f-]{36}\?flash=/), page.click("#add-runs-to-queue")]);
    expect(page.url().split("?")[0]).toBe(queueUrl);
    expect(await page.textContent(".notice")).toContain("Added 2 of the 2 selected runs");
    const pending = page.locator("#pending tbody tr");
    expect(await pending.count()).toBe(3);
    expect(await pending.filter({ hasText: ids[0]! }).textContent()).toContain("rule");
    expect(await pending.filter({ hasText: ids[1]! }).textContent()).toContain("manual");
    await page.screenshot({ path: path.join(ARTIFACTS, "queue.png"), fullPage: true });

    // The project's own provider key for its judges: saved from the settings page, shown by its last four characters only.
    await page.goto(`${base}/settings`);
    await page.selectOption("#provider-key-form select[name=provider]", "anthropic");
    await page.fill("#provider-key-form input[name=api_key]", "sk-ant-team-key-9876");
    await Promise.all([page.waitForURL(/flash=/), page.click("#provider-key-form button[type=submit]")]);
    expect(await page.textContent("#provider-keys tr[data-provider=anthropic]")).toContain("…9876");
    expect(await page.content()).not.toContain("sk-ant-team-key");
    await page.locator("#provider-keys").screenshot({ path: path.join(ARTIFACTS, "provider-keys.png") });

    // Deleting the queue asks first; dismissed, nothing happens; accepted, the queue and its rule are gone.
    await page.goto(queueUrl);
    page.once("dialog", (d) => void d.dismiss());
    await page.click("#delete-queue button");
    await page.waitForTimeout(300);
    expect(page.url()).toBe(queueUrl);
    page.once("dialog", (d) => {
      expect(d.message()).toContain("Delete triage");
      void d.accept();
    });
    await Promise.all([page.waitForURL(/\/queues\?flash=/), page.click("#delete-queue button")]);
    expect(await page.textContent(".notice")).toContain("Deleted triage");
    expect(await page.locator("#queues a:has-text('triage')").count()).toBe(0);
    expect((await (await fetch(`${base}/api/evaluation-rules`, { headers: { authorization: `Bearer ${key}` } })).json()).rules).toEqual([]);
    await context.close();
  }, 120_000);
});
