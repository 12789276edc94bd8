/**
 * What a newcomer installs, as the READMEs say: `npm install` ends without a list of dependencies whose install
 * scripts nobody reviewed (package.json's allowScripts covers each; README.md, Run it), and the Python client's
 * README shows every extra its pyproject.toml offers.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const npm = (...args: string[]) => spawnSync("npm", args, { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
// npm's install-script review (npm 11); an older npm runs every script and knows no such command.
const ls = npm("install-scripts", "ls");
const lsText = `${ls.stdout}${ls.stderr}`;
const reviews = /install scripts/i.test(lsText) && !/unknown command/i.test(lsText);

describe("installing", () => {
  it.skipIf(!reviews)("leaves no dependency's install scripts unreviewed", () => {
    expect(ls.status, lsText).toBe(0);
    expect(lsText).toContain("No packages with unreviewed install scripts");
  });

  it("shows every extra of the Python client in its README", () => {
    const pyproject = readFileSync(path.join(ROOT, "clients/python/pyproject.toml"), "utf8");
    const section = pyproject.slice(pyproject.indexOf("[project.optional-dependencies]"));
    const extras = [...section.slice(0, section.indexOf("\n[", 1)).matchAll(/^([a-z][a-z0-9-]*)\s*=/gm)].map((m) => m[1]!).filter((e) => e !== "dev");
    expect(extras).toEqual(expect.arrayContaining(["langchain", "langgraph", "prices"]));
    const readme = readFileSync(path.join(ROOT, "clients/python/README.md"), "utf8");
    for (const extra of extras) expect(readme, extra).toContain(`pip install "./clients/python[${extra}]"`);
  });
});
