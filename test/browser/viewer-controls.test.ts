/**
 * Each control shows only to a role that may use it (the policy table, core/access/roles.ts): a viewer reads the
 * project's runs, datasets, agents and settings without a button that would answer 403; a refused post says why
 * and keeps what was typed.
 */
import { describe, expect, it } from "vitest";
import { demoRuns, ingestDemo } from "../../deploy/demo.js";
import { createApiKey } from "../../stores/accounts/api-keys.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { haveBrowser, register, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("what a viewer is shown", () => {
  const { stack, browser } = useBrowserStack();

  it("no thumbs, no Add to dataset, no selection, no forms on /datasets, /agents, /settings; a refused post keeps the input", async () => {
    const { sql } = stack().ports;
    const ownerCtx = await browser().newContext({ viewport: { width: 1400, height: 900 } });
    const viewerCtx = await browser().newContext({ viewport: { width: 1400, height: 900 } });
    const ownerPage = await register(ownerCtx, stack().url, "Olga Owner", "olga-viewer@example.com");
    const viewerPage = await register(viewerCtx, stack().url, "Vic Viewer", "vic-viewer@example.com");
    const owner = (await findUserByEmail(sql, "olga-viewer@example.com"))!;
    const team = await createProject(sql, owner.id, "Viewer Team");
    await setMember(sql, team.id, "vic-viewer@example.com", "viewer", owner.id);
    const { key } = await createApiKey(sql, owner.id, "team key", null, { projectId: team.id });
    const runs = demoRuns();
    await ingestDemo(stack().url, key, runs);
    const api = (path: string, body: unknown) =>
      fetch(stack().url + path, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await api("/api/datasets", { name: "faq" })).status).toBe(201);
    const base = `${stack().url}/p/${team.slug}`;
    const run = runs[0]!.sdk_run_id;

    // The owner sees every control: the check is what a role may do, not a blanket hiding. A span opened in the
    // trace's panel has its own: feedback, add to dataset.
    await ownerPage.goto(`${base}/dashboard/${run}`);
    expect(await ownerPage.locator("button[aria-label='Thumbs up']").count()).toBe(1);
    expect(await ownerPage.locator("#add-to-dataset").count()).toBe(1);
    const openSpan = async (page: typeof ownerPage) => {
      await page.click('.tv-row[data-span-id]:not([data-span-id=""]) .tv-name');
      await page.waitForSelector("#trace-panel .tp-head");
    };
    await openSpan(ownerPage);
    expect(await ownerPage.locator("#trace-panel .tp-actions form").count()).toBeGreaterThanOrEqual(2);

    const controls = {
      [`/dashboard/${run}`]: ["button[aria-label='Thumbs up']", "#add-to-dataset", "#add-to-queue"],
      "/dashboard": ["input[type=checkbox][name=sdk_run_id]", "#add-runs"],
      "/datasets": ["#new-dataset"],
      "/datasets/faq": ["#add-item", "form[action$='/import']", "#dataset-settings", "button:has-text('Archive')"],
      "/agents": ["#new-agent"],
      "/alerts": ["#new-rule"],
      "/settings": ["#settings-form button", "#retention-form button", "#provider-key-form"],
    };
    for (const [path, selectors] of Object.entries(controls)) {
      const res = await viewerPage.goto(base + path);
      expect(res!.status(), path).toBe(200);
      for (const sel of selectors) expect(await viewerPage.locator(sel).filter({ visible: true }).count(), `${path} ${sel}`).toBe(0);
    }
    // A span the viewer opens shows no actions either.
    await viewerPage.goto(`${base}/dashboard/${run}`);
    await openSpan(viewerPage);
    expect(await viewerPage.locator("#trace-panel .tp-actions form").count()).toBe(0);
    // Still readable: the runs, the datasets, the settings' values.
    await viewerPage.goto(`${base}/dashboard`);
    expect(await viewerPage.locator(`text=${run}`).count()).toBeGreaterThan(0);

    // A post the role does not allow (a stale page, another tab): 403, why, and what was typed.
    await viewerPage.goto(`${base}/datasets`);
    const csrf = await viewerPage.locator("input[name=_csrf]").first().inputValue();
    await viewerPage.evaluate(({ action, csrf }) => {
      const form = document.createElement("form");
      form.method = "post";
      form.action = action;
      for (const [name, value] of Object.entries({ _csrf: csrf, name: "refunds", description: "Every refund question from March, hand-picked" })) {
        const input = document.createElement("input");
        input.name = name;
        input.value = value;
        form.append(input);
      }
      document.body.append(form);
      form.submit();
    }, { action: `/p/${team.slug}/datasets`, csrf });
    await viewerPage.waitForSelector(".error-page");
    expect(await viewerPage.textContent("h1")).toBe("Not allowed");
    expect(await viewerPage.textContent(".error-page")).toContain("viewer");
    expect(await viewerPage.inputValue(".kept-input textarea >> nth=1")).toBe("Every refund question from March, hand-picked");
    expect(await viewerPage.getAttribute("a:has-text('Back to the page')", "href")).toBe(`/p/${team.slug}/datasets`);
    await ownerCtx.close();
    await viewerCtx.close();
  });
});
