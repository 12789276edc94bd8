/**
 * From a bad trace to a dataset item in Chromium (docs/EVALUATION.md): a run answered wrongly; its owner creates a
 * dataset, opens the run, adds it with the corrected expected output, sees the item on the dataset's page as
 * version 1, pastes a JSON Lines file with a bad line (refused whole, the line named), then a good one (version 2),
 * and reads version 1 back. Screenshots: test/artifacts/add-to-dataset.png, dataset.png.
 */
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACTS, haveBrowser, registerWithKey, useBrowserStack } from "./stack.js";

describe.skipIf(!haveBrowser)("datasets in the dashboard", () => {
  const env = useBrowserStack();

  it("adds a run to a dataset with a corrected expected output, imports lines, and shows each version", async () => {
    const stack = env.stack();
    const base = stack.url;
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(context, stack, "Dana", `dana-${Date.now()}@example.com`);
    const run = `refund-${Date.now()}`;
    const events = [
      { sdk_run_id: run, event_type: "run_start", agent_name: "support-bot", payload: { input: { question: "Can I get a refund after 40 days?" } } },
      { sdk_run_id: run, event_type: "run_end", payload: { output: "Yes, any time." } },
    ];
    expect((await fetch(`${base}/api/ingest/batch`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events }) })).status).toBe(207);

    await page.goto(`${base}/datasets`);
    await page.click("#new-dataset summary");
    await page.fill("#new-dataset input[name=name]", "refund policy");
    await page.fill("#new-dataset input[name=description]", "Questions about refunds");
    await Promise.all([page.waitForURL(/\/datasets\/refund%20policy$/), page.click("#new-dataset button[type=submit]")]);

    for (let i = 0; i < 50 && !(await page.goto(`${base}/dashboard/${run}`).then((r) => r?.status() === 200)); i++) await page.waitForTimeout(100);
    await page.click("#add-to-dataset summary");
    expect(await page.inputValue("#add-to-dataset textarea[name=expected_output]")).toBe("Yes, any time.");
    await page.fill("#add-to-dataset textarea[name=expected_output]", "No: refunds are possible within 30 days.");
    await page.locator("#add-to-dataset").screenshot({ path: path.join(ARTIFACTS, "add-to-dataset.png") });
    await Promise.all([page.waitForURL(/\/datasets\/refund%20policy\?flash=/), page.click("#add-to-dataset button[type=submit]")]);
    expect(await page.textContent(".notice")).toContain("version 1");
    const row = page.locator("#items tbody tr").first();
    expect(await row.textContent()).toContain("Can I get a refund after 40 days?");
    expect(await row.textContent()).toContain("No: refunds are possible within 30 days.");
    expect(await row.locator("a", { hasText: "run" }).getAttribute("href")).toMatch(new RegExp(`^/p/[a-z0-9-]+/dashboard/${run}$`));

    // A pasted file with a bad line is refused whole, naming it; a good one makes version 2.
    const lines = ['{"id": "q2", "input": {"question": "Do you refund shipping?"}, "expected_output": "No."}', '{"expected_output": "missing input"}'];
    await page.fill("form[action$='/import'] textarea[name=file]", lines.join("\n"));
    await page.click("form[action$='/import'] button[type=submit]");
    await page.waitForSelector(".error-lines");
    expect(await page.textContent(".error-lines")).toContain("line 2");
    expect(await page.locator("#items tbody tr").count()).toBe(1);
    await page.fill("form[action$='/import'] textarea[name=file]", lines[0]!);
    await Promise.all([page.waitForURL(/flash=/), page.click("form[action$='/import'] button[type=submit]")]);
    expect(await page.locator("#items tbody tr").count()).toBe(2);
    expect(await page.locator("#versions tbody tr").count()).toBe(2);
    await page.screenshot({ path: path.join(ARTIFACTS, "dataset.png"), fullPage: true });
    await page.goto(`${base}/datasets/refund%20policy?version=1`);
    expect(await page.locator("#items tbody tr").count()).toBe(1);
    await context.close();
  }, 120_000);

  it("uploads a file (a bad one refused naming its lines), edits and archives an item, and sets an input schema", async () => {
    const stack = env.stack();
    const base = stack.url;
    const context = await env.browser().newContext({ viewport: { width: 1400, height: 900 } });
    const { page, key } = await registerWithKey(context, stack, "Uma", `uma-${Date.now()}@example.com`);
    expect((await fetch(`${base}/api/datasets`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ name: "uploads" }) })).status).toBe(201);
    await page.goto(`${base}/datasets/uploads`);
    const good = Array.from({ length: 300 }, (_, i) => JSON.stringify({ id: `u${String(i).padStart(3, "0")}`, input: { question: `q${i}` }, expected_output: `a${i}` })).join("\n");
    const bad = [good.split("\n")[0], "{oops", '{"expected_output": 1}'].join("\n");
    await page.setInputFiles("#dataset-upload", { name: "bad.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(bad) });
    await page.waitForSelector("#upload-lines:not([hidden])");
    expect(await page.textContent("#upload-lines")).toMatch(/line 2.*line 3/s);
    expect(await page.locator("#items tbody tr.empty-row").count()).toBe(1);
    await Promise.all([page.waitForURL(/flash=/), page.setInputFiles("#dataset-upload", { name: "good.jsonl", mimeType: "application/x-ndjson", buffer: Buffer.from(good) })]);
    expect(await page.textContent(".notice")).toContain("Imported 300 items from good.jsonl as version 1");

    // Edit: the add form prefilled with the item; saving it makes version 2.
    await page.click("tr[data-item=u000] a:has-text('Edit')");
    expect(await page.inputValue("#add-item input[name=id]")).toBe("u000");
    await page.fill("#add-item textarea[name=expected_output]", "a corrected answer");
    await Promise.all([page.waitForURL(/flash=/), page.click("#add-item button[type=submit]")]);
    expect(await page.textContent("tr[data-item=u000]")).toContain("a corrected answer");
    // Archive: version 3; the item stays, archived.
    await Promise.all([page.waitForURL(/flash=/), page.click("tr[data-item=u001] button:has-text('Archive')")]);
    expect(await page.textContent("tr[data-item=u001]")).toContain("archived");
    expect(await page.textContent(".notice")).toContain("version 3");

    // A schema the items do not fit is refused, naming one; one they fit is saved.
    await page.click("#dataset-settings summary");
    await page.fill("#dataset-settings textarea[name=input_schema]", '{"type": "object", "required": ["context"]}');
    await page.click("#dataset-settings button[type=submit]");
    await page.waitForSelector("#dataset-settings .field-error");
    expect(await page.textContent("#dataset-settings .field-error")).toContain('item "u000"');
    await page.fill("#dataset-settings textarea[name=input_schema]", '{"type": "object", "required": ["question"]}');
    await Promise.all([page.waitForURL(/flash=/), page.click("#dataset-settings button[type=submit]")]);
    const schema = (await (await fetch(`${base}/api/datasets/uploads`, { headers: { authorization: `Bearer ${key}` } })).json()).dataset.input_schema;
    expect(schema).toEqual({ type: "object", required: ["question"] });
    await context.close();
  }, 120_000);
});
