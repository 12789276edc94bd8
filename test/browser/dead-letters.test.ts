/**
 * Dead letters as a user sees them, in Chromium: an event a (test) plugin cannot process is acknowledged, the
 * dashboard shows a banner, /dead-letters shows the error and the event as received. The pages run under the
 * Content-Security-Policy without a single violation. Screenshots go to test/artifacts/.
 */
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startTestServer, type TestServer } from "../e2e/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.REQUIRE_BROWSER === "1") throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing`);
const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../artifacts");
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../e2e/fixtures/poison-plugin.ts");

describe.skipIf(!haveBrowser)("dead letters in a real browser", () => {
  let srv: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    delete process.env.RUNWATCH_TEST_POISON_FLAG; // the fixture then always refuses poison events
    srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_PLUGINS: FIXTURE } });
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  });
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });

  it("banner on the dashboard, the error and the raw event on /dead-letters, no CSP violation", async () => {
    const user = await srv.user();
    const key = await srv.key(user.id);
    const send = (e: unknown) => fetch(`${srv.url}/api/ingest`, json(key, e)).then((r) => expect(r.status).toBe(202));
    await send({ event_type: "run_start", sdk_run_id: "support-42", agent_name: "support-triage", payload: { framework: "langgraph" } });
    await send({ event_type: "tool_call", sdk_run_id: "support-42", payload: { tool_name: "crm_lookup", phase: "end", output_preview: "customer found", poison: true } });
    await send({ event_type: "run_end", sdk_run_id: "support-42", payload: { total_tokens: 120, model: "gpt-4o-mini" } });

    const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    const violations: string[] = [];
    page.on("console", (m) => { if (/Content[- ]Security[- ]Policy/i.test(m.text())) violations.push(m.text()); });
    await page.goto(`${srv.url}/login`);
    await page.fill("#email", user.email);
    await page.fill("#password", "correct horse battery");
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith("/dashboard")), page.click("button[type=submit]")]);
    for (let i = 0; !(await page.$("#dead-letter-banner")); i++) {
      if (i > 50) throw new Error("no dead-letter banner");
      await page.waitForTimeout(200);
      await page.reload();
    }
    expect(await page.textContent("#dead-letter-banner")).toContain("1 event you sent could not be stored");
    await page.screenshot({ path: path.join(ARTIFACTS, "dashboard-dead-letter-banner.png") });
    await Promise.all([page.waitForURL((u) => u.pathname.endsWith("/dead-letters")), page.click("#dead-letter-banner a")]);
    const table = await page.textContent("table.dead-letters");
    expect(table).toContain("tool_call");
    expect(table).toContain("poison event");
    await page.click("table.dead-letters summary");
    expect(await page.textContent("table.dead-letters pre")).toContain('"tool_name":"crm_lookup"');
    await page.screenshot({ path: path.join(ARTIFACTS, "dead-letters.png"), fullPage: true });
    // The run itself went on: its other events are stored and it finished.
    await page.goto(`${srv.url}/dashboard/support-42`);
    expect(await page.textContent("body")).toContain("support-triage");
    expect(violations).toEqual([]);
    await ctx.close();
  }, 60_000);
});
