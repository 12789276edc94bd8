/**
 * The prompts playground in Chromium over a real stack, with agents-service in front of a fake speaking OpenAI's and
 * Anthropic's real HTTP APIs on loopback: from a prompt's page, two versions side by side (a chat one on OpenAI, a
 * text one on Anthropic), variables filled, one run shows both rendered prompts and answers with tokens, cost and
 * latency; a missing variable is a message on its side; side A, edited, is saved as a new version. An LLM span of a
 * trace opens in the playground with its messages and model (under its recorded prompt's name, or one typed), runs
 * there, and is saved as the first version of a new prompt. At 1400 and
 * 390 px nothing is wider than the viewport; no console error or CSP violation. Screenshots:
 * test/artifacts/prompt-playground-1400.png, prompt-playground-390.png.
 */
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { waitForRun } from "../e2e/harness.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";
import { panelShows, rowOf } from "./trace-rows.js";

let agents: Harness;
beforeAll(async () => {
  agents = await startHarness({ llmMaxRetries: 0 });
  agents.fake.chat = (provider, body) => `${provider}: ${body.messages.at(-1).content}`;
});
afterAll(() => agents?.close());

function watch(page: Page, into: string[]): void {
  page.on("console", (m) => {
    // The run with a missing variable answers 422 on purpose (the page, with the message): Chromium logs that status.
    if (/status of 422/.test(m.text())) return;
    if (m.type() === "error" || /Content.Security.Policy/i.test(m.text())) into.push(`${page.url()}: ${m.text()}`);
  });
  page.on("pageerror", (err) => into.push(`${page.url()}: ${err.message}`));
}

const widthOf = (page: Page) => page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, inner: window.innerWidth }));

