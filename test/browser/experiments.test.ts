/**
 * Experiments in Chromium (docs/EVALUATION.md): two experiments of two config versions over one dataset; the
 * comparison page is open while the second one's runs arrive and fills in live (no reload), marks the item that
 * regressed, and links each trace; the agent's gate rule then refuses the worse version and its gate page shows
 * both experiments. Screenshots: test/artifacts/experiments.png, experiment-compare.png, activation-gate.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("experiments in the dashboard", () => {
  const env = useBrowserStack();

  it("compares two experiments live, marks a regression, and shows the gate refusing the worse version", async () => {
    const stack = env.stack();
    const base = stack.url;
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(context, stack, "Erin", `erin-${Date.now()}@example.com`);
    const api = async (p: string, body: unknown) => {
      const res = await fetch(`${base}${p}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
      return (await res.json()) as any;
    };
    const questions = ["What is the refund window?", "Do you ship to Norway?", "Can I change my order?"];
    const answers = ["30 days", "Yes", "Within an hour"];
    await api("/api/datasets", { name: "support faq" });
    await api("/api/datasets/support%20faq/items", { items: questions.map((q, i) => ({ id: `faq-${i + 1}`, input: { question: q }, expected_output: answers[i] })) });

    // The agent and its two config versions, from its page.
    await page.goto(`${base}/agents`);
    await page.click("#new-agent summary");
    await page.fill("#new-agent input[name=name]", "faq-bot");
    await Promise.all([page.waitForURL(/\/agents\/faq-bot/), page.click("#new-agent button[type=submit]")]);
    for (const prompt of ["Answer briefly.", "Answer very briefly."]) {
      await page.fill("textarea[name=config]", JSON.stringify({ model: "gpt-4o-mini", prompt }));
      await Promise.all([page.waitForURL(/flash=/), page.click("#new-version button[type=submit]")]);
    }
    await page.goto(`${base}/agents/faq-bot`);
    await page.fill("#gate input[name=score_name]", "correct");
    await page.fill("#gate input[name=max_drop]", "0.05");
    await Promise.all([page.waitForURL(/flash=/), page.click("#gate button[type=submit]")]);

    const runs = async (experimentId: string, version: number, outputs: string[]) => {
      const events = outputs.flatMap((output, i) => [
        { event_type: "run_start", sdk_run_id: `${experimentId}-${i}`, agent_name: "faq-bot", config_version: version, payload: { input: { question: questions[i] }, experiment_id: experimentId, dataset_item_id: `faq-${i + 1}`, repetition: 1 } },
        { event_type: "step", sdk_run_id: `${experimentId}-${i}`, span_id: `llm-${i}`, payload: { node_name: "chat", phase: "end", kind: "llm", model: "gpt-4o-mini", prompt_tokens: 120, completion_tokens: 12, duration_ms: 300 + i * 40 } },
        { event_type: "run_end", sdk_run_id: `${experimentId}-${i}`, payload: { output } },
      ]);
      expect((await api("/api/ingest/batch", { events })).rejected).toBe(0);
    };
    // As an SDK's evaluators do: the scores once the runs are sent (each waits for its run to be stored).
    const scores = async (experimentId: string, outputs: string[]) => {
      for (let i = 0; i < outputs.length; i++) {
        for (let tries = 0; (await fetch(`${base}/api/scores`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ sdk_run_id: `${experimentId}-${i}`, name: "correct", value: outputs[i] === answers[i] ? 1 : 0 }) })).status !== 201 && tries < 100; tries++) {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    };
    const v1 = (await api("/api/experiments", { dataset: "support faq", name: "brief answers", agent_name: "faq-bot", config_version: 1 })).experiment.id;
    await runs(v1, 1, answers);
    await scores(v1, answers);
    await api(`/api/experiments/${v1}/complete`, {});
    const v2 = (await api("/api/experiments", { dataset: "support faq", name: "very brief answers", agent_name: "faq-bot", config_version: 2 })).experiment.id;

    // The comparison is open while the second experiment runs: its results appear without a reload.
    await page.goto(`${base}/datasets/support%20faq/compare?experiments=${v1},${v2}`);
    expect(await page.locator("#comparison td[data-status=missing]").count()).toBe(3);
    await page.waitForFunction(() => document.getElementById("live-indicator")?.dataset.state === "live");
    const v2Outputs = ["30 days", "No", "Within an hour"];
    await runs(v2, 2, v2Outputs);
    await page.waitForFunction(() => document.querySelectorAll("#comparison td[data-status=success]").length === 6, undefined, { timeout: 20_000 });
    // The scores come after the runs, as an SDK's evaluators send them: they appear live too, and mark the regression.
    expect(await page.locator("#comparison tr.regressed").count()).toBe(0);
    await scores(v2, v2Outputs);
    await page.waitForSelector("#comparison tr.regressed", { timeout: 10_000 });
    expect(await page.locator("#comparison tr.regressed").getAttribute("data-item")).toBe("faq-2");
    expect(await page.locator("#comparison tr.regressed .cell-regression").textContent()).toContain("−1");
    expect(await page.locator("#comparison a", { hasText: "trace" }).first().getAttribute("href")).toMatch(new RegExp(`^/p/[a-z0-9-]+/dashboard/${v1}-0$`));
    await page.reload();
    await page.screenshot({ path: path.join(ARTIFACTS, "experiment-compare.png"), fullPage: true });

    await page.goto(`${base}/datasets/support%20faq/experiments`);
    expect(await page.locator("#experiments tbody tr").count()).toBe(2);
    await page.screenshot({ path: path.join(ARTIFACTS, "experiments.png"), fullPage: true });

    // The gate: version 2's correct mean (0.667) dropped from version 1's (1) by more than 0.05.
    await page.goto(`${base}/agents/faq-bot`);
    expect(await page.locator("tr.version-active").getAttribute("data-version")).toBe("1");
    await page.locator("tr[data-version='2'] form[action$='/activate'] button").click();
    await page.waitForSelector("#gate-refusal");
    expect(await page.textContent("#gate-refusal")).toContain('score "correct" mean would drop from 1');
    await page.click("#gate-refusal a[href$='/configs/2/gate']");
    await page.waitForSelector("#gate-violations");
    await page.screenshot({ path: path.join(ARTIFACTS, "activation-gate.png"), fullPage: true });
    await page.fill("textarea[name=reason]", "Shorter answers are worth one miss; reviewed by the team.");
    await Promise.all([page.waitForURL(/flash=/), page.click("form[action$='/force'] button[type=submit]")]);
    expect(await page.textContent(".flash")).toContain("forced past the gate");
    await context.close();
  }, 180_000);
});
