/**
 * Data retention in Chromium: a user sets 30 days on /settings, a bad value is refused on the page naming the field,
 * and after a sweep the page tells how many runs it deleted — the run older than 30 days is gone from the dashboard,
 * the recent one stays. Screenshot: test/artifacts/settings-retention.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { json, waitForRun } from "../e2e/harness.js";
import { applyRetention } from "../../stores/retention.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("data retention in a real browser", () => {
  const env = useBrowserStack();

  it("sets days on /settings, refuses a bad value, and shows what the sweep deleted", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1280, height: 900 } });
    const email = `retention-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(ctx, stack, "Ret", email);
    const ago = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString();
    for (const [id, age] of [["ret-old", 90], ["ret-new", 2]] as const) {
      const events = [
        { event_type: "run_start", sdk_run_id: id, agent_name: "archivist", occurred_at: ago(age), payload: {} },
        { event_type: "run_end", sdk_run_id: id, occurred_at: ago(age), payload: { output: "done" } },
      ];
      expect((await fetch(`${stack.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
      await waitForRun(stack.url, key, id, (b) => b.run.status === "success");
    }

    await page.goto(`${stack.url}/settings`);
    await page.fill("#retention-form input[name=retention_days]", "ninety");
    await page.click("#retention-form button[type=submit]");
    expect(await page.textContent("#retention-form .field-error")).toContain("retention_days must be empty or 0");
    await page.fill("#retention-form input[name=retention_days]", "30");
    await page.click("#retention-form button[type=submit]");
    await page.waitForURL(/\/settings\?retention=1$/);
    expect(await page.textContent(".flash")).toContain("Retention saved.");
    expect(await page.inputValue("#retention-form input[name=retention_days]")).toBe("30");

    const user = (await findUserByEmail(stack.ports.sql, email))!;
    // The page's count is cumulative, so it holds even if another sweep (the CLI test's, in the shared scale database)
    // got there first.
    await applyRetention({ sql: stack.ports.sql, ch: stack.ports.clickhouse }, { projectId: user.id });
    await page.reload();
    expect(await page.textContent("#retention-form")).toMatch(/Keeping 30 days\.\s+Last sweep .+; 1 run deleted so far\./s);
    await page.screenshot({ path: path.join(ARTIFACTS, "settings-retention.png") });
    await page.goto(`${stack.url}/dashboard`);
    const ids = await page.$$eval("tr[data-run]", (els) => els.map((e) => e.getAttribute("data-run")));
    expect(ids).toContain("ret-new");
    expect(ids).not.toContain("ret-old");
    await ctx.close();
  });
});
