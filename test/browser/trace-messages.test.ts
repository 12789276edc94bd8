/**
 * A span's input and output rendered by web/static/trace/messages.js, in Chromium on a page of the app (its CSP, its
 * styles): every format's fixture (web/runs/fixtures/message-fixtures.ts) reads as messages by role with the tool
 * call's name and arguments and the tool's result; the OpenTelemetry GenAI messages of a span exported over OTLP
 * render from what the spans API returns; other JSON is a tree with a raw view and copy; long text is folded, whole;
 * hostile strings stay text. Screenshots: test/artifacts/trace-messages-1400.png, trace-messages-390.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { bearer, waitForRun } from "../e2e/harness.js";
import { exportJson, hexId } from "../e2e/otlp-fixtures.js";
import { FIXTURES } from "../../web/runs/fixtures/message-fixtures.js";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

/** The roles each fixture reads as, in order. */
const ROLES: Record<keyof typeof FIXTURES, string[]> = {
  sdkLangchainJsInput: ["system", "user", "assistant", "tool"],
  sdkPythonLlmOutput: ["assistant"],
  langgraphState: ["user", "assistant", "tool", "assistant"],
  langchainSerialised: ["system", "user", "assistant", "tool"],
  langchainGenerations: ["assistant"],
  openaiChatRequest: ["system", "user", "assistant", "tool"],
  openaiChatResponse: ["assistant"],
  openaiResponsesRequest: ["system", "user", "assistant", "tool"],
  openaiResponsesResponse: ["assistant"],
  anthropicRequest: ["system", "user", "assistant", "tool"],
  anthropicResponse: ["assistant"],
  geminiRequest: ["system", "user", "assistant", "tool"],
  geminiResponse: ["assistant"],
  otelInput: ["system", "user", "assistant", "tool"],
  otelOutput: ["assistant"],
  strandsEvents: ["system", "user", "assistant", "tool"],
  openInferenceOutput: ["assistant"],
};
const OUTPUTS = new Set(["sdkPythonLlmOutput", "langchainGenerations", "openaiChatResponse", "openaiResponsesResponse", "anthropicResponse", "geminiResponse", "otelOutput", "openInferenceOutput"]);
const WITHOUT_CALL = new Set(["langchainGenerations", "openaiResponsesResponse", "anthropicResponse", "geminiResponse", "otelOutput"]);

