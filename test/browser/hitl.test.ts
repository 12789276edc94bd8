/**
 * Human in the loop in a real browser (playwright-core + Debian chromium) against web + pipeline + gateway:
 * the run page is open while the run is running; the agent asks a question; the answer box appears live;
 * the user answers on the page (fetch, CSRF header); an agent long-polling GET /api/runs/{id}/input gets the
 * answer; when the agent reports human_input_received the box goes away. Also the config/cost pages render.
 *
 * Skips when /usr/bin/chromium is absent, unless REQUIRE_BROWSER=1. Screenshots go to test/artifacts/.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { loadConfig } from "../../core/config.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { startWeb, type WebServer } from "../../web/server.js";
import { startPipeline, type Pipeline } from "../../pipeline/runner.js";
import { startGateway, type Gateway } from "../../gateway/server.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { createApiKey } from "../../stores/accounts/api-keys.js";
import { freePort, json, waitForRun } from "../e2e/harness.js";

const CHROMIUM = "/usr/bin/chromium";
const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.REQUIRE_BROWSER === "1") throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install -y chromium)`);
const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../artifacts");

describe.skipIf(!haveBrowser)("answering a waiting run from the dashboard", () => {
  let dataDir: string;
  let ports: Ports;
  let web: WebServer;
  let pipeline: Pipeline;
  let gateway: Gateway;
  let browser: Browser;

  beforeAll(async () => {
    await fs.mkdir(ARTIFACTS, { recursive: true });
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-hitl-"));
    const [webPort, gatewayPort] = [await freePort(), await freePort()];
    const config = loadConfig({
      RUNWATCH_DATA_DIR: dataDir, NODE_ENV: "test", LOG_LEVEL: "error", RUNWATCH_HOST: "127.0.0.1",
      RUNWATCH_WEB_PORT: String(webPort), RUNWATCH_PUBLIC_URL: `http://127.0.0.1:${webPort}`, RUNWATCH_GATEWAY_PORT: String(gatewayPort),
      RUNWATCH_PUBLIC_GATEWAY_URL: `ws://127.0.0.1:${gatewayPort}`,
    });
    ports = await openPorts(config);
    pipeline = await startPipeline(ports);
    gateway = await startGateway(ports, config);
    web = await startWeb(ports, { port: webPort, host: "127.0.0.1", otlpGrpcPort: null });
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
  });
  afterAll(async () => {
    await browser?.close();
    await web?.close();
    await gateway?.close();
    await pipeline?.stop();
    await ports?.close();
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it("the answer typed on /dashboard/{run} reaches the agent polling the input endpoint", async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await ctx.newPage();
    await page.goto(`${web.url}/register`);
    await page.fill("#name", "Ada Lovelace");
    await page.fill("#email", "ada@example.com");
    await page.fill("#password", "correct horse battery");
    await page.fill("#password_confirm", "correct horse battery");
    await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/register")), page.click("button[type=submit]")]);
    const user = (await findUserByEmail(ports.sql, "ada@example.com"))!;
    const key = (await createApiKey(ports.sql, user.id, "agent", null)).key;
    const send = async (e: Record<string, unknown>) => expect((await fetch(`${web.url}/api/ingest`, json(key, e))).status).toBe(202);

    const id = "browser-hitl-1";
    await send({ event_type: "run_start", sdk_run_id: id, agent_name: "deployer", payload: { framework: "langgraph", input: { release: "v2.4.0" } } });
    await waitForRun(web.url, key, id, (b) => b.run.status === "running");
    await page.goto(`${web.url}/dashboard/${id}`);
    await page.waitForSelector('#live-indicator[data-state="live"]', { timeout: 10_000 });
    expect(await page.isVisible("#human-input")).toBe(false);

    // The agent asks while the page is open: the box appears without a reload.
    await send({ event_type: "human_input_requested", sdk_run_id: id, payload: { question: "Deploy v2.4.0 to production?", context: { tests: "412 passed", diff: "+120 -38" }, channel: "dashboard" } });
    await page.waitForSelector("#human-input.hitl-open textarea", { timeout: 10_000 });
    expect(await page.textContent("#hitl-question")).toBe("Deploy v2.4.0 to production?");
    expect(await page.textContent("#human-input .hitl-context")).toContain("412 passed");

    // The agent long-polls meanwhile.
    const poll = fetch(`${web.url}/api/runs/${id}/input?wait=30`, { headers: { authorization: `Bearer ${key}` } });
    await page.fill("#hitl-response", "Yes — ship it after 18:00 UTC");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-hitl-question.png"), fullPage: false });
    await page.click("#human-input button[type=submit]");

    const res = await poll;
    expect(res.status).toBe(200);
    const answer = await res.json();
    expect(answer.response).toBe("Yes — ship it after 18:00 UTC");
    expect(answer.responded_by).toBe("Ada Lovelace <ada@example.com>");
    await page.waitForSelector("#human-input .hitl-answer", { timeout: 10_000 });
    expect(await page.textContent("#human-input .hitl-answer")).toContain("by Ada Lovelace");
    await page.screenshot({ path: path.join(ARTIFACTS, "run-hitl-answered.png"), fullPage: false });

    // The agent reports the answer it used: the question is closed and the box goes away live.
    await send({ event_type: "human_input_received", sdk_run_id: id, payload: { response: answer.response, responded_by: answer.responded_by } });
    await page.waitForSelector("#human-input", { state: "hidden", timeout: 10_000 });
    // The run's panel refreshes on its own (throttled to one fetch per 250 ms), independently of the box.
    await page.waitForFunction((text) => document.querySelector("#trace-panel .tp-event-human_input_received")?.textContent?.includes(text), "Yes — ship it after 18:00 UTC", { timeout: 10_000 });
    await ctx.close();
  });
});