describe.skipIf(!haveBrowser)("the prompts playground in a real browser", () => {
  const env = useBrowserStack(() => ({ RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_OPERATOR_JUDGE_KEY: "all" }));

  for (const width of [1400, 390]) {
    it(`runs two versions side by side and saves an edited one at ${width} px`, async () => {
      const stack = env.stack();
      const ctx = await env.browser().newContext({ viewport: { width, height: 1000 } });
      const { page, key } = await registerWithKey(ctx, stack, "Pat", `playground-${width}-${Date.now()}@example.com`);
      const problems: string[] = [];
      watch(page, problems);
      const push = (body: unknown) => fetch(`${stack.url}/api/prompts/support/versions`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify(body),
      });
      expect((await push({ prompt: [{ role: "system", content: "You answer for {{company}}." }, { role: "user", content: "{{question}}" }], config: { provider: "openai", model: "gpt-4o-mini" }, message: "chat" })).status).toBe(201);
      expect((await push({ prompt: "For {{company}}, briefly: {{question}}", config: { provider: "anthropic", model: "claude-haiku-4-5" }, message: "text" })).status).toBe(201);

      await page.goto(`${stack.url}/prompts/support`);
      await Promise.all([page.waitForURL(/\/playground\?a=2$/), page.click("#open-playground")]);
      await page.selectOption('#pick select[name="a"]', "1");
      await page.selectOption('#pick select[name="b"]', "2");
      await Promise.all([page.waitForURL(/a=1&b=2/), page.click("#pick button")]);
      expect(await page.$$eval("#variables [data-variable]", (els) => els.map((e) => e.getAttribute("data-variable")))).toEqual(["company", "question"]);

      // A missing variable: a message on each side, naming it.
      await page.fill('[name="var:company"]', "Acme");
      await Promise.all([page.waitForURL(/playground$/), page.click("#run")]);
      expect(await page.textContent("#side-a .side-error")).toContain("variables.question");
      expect(await page.$$eval(".playground-side .badge", (els) => els.length)).toBe(0); // nothing edited yet

      await page.fill('[name="var:question"]', "Where is my parcel?");
      await Promise.all([page.waitForSelector("#side-b .answer"), page.click("#run")]);
      expect(await page.textContent("#side-a .answer")).toBe("openai: Where is my parcel?");
      expect(await page.textContent("#side-b .answer")).toBe("anthropic: For Acme, briefly: Where is my parcel?");
      expect(await page.textContent("#side-a .rendered")).toContain("You answer for Acme.");
      for (const side of ["a", "b"]) {
        expect(await page.textContent(`#side-${side} [data-stat="tokens"]`)).toMatch(/\d/);
        expect(await page.textContent(`#side-${side} [data-stat="cost"]`)).toContain("$");
        expect(await page.textContent(`#side-${side} [data-stat="latency"]`)).toMatch(/\d/);
      }
      expect(await page.inputValue('[name="var:question"]')).toBe("Where is my parcel?");

      // Side A edited, saved as a new version.
      const messages = JSON.parse(await page.inputValue('#side-a textarea[name="a_prompt"]'));
      messages[0].content = "You answer kindly for {{company}}.";
      await page.fill('#side-a textarea[name="a_prompt"]', JSON.stringify(messages, null, 2));
      await page.fill('input[name="message"]', "kinder");
      await Promise.all([page.waitForURL(/flash=/), page.click("#side-a .save-side")]);
      expect(await page.textContent(".notice")).toContain("Saved v3");
      const v3 = await (await fetch(`${stack.url}/api/prompts/support?version=3`, { headers: { authorization: `Bearer ${key}` } })).json();
      expect(v3.prompt).toMatchObject({ message: "kinder", config: { provider: "openai", model: "gpt-4o-mini" } });
      expect(v3.prompt.prompt[0].content).toBe("You answer kindly for {{company}}.");

      await page.goto(`${stack.url}/prompts/support/playground?a=3&b=1`);
      const w = await widthOf(page);
      expect(w.scroll, `page ${w.scroll} px wide at ${w.inner}`).toBeLessThanOrEqual(w.inner);
      await page.screenshot({ path: path.join(ARTIFACTS, `prompt-playground-${width}.png`), fullPage: true });
      expect(problems).toEqual([]);
      await ctx.close();
    });
  }

  it("opens an LLM span of a trace in the playground with its messages and model, runs it and saves it as a new prompt", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    const { page, key } = await registerWithKey(ctx, stack, "Sam", `playground-span-${Date.now()}@example.com`);
    const problems: string[] = [];
    watch(page, problems);
    const id = `pg-run-${Date.now()}`;
    const at = (ms: number) => new Date(Date.now() - 5_000 + ms).toISOString();
    const input = [{ role: "system", content: "You sort support tickets." }, { role: "user", content: "My parcel is late" }];
    const events = [
      { sdk_run_id: id, event_type: "run_start", agent_name: "triage-bot", occurred_at: at(0), payload: { input: "My parcel is late" } },
      { sdk_run_id: id, event_type: "step", span_id: "llm-1", occurred_at: at(10), payload: { kind: "llm", node_name: "ChatOpenAI", phase: "start", input } },
      { sdk_run_id: id, event_type: "step", span_id: "llm-1", occurred_at: at(500), payload: { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o-mini", provider: "openai", output: "shipping", prompt_tokens: 20, completion_tokens: 2, duration_ms: 490, prompt_name: "triage", prompt_version: 1 } },
      { sdk_run_id: id, event_type: "step", span_id: "tool-1", occurred_at: at(510), payload: { node_name: "lookup", phase: "start" } },
      { sdk_run_id: id, event_type: "step", span_id: "tool-1", occurred_at: at(520), payload: { node_name: "lookup", phase: "end", duration_ms: 10 } },
      { sdk_run_id: id, event_type: "run_end", occurred_at: at(600), payload: { output: "shipping" } },
    ];
    const sent = await fetch(`${stack.url}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events }) });
    expect(sent.status).toBe(207);
    await waitForRun(stack.url, key, id, (b) => b.run.status === "success");

    await page.goto(`${stack.url}/dashboard/${id}`);
    await page.waitForSelector(rowOf("llm-1"), { timeout: 10_000 });
    // A span that is not an LLM call offers no playground.
    await page.click(rowOf("tool-1"));
    await panelShows(page, "tool-1");
    expect(await page.$$("#trace-panel form.span-playground")).toHaveLength(0);
    await page.click(rowOf("llm-1"));
    await panelShows(page, "llm-1");
    expect(await page.inputValue('#trace-panel form.span-playground input[name="name"]')).toBe("triage");
    // Under another name: a prompt that does not exist yet.
    await page.fill('#trace-panel form.span-playground input[name="name"]', "ticket-triage");
    await Promise.all([page.waitForURL(/\/prompts\/ticket-triage\/playground\/draft$/), page.click("#trace-panel form.span-playground button")]);
    expect(await page.textContent("#from-span")).toContain("which used v1");
    expect(JSON.parse(await page.inputValue('#side-a textarea[name="a_prompt"]'))).toEqual(input);
    expect(await page.inputValue('#side-a input[name="a_model"]')).toBe("gpt-4o-mini");
    expect(await page.inputValue('#side-a input[name="a_provider"]')).toBe("openai");

    await Promise.all([page.waitForSelector("#side-a .answer"), page.click("#run")]);
    expect(await page.textContent("#side-a .answer")).toBe("openai: My parcel is late");
    await page.fill('input[name="message"]', "from a trace");
    await Promise.all([page.waitForURL(/\/prompts\/ticket-triage\?flash=/), page.click("#side-a .save-side")]);
    expect(await page.textContent(".notice")).toContain("Saved v1");
    const v1 = await (await fetch(`${stack.url}/api/prompts/ticket-triage?version=1`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(v1.prompt).toMatchObject({ prompt: input, config: { provider: "openai", model: "gpt-4o-mini" }, message: "from a trace" });
    expect(problems).toEqual([]);
    await ctx.close();
  });
});