describe.skipIf(!haveBrowser)("span payloads in a real browser", () => {
  const env = useBrowserStack();

  it("renders every format as messages by role with tool calls, JSON as a tree, long text folded, hostile text as text", async () => {
    const stack = env.stack();
    const ctx = await env.browser().newContext({ viewport: { width: 1400, height: 1000 } });
    await ctx.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.url });
    const { page, key } = await registerWithKey(ctx, stack, "Mira", `messages-${Date.now()}@example.com`);

    // An LLM span exported over OTLP with the GenAI content attributes, read back as the trace reads it.
    const traceId = hexId(16);
    const [root, chat, longChat] = [hexId(8), hexId(8), hexId(8)];
    const t0 = Date.now() - 2000;
    const input = [{ role: "user", parts: [{ type: "text", content: "Weather in Paris?" }] }, { role: "assistant", parts: [{ type: "tool_call", id: "c1", name: "get_weather", arguments: { city: "Paris" } }] }, { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "18°C" }] }];
    const output = [{ role: "assistant", parts: [{ type: "text", content: "It is 18°C." }], finish_reason: "stop" }];
    const body = exportJson([
      { traceId, spanId: chat, parentSpanId: root, name: "chat gpt-4o", startMs: t0 + 10, endMs: t0 + 500, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.system_instructions": JSON.stringify([{ type: "text", content: "Be brief." }]), "gen_ai.input.messages": JSON.stringify(input), "gen_ai.output.messages": JSON.stringify(output) } },
      // Content past the stored preview's 500 characters: kept cut short.
      { traceId, spanId: longChat, parentSpanId: root, name: "chat gpt-4o", startMs: t0 + 510, endMs: t0 + 590, attributes: { "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.input.messages": JSON.stringify([{ role: "system", parts: [{ type: "text", content: "Be brief." }] }, { role: "user", parts: [{ type: "text", content: `Summarise: ${"lorem ipsum ".repeat(80)}` }] }]) } },
      { traceId, spanId: root, name: "invoke_agent weather", startMs: t0, endMs: t0 + 600, attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather" } },
    ]);
    expect((await fetch(`${stack.url}/v1/traces`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body })).status).toBe(200);
    await waitForRun(stack.url, key, traceId, (b) => b.run.status === "success");
    const spans = ((await (await fetch(`${stack.url}/api/runs/${traceId}/spans`, bearer(key))).json()) as { spans: { span_id: string; input_preview: string; output_preview: string }[] }).spans;
    const llm = spans.find((s) => s.span_id === chat)!;
    const long = spans.find((s) => s.span_id === longChat)!;
    expect(long.input_preview.endsWith("…")).toBe(true);

    const longText = `${"A long answer line.\n".repeat(600)}THE END`;
    const cases: [string, unknown, string][] = [
      ...Object.entries(FIXTURES).map(([name, value]) => [name, value, OUTPUTS.has(name) ? "output" : "input"] as [string, unknown, string]),
      ["otlpStoredInput", llm.input_preview, "input"], ["otlpStoredOutput", llm.output_preview, "output"], ["otlpStoredCut", long.input_preview, "input"],
      ["plainJson", { order: { id: 42, items: [{ sku: "A-1", qty: 2 }], note: '<script>window.__pwned=2</script>' } }, "output"],
      ["longText", [{ role: "user", content: longText }], "input"],
      ["plainText", "just a sentence <b>not bold</b>", "output"],
    ];
    await page.goto(`${stack.url}/sessions`);
    // As text: vitest rewrites import() in a function's source, and the page must load the module the app serves.
    await page.evaluate(`(async (list) => {
      const { renderPayload } = await import("/static/trace/messages.js");
      const main = document.querySelector("main");
      main.replaceChildren();
      for (const [name, value, kind] of list) {
        const section = document.createElement("section");
        section.className = "card pad";
        section.dataset.fixture = name;
        const h = document.createElement("h2");
        h.textContent = name;
        const box = document.createElement("div");
        section.append(h, box);
        main.append(section);
        renderPayload(box, value, { kind });
      }
    })(${JSON.stringify(cases)})`);
    const at = (name: string) => `[data-fixture='${name}']`;

    for (const [name, roles] of Object.entries(ROLES)) {
      expect(await page.$$eval(`${at(name)} .rw-msg`, (els) => els.map((e) => (e as HTMLElement).dataset.role)), name).toEqual(roles);
      if (WITHOUT_CALL.has(name)) continue;
      const calls = await page.$$eval(`${at(name)} .rw-tool-call`, (els) => els.map((e) => e.textContent ?? ""));
      const results = await page.$$eval(`${at(name)} .rw-msg[data-role='tool'], ${at(name)} .rw-tool-result`, (els) => els.map((e) => e.textContent ?? ""));
      expect(calls.length + results.length, name).toBeGreaterThan(0);
      for (const c of calls) expect(c, name).toMatch(/get_weather[\s\S]*"city": "Paris"/);
      for (const r of results) expect(r, name).toMatch(/18°C|temp_c/);
    }
    // Reasoning, media placeholders (type and size), system text.
    expect(await page.textContent(`${at("anthropicRequest")} .rw-reasoning`)).toContain("The weather tool answers this.");
    expect(await page.textContent(`${at("anthropicRequest")} .rw-media`)).toMatch(/image.*image\/jpeg.*13 B/);
    expect(await page.textContent(`${at("geminiRequest")} .rw-media`)).toMatch(/audio.*audio\/wav/);
    expect(await page.textContent(`${at("openaiResponsesResponse")} .rw-reasoning`)).toContain("encrypted");
    // The stored OTLP span reads as a conversation too.
    expect(await page.$$eval(`${at("otlpStoredInput")} .rw-msg`, (els) => els.map((e) => (e as HTMLElement).dataset.role))).toEqual(["system", "user", "assistant", "tool"]);
    expect(await page.textContent(`${at("otlpStoredOutput")} .rw-msg[data-role='assistant']`)).toContain("It is 18°C.");
    // Content the server kept cut short: the messages it holds, said to be cut.
    expect(await page.$$eval(`${at("otlpStoredCut")} .rw-msg`, (els) => els.map((e) => (e as HTMLElement).dataset.role))).toEqual(["system", "user"]);
    expect(await page.textContent(`${at("otlpStoredCut")} .rw-cut-note`)).toContain("Cut short");
    expect(await page.textContent(`${at("otlpStoredCut")} .rw-msg[data-role='user']`)).toContain("Summarise: lorem ipsum");

    // Hostile strings are text: nothing ran, no element was made from them.
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator(`${at("sdkLangchainJsInput")} img, ${at("plainJson")} script, ${at("plainText")} b`).count()).toBe(0);
    expect(await page.textContent(`${at("sdkLangchainJsInput")} .rw-msg[data-role='user']`)).toContain('<img src=x onerror="window.__pwned=1">');
    expect(await page.textContent(at("plainText"))).toContain("<b>not bold</b>");

    // Other JSON: a tree; Raw shows the JSON text; Copy copies it.
    expect(await page.locator(`${at("plainJson")} .rw-json`).count()).toBe(1);
    expect(await page.textContent(`${at("plainJson")} .rw-json`)).not.toContain('"A-1"'); // two levels open; deeper ones built when opened
    await page.click(`${at("plainJson")} .rw-j-node:has(> summary .rw-j-key:text-is('"items"')) > summary`);
    expect(await page.textContent(`${at("plainJson")} .rw-json`)).toContain('"A-1"');
    await page.click(`${at("plainJson")} .rw-view-btn[data-view='raw']`);
    const raw = JSON.stringify(cases.find((c) => c[0] === "plainJson")![1], null, 2);
    expect(await page.textContent(`${at("plainJson")} pre.rw-raw`)).toBe(raw);
    await page.click(`${at("plainJson")} .rw-copy`);
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(raw);
    // A conversation has a JSON view too.
    await page.click(`${at("openaiChatRequest")} .rw-view-btn[data-view='tree']`);
    expect(await page.locator(`${at("openaiChatRequest")} .rw-msg`).count()).toBe(0);
    await page.click(`${at("openaiChatRequest")} .rw-view-btn[data-view='messages']`);
    expect(await page.locator(`${at("openaiChatRequest")} .rw-msg`).count()).toBe(4);

    // Long text: folded, whole in the page, unfolded on request.
    const fold = page.locator(`${at("longText")} .rw-fold`);
    expect(await fold.getAttribute("class")).toContain("is-folded");
    expect(await fold.textContent()).toContain("THE END");
    expect((await fold.boundingBox())!.height).toBeLessThan(400);
    await page.click(`${at("longText")} .rw-fold-toggle`);
    expect(await fold.getAttribute("class")).not.toContain("is-folded");
    expect((await fold.boundingBox())!.height).toBeGreaterThan(2000);
    await page.click(`${at("longText")} .rw-fold-toggle`);

    await page.screenshot({ path: path.join(ARTIFACTS, "trace-messages-1400.png"), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator(at("openaiChatRequest")).scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(ARTIFACTS, "trace-messages-390.png"), fullPage: false });
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
    await ctx.close();
  });
});
