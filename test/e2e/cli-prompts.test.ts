/**
 * `runwatch prompt push|get|label` as an operator runs them, a child process per command on a temporary data dir: a
 * text file and a JSON file pushed as versions with a message and a label, read back by label, number and as the
 * newest, a label rolled back; bad input refused naming what is wrong, with nothing written.
 */
import { spawnSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
let dataDir = "";
let env: NodeJS.ProcessEnv;
const run = (...args: string[]) => spawnSync(process.execPath, [path.join(ROOT, "deploy/bin/runwatch.mjs"), ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 90_000 });

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-cli-prompts-"));
  env = { ...process.env, RUNWATCH_DATA_DIR: dataDir, LOG_LEVEL: "warn", NODE_ENV: "test", RUNWATCH_PASSWORD: "correct horse battery" };
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

describe("runwatch prompt", () => {
  it("pushes, reads and labels versions, and refuses bad input", async () => {
    const tag = path.basename(dataDir).slice(-6).toLowerCase().replace(/[^a-z0-9]/g, "x");
    const email = `prompts-${tag}@example.com`;
    expect(run("user", "create", "--email", email, "--name", "Pia").status).toBe(0);
    const slug = run("project", "create", "--email", email, "--name", `Prompts ${tag}`).stdout.trim();
    const text = path.join(dataDir, "greet.txt");
    await fs.writeFile(text, "Greet {{name}} warmly.\n");
    const pushed = run("prompt", "push", "greeter", "--project", slug, "--file", text, "--message", "first", "--label", "production");
    expect([pushed.status, pushed.stdout.trim(), pushed.stderr]).toEqual([0, "Pushed greeter v1 (latest, production).", ""]);

    const chat = path.join(dataDir, "greet.json");
    await fs.writeFile(chat, JSON.stringify({ prompt: [{ role: "system", content: "Be brief." }, { role: "user", content: "Greet {{name}}." }], config: { provider: "anthropic", model: "claude-3-5-haiku-latest" }, message: "chat now" }));
    expect(run("prompt", "push", "greeter", "--project", slug, "--file", chat).stdout.trim()).toBe("Pushed greeter v2 (latest).");

    const newest = JSON.parse(run("prompt", "get", "greeter", "--project", slug).stdout);
    expect(newest).toMatchObject({ name: "greeter", version: 2, type: "chat", message: "chat now", variables: ["name"], config: { provider: "anthropic" } });
    const prod = JSON.parse(run("prompt", "get", "greeter", "--project", slug, "--label", "production").stdout);
    expect(prod).toMatchObject({ version: 1, type: "text", prompt: "Greet {{name}} warmly.\n", message: "first" });

    const moved = run("prompt", "label", "greeter", "production", "2", "--project", slug);
    expect([moved.status, moved.stdout.trim()]).toEqual([0, "greeter: production v1 → v2."]);
    expect(run("prompt", "label", "greeter", "production", "1", "--project", slug).stdout.trim()).toBe("greeter: production v2 → v1.");
    expect(JSON.parse(run("prompt", "get", "greeter", "--project", slug, "--version", "2").stdout).labels).toEqual(["latest"]);

    const bad = path.join(dataDir, "bad.json");
    await fs.writeFile(bad, JSON.stringify({ prompt: [{ role: "wizard", content: "x" }] }));
    const refused = run("prompt", "push", "greeter", "--project", slug, "--file", bad);
    expect([refused.status, refused.stderr]).toEqual([1, expect.stringContaining("prompt")]);
    expect(run("prompt", "label", "greeter", "production", "9", "--project", slug).stderr).toContain("has no version 9");
    expect(run("prompt", "get", "nope", "--project", slug).stderr).toContain('no prompt named "nope"');
    expect(run("prompt", "label", "greeter", "production", "x", "--project", slug).status).toBe(2);
    expect(run("prompt", "get", "greeter", "--project", slug, "--label", "a", "--version", "1").status).toBe(2);
    expect(run("prompt", "push", "greeter", "--file", text).stderr).toContain("name the project");
    expect(JSON.parse(run("prompt", "get", "greeter", "--project", slug).stdout).version).toBe(2);
  }, 180_000);
});
