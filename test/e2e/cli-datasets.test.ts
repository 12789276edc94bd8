/**
 * `runwatch datasets import|export` as an operator runs them, a child process per command on a temporary data dir
 * (or the scale pass's servers): a JSON Lines file imported into a new dataset, exported back as it was, exported as
 * CSV with formula cells defused, re-imported as CSV into another dataset; a file with bad lines refused whole,
 * naming them, with nothing created.
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
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-cli-datasets-"));
  env = { ...process.env, RUNWATCH_DATA_DIR: dataDir, LOG_LEVEL: "warn", NODE_ENV: "test", RUNWATCH_PASSWORD: "correct horse battery" };
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

describe("runwatch datasets", () => {
  it("imports, exports as JSON Lines and CSV, and refuses a file with bad lines whole", async () => {
    const tag = path.basename(dataDir).slice(-6).toLowerCase().replace(/[^a-z0-9]/g, "x");
    const email = `datasets-${tag}@example.com`;
    expect(run("user", "create", "--email", email, "--name", "Dana").status).toBe(0);
    const slug = run("project", "create", "--email", email, "--name", `Evals ${tag}`).stdout.trim();
    const items = [
      { id: "a", input: { question: "2+2?" }, expected_output: "4", metadata: { level: 1 }, status: "active" },
      { id: "b", input: "=HYPERLINK(\"http://evil.example\")", expected_output: null, metadata: {}, status: "active" },
    ];
    const jsonl = path.join(dataDir, "in.jsonl");
    await fs.writeFile(jsonl, items.map((i) => JSON.stringify(i)).join("\n"));

    const refusedMissing = run("datasets", "import", "--project", slug, "--name", "qa", "--file", jsonl);
    expect([refusedMissing.status, refusedMissing.stderr]).toEqual([1, expect.stringContaining('no dataset named "qa"')]);
    const imported = run("datasets", "import", "--project", slug, "--name", "qa", "--file", jsonl, "--create");
    expect([imported.status, imported.stdout.trim()]).toEqual([0, "Created the dataset; imported 2 items: version 1 (2 changed)."]);
    expect(run("datasets", "import", "--project", slug, "--name", "qa", "--file", jsonl).stdout.trim()).toBe("Imported 2 items: nothing changed, still version 1.");

    const exported = run("datasets", "export", "--project", slug, "--name", "qa");
    expect(exported.stdout.trim().split("\n").map((l) => JSON.parse(l))).toEqual(items);
    const csvFile = path.join(dataDir, "out.csv");
    expect(run("datasets", "export", "--project", slug, "--name", "qa", "--format", "csv", "--file", csvFile).status).toBe(0);
    const csv = await fs.readFile(csvFile, "utf8");
    expect(csv.split("\r\n")[0]).toBe("id,input,expected_output,metadata,source,status");
    expect(csv).toContain(`"'=HYPERLINK(""http://evil.example"")"`);
    const again = run("datasets", "import", "--email", email, "--name", "from csv", "--file", csvFile, "--create");
    expect([again.status, again.stderr]).toEqual([0, ""]);

    const bad = path.join(dataDir, "bad.jsonl");
    await fs.writeFile(bad, [JSON.stringify({ input: 1 }), "{oops", JSON.stringify({ id: "x" }), JSON.stringify({ input: 2 })].join("\n"));
    const refused = run("datasets", "import", "--project", slug, "--name", "never", "--file", bad, "--create");
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain("2 of 4 lines cannot be imported; nothing was imported");
    expect(refused.stderr).toMatch(/ {2}line 2: not valid JSON.*\n {2}line 3: line 3\.input is required/s);
    expect(run("datasets", "export", "--project", slug, "--name", "never").stderr).toContain('no dataset named "never"');
    expect(run("datasets", "export", "--project", slug, "--name", "qa", "--version", "0").status).toBe(2);
    expect(run("datasets", "export", "--name", "qa").stderr).toContain("name the project");
  }, 120_000);
});
