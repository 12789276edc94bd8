/**
 * "Run experiment" on a prompt's page in Chromium over a real stack, with agents-service in front of a fake speaking
 * OpenAI's real HTTP API on loopback: a member picks the dataset and a version, clicks the button, watches the
 * progress page until the experiment is done (one item lacks the template's variable: its error is counted), and
 * follows the link to the experiment's results per item. No console error or CSP violation. Screenshot:
 * test/artifacts/prompt-experiment-run.png.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { findUserByEmail } from "../../stores/accounts/users.js";
import { startPromptExperimentWorker, type PromptExperimentWorker } from "../../web/prompts/experiment-worker.js";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

let agents: Harness;
beforeAll(async () => {
  agents = await startHarness({ llmMaxRetries: 0 });
  agents.fake.chat = (_provider, body) => `answer to ${body.messages.at(-1).content}`;
});
afterAll(() => agents?.close());

describe.skipIf(!haveBrowser)("running an experiment from a prompt's page", () => {
  const env = useBrowserStack(() => ({ RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_OPERATOR_JUDGE_KEY: "all" }));
  let worker: PromptExperimentWorker | undefined;
  afterAll(() => worker?.close());

  it("starts it with the button, shows its progress and links the finished experiment", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const email = `prompt-experiment-${Date.now()}@example.com`;
    const { page, key } = await registerWithKey(ctx, stack, "Pat", email);
    const projectId = (await findUserByEmail(stack.ports.sql, email))!.id;
    worker = await startPromptExperimentWorker(stack.ports, stack.ports.config, createLogger("error"), {
      settings: { jobs: 1, itemConcurrency: 2, pollMs: 50, leaseSeconds: 30 }, projects: () => [projectId],
    });
    const problems: string[] = [];
    page.on("console", (m) => { if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) problems.push(`${page.url()}: ${m.text()}`); });
    page.on("pageerror", (err) => problems.push(`${page.url()}: ${err.message}`));
    const post = (p: string, body: unknown) => fetch(`${stack.url}${p}`, {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
    });
    expect((await post("/api/prompts/support/versions", { prompt: "Answer kindly: {{question}}", config: { provider: "openai", model: "gpt-4o-mini" } })).status).toBe(201);
    expect((await post("/api/prompts/support/versions", { prompt: "Answer: {{question}}", config: { provider: "openai", model: "gpt-4o-mini" } })).status).toBe(201);
    expect((await post("/api/datasets", { name: "faq" })).status).toBe(201);
    expect((await post("/api/datasets/faq/items", {
      items: [{ id: "a", input: { question: "Where is my parcel?" } }, { id: "b", input: { question: "Can I return it?" } }, { id: "c", input: { topic: "none" } }],
    })).status).toBe(201);

    await page.goto(`${stack.url}/prompts/support`);
    await page.selectOption('#run-experiment select[name="dataset"]', "faq");
    await page.selectOption('#run-experiment select[name="version"]', "1");
    await page.fill('#run-experiment input[name="name"]', "kind, from the page");
    await Promise.all([page.waitForURL(/\/prompts\/support\/experiments\/[0-9a-f-]{36}/), page.click("#run-experiment-button")]);
    // The page reloads itself until the job is done.
    await page.waitForSelector('#experiment-progress[data-status="completed"]', { timeout: 30_000 });
    expect(await page.textContent("#experiment-done")).toBe("3 / 3");
    expect(await page.textContent("#experiment-failed")).toBe("1 failed");
    await page.screenshot({ path: path.join(ARTIFACTS, "prompt-experiment-run.png"), fullPage: true });

    const experimentId = new URL(page.url()).pathname.split("/").at(-1)!;
    await Promise.all([page.waitForURL(/\/datasets\/faq\/compare\?experiments=/), page.click("#experiment-link")]);
    expect(page.url()).toContain(experimentId);
    const body = await page.textContent("body");
    expect(body).toContain("answer to Answer kindly: Where is my parcel?");
    expect(body).toContain("kind, from the page");

    // The prompt's page lists it, with the version it ran.
    await page.goto(`${stack.url}/prompts/support`);
    expect(await page.textContent(`#experiments tr[data-experiment="${experimentId}"]`)).toContain("kind, from the page");
    expect(await page.textContent(`#experiment-jobs li[data-experiment="${experimentId}"]`)).toContain("completed, 3 / 3");
    expect(problems).toEqual([]);
    await ctx.close();
  });
});
