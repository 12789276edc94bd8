/**
 * What the browser tests run against: web + pipeline + gateway in one process over a temporary data dir and free
 * ports (the live dashboard needs the gateway).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../core/config.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { startGateway, type Gateway } from "../../gateway/server.js";
import { startPipeline, type Pipeline } from "../../pipeline/runner.js";
import { startWeb, type WebServer } from "../../web/server.js";
import { existsSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { createApiKey } from "../../stores/accounts/api-keys.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { freePort } from "../e2e/harness.js";

export const ARTIFACTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../artifacts");

export interface Stack { url: string; dataDir: string; ports: Ports; web: WebServer; pipeline: Pipeline; gateway: Gateway }

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-browser-"));
  const [webPort, gatewayPort] = [await freePort(), await freePort()];
  const config = loadConfig({
    RUNWATCH_DATA_DIR: dataDir, NODE_ENV: "test", LOG_LEVEL: "error", RUNWATCH_HOST: "127.0.0.1",
    RUNWATCH_WEB_PORT: String(webPort), RUNWATCH_PUBLIC_URL: `http://127.0.0.1:${webPort}`, RUNWATCH_GATEWAY_PORT: String(gatewayPort),
    RUNWATCH_PUBLIC_GATEWAY_URL: `ws://127.0.0.1:${gatewayPort}`, ...env,
  });
  const ports = await openPorts(config);
  const pipeline = await startPipeline(ports);
  const gateway = await startGateway(ports, config);
  const web = await startWeb(ports, { port: webPort, host: "127.0.0.1", otlpGrpcPort: 0 });
  return { url: web.url, dataDir, ports, web, pipeline, gateway };
}

export async function stopStack(stack: Stack | undefined): Promise<void> {
  if (!stack) return;
  await stack.web.close();
  await stack.gateway.close();
  await stack.pipeline.stop();
  await stack.ports.close();
  await fs.rm(stack.dataDir, { recursive: true, force: true });
}

/** Registers through the form and returns the logged-in page. */
export async function register(ctx: BrowserContext, base: string, name: string, email: string, shot?: string): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`${base}/register`);
  await page.fill("#name", name);
  await page.fill("#email", email);
  await page.fill("#password", "correct horse battery");
  await page.fill("#password_confirm", "correct horse battery");
  if (shot) await page.screenshot({ path: path.join(ARTIFACTS, shot) });
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith("/register")), page.click("button[type=submit]")]);
  return page;
}

/** Logs in through the form on a new page of `ctx` (the user's password is "correct horse battery"). */
export async function login(ctx: BrowserContext, base: string, email: string): Promise<Page> {
  const page = await ctx.newPage();
  await page.goto(`${base}/login`);
  await page.fill("#email", email);
  await page.fill("#password", "correct horse battery");
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith("/login")), page.click("button[type=submit]")]);
  return page;
}

/** Debian's Chromium: the browser tests skip without it, unless REQUIRE_BROWSER=1. */
export const CHROMIUM = "/usr/bin/chromium";
export const haveBrowser = existsSync(CHROMIUM);
if (!haveBrowser && process.env.REQUIRE_BROWSER === "1") throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install -y chromium)`);

/** Headless Chromium with the flags these machines need; the screenshots' folder exists afterwards. */
export async function launchBrowser(): Promise<Browser> {
  await fs.mkdir(ARTIFACTS, { recursive: true });
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
}

/** A stack and a browser for the tests of one file: started before them, closed after (call inside describe). */
/** `env()` (read when the stack starts, after the test's own earlier beforeAll hooks) adds to the stack's config. */
export function useBrowserStack(env: () => Record<string, string> = () => ({})): { stack(): Stack; browser(): Browser } {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    stack = await startStack(env());
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stopStack(stack);
  });
  return { stack: () => stack!, browser: () => browser! };
}

/** A user registered through the browser (logged in on `ctx`) with an API key for sending events. */
export async function registerWithKey(ctx: BrowserContext, stack: Stack, name: string, email: string): Promise<{ page: Page; key: string }> {
  const page = await register(ctx, stack.url, name, email);
  const user = (await findUserByEmail(stack.ports.sql, email))!;
  return { page, key: (await createApiKey(stack.ports.sql, user.id, `${name}'s key`, null)).key };
}
