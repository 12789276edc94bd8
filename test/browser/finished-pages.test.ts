/**
 * Pages a team works in, in Chromium: the experiment comparison's baseline control (default the older experiment, so
 * the worse newer one shows its regression; picking the newer one turns the count to zero), the review page of a
 * failed run showing its error and failing span, the dashboard's relative times moving on without a reload, and the
 * sidebar's project switcher showing a long project name whole. Screenshots: test/artifacts/compare-baseline.png,
 * review-error.png, project-switch-long-name.png.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { createProject } from "../../stores/accounts/projects.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("pages a team works in", () => {
  const env = useBrowserStack();
  let page: Page;
  let key: string;
  const api = async (p: string, body: unknown) => {
    const res = await fetch(`${env.stack().url}${p}`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as any };
  };
  const stored = async (sdkRunId: string, done: (run: any) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const res = await fetch(`${env.stack().url}/api/runs/${sdkRunId}`, { headers: { authorization: `Bearer ${key}` } });
      if (res.status === 200 && done(((await res.json()) as any).run)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`run ${sdkRunId} not stored`);
  };

  it("compares against the older experiment by default, and against the one the Baseline control picks", async () => {
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    ({ page, key } = await registerWithKey(context, env.stack(), "Erin", `erin-${Date.now()}@example.com`));
    await api("/api/datasets", { name: "faq" });
    await api("/api/datasets/faq/items", { items: [0, 1, 2].map((i) => ({ id: `i${i}`, input: { question: `q${i}` } })) });
    const experiment = async (name: string, correct: number[]) => {
      const id = (await api("/api/experiments", { dataset: "faq", name })).body.experiment.id as string;
      const events = correct.flatMap((_, i) => [
        { event_type: "run_start", sdk_run_id: `${name}-${i}`, agent_name: "faq-bot", payload: { input: { question: `q${i}` }, experiment_id: id, dataset_item_id: `i${i}`, repetition: 1 } },
        { event_type: "run_end", sdk_run_id: `${name}-${i}`, payload: { output: `a${i}` } },
      ]);
      expect((await api("/api/ingest/batch", { events })).body.rejected).toBe(0);
      for (let i = 0; i < correct.length; i++) {
        await stored(`${name}-${i}`, (r) => r.status === "success");
        expect((await api("/api/scores", { sdk_run_id: `${name}-${i}`, name: "correct", value: correct[i] })).status).toBe(201);
      }
      return id;
    };
    const older = await experiment("v1", [1, 1, 1]);
    const newer = await experiment("v2", [1, 0, 1]);

    // As the experiments list sends them: newest first.
    await page.goto(`${env.stack().url}/datasets/faq/experiments`);
    await page.check(`input[name=experiments][value="${newer}"]`);
    await page.check(`input[name=experiments][value="${older}"]`);
    await Promise.all([page.waitForURL(/\/compare\?/), page.click("#experiments-form button[type=submit]")]);
    await page.waitForFunction(() => document.querySelectorAll("#comparison td[data-status=success]").length === 6);
    expect(await page.inputValue("#baseline-select")).toBe(older);
    expect(await page.textContent("#regression-count")).toBe("1");
    expect(await page.getAttribute("#comparison tr.regressed", "data-item")).toBe("i1");
    await page.screenshot({ path: path.join(ARTIFACTS, "compare-baseline.png"), fullPage: true });

    // The control makes the newer one the baseline: the older one regressed nowhere.
    await Promise.all([page.waitForURL(new RegExp(`baseline=${newer}`)), page.selectOption("#baseline-select", newer)]);
    expect(await page.inputValue("#baseline-select")).toBe(newer);
    expect(await page.textContent("#regression-count")).toBe("0");
    expect(await page.getAttribute("#experiment-summary tbody tr:first-child", "data-experiment")).toBe(newer);
    await context.close();
  });

  it("shows a failed run's error and failing span on its review page", async () => {
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    ({ page, key } = await registerWithKey(context, env.stack(), "Rita", `rita-${Date.now()}@example.com`));
    const queue = (await api("/api/annotation-queues", { name: "failures", score_configs: [{ name: "ok", type: "boolean" }] })).body.queue.id as string;
    expect((await api("/api/evaluation-rules", { queue_action: { queue_id: queue }, filter: { has_error: true } })).status).toBe(201);
    expect((await api("/api/ingest/batch", { events: [
      { event_type: "run_start", sdk_run_id: "fail-1", agent_name: "support-bot", payload: { input: { question: "Where is order 42?" } } },
      { event_type: "tool_call", sdk_run_id: "fail-1", span_id: "t1", payload: { tool_name: "crm_search", phase: "start", input_preview: "order 42" } },
      { event_type: "tool_call", sdk_run_id: "fail-1", span_id: "t1", payload: { tool_name: "crm_search", phase: "end", error: "TimeoutError: CRM did not answer" } },
      { event_type: "error", sdk_run_id: "fail-1", payload: { error_type: "TimeoutError", error_message: "CRM did not answer", traceback: "Traceback (most recent call last):\n  File \"agent.py\", line 12" } },
    ] })).body.rejected).toBe(0);
    await stored("fail-1", (r) => r.status === "error");
    for (let i = 0; ; i++) {
      const q = (await (await fetch(`${env.stack().url}/api/annotation-queues/${queue}`, { headers: { authorization: `Bearer ${key}` } })).json()) as any;
      if (q.items?.length === 1) break;
      if (i > 200) throw new Error(`the rule did not fill the queue: ${JSON.stringify(q)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await page.goto(`${env.stack().url}/queues/${queue}`);
    await Promise.all([page.waitForURL(/\/items\//), page.click("#review-next")]);
    expect(await page.textContent("#review-error-type")).toBe("TimeoutError");
    expect(await page.textContent("#review-error-message")).toBe("CRM did not answer");
    expect(await page.textContent("#review-error-span a")).toBe("crm_search");
    expect(await page.isVisible("#review-error-traceback")).toBe(false);
    await page.click("#review-error summary");
    expect(await page.textContent("#review-error-traceback")).toContain('File "agent.py", line 12');
    await page.screenshot({ path: path.join(ARTIFACTS, "review-error.png"), fullPage: true });
    await context.close();
  });

  it("moves the dashboard's relative times on without a reload", async () => {
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    ({ page, key } = await registerWithKey(context, env.stack(), "Tim", `tim-${Date.now()}@example.com`));
    expect((await api("/api/ingest/batch", { events: [
      { event_type: "run_start", sdk_run_id: "slow-1", agent_name: "support-bot", payload: {} },
    ] })).body.rejected).toBe(0);
    await stored("slow-1", (r) => r.status === "running");
    await page.goto(`${env.stack().url}/dashboard`);
    const panel = ".panel .mini-list li:has(a[href$='/dashboard/slow-1']) .mini-meta";
    expect(await page.textContent(panel)).toBe("just now");
    expect(await page.$eval(panel, (el) => (el.querySelector("time") ?? el).getAttribute("title"))).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    await page.evaluate(() => ((window as unknown as { unreloaded: boolean }).unreloaded = true));
    await page.waitForFunction((sel) => /^\d+ s ago$/.test(document.querySelector(sel)?.textContent ?? ""), panel, { timeout: 15_000 });
    expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true);
    await context.close();
  });

  it("shows a long project name whole in the sidebar's switcher", async () => {
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const email = `nora-${Date.now()}@example.com`;
    ({ page, key } = await registerWithKey(context, env.stack(), "Nora", email));
    const nora = (await findUserByEmail(env.stack().ports.sql, email))!;
    const project = await createProject(env.stack().ports.sql, nora.id, "Customer Support Bots Europe");
    await page.goto(`${env.stack().url}/p/${project.slug}/dashboard`);
    const select = "#project-switch-select";
    expect(await page.inputValue(select)).toBe(project.slug);
    // The chosen option's text fits in the lines the control shows (a native select shows one, cut at its width).
    const fit = await page.$eval(select, (el) => {
      const s = el as HTMLSelectElement;
      const style = getComputedStyle(s);
      const ctx = document.createElement("canvas").getContext("2d")!;
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = ctx.measureText(s.selectedOptions[0]!.text).width;
      const width = s.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 16; // the arrow
      const lineHeight = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.2;
      const lines = Math.floor((s.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) + 1) / lineHeight);
      return { text, width, lines };
    });
    expect(fit.lines, JSON.stringify(fit)).toBeGreaterThanOrEqual(1);
    // Words wrap whole: a line may end a word short of its width.
    expect(fit.text, JSON.stringify(fit)).toBeLessThanOrEqual(fit.lines * fit.width * 0.8);
    await page.locator(".sidebar").screenshot({ path: path.join(ARTIFACTS, "project-switch-long-name.png") });
    await context.close();
  });
});
