/**
 * The agent frameworks the framework tests run (test/frameworks/*.test.ts), installed once under
 * deploy/.cache/frameworks like the project's other downloads, at the versions pinned in test/frameworks/js
 * and js-ai7 (package-lock.json) and test/frameworks/python/*.requirements.txt; installed again only when those files change.
 * Python frameworks that cannot share a venv (some need openai 3, some refuse it) get one venv per requirements file.
 * The snippets (the code docs/OTEL.md shows) are copied beside the JS packages, so their imports resolve there.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { findPython } from "../../clients/python/find-python.mjs";

const here = import.meta.dirname;
// The deploy scripts' download cache (deploy/lib.sh: RUNWATCH_DEPLOY_CACHE, else deploy/.cache).
const cache = path.join(process.env.RUNWATCH_DEPLOY_CACHE || path.join(here, "..", "..", "deploy", ".cache"), "frameworks");

const digestOf = (files: readonly string[]): string => {
  const h = createHash("sha256");
  for (const f of files) h.update(readFileSync(f));
  return h.digest("hex");
};

async function installOnce(dir: string, inputs: readonly string[], install: () => Promise<void>): Promise<void> {
  const stamp = path.join(dir, ".runwatch-install-stamp");
  const digest = digestOf(inputs);
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === digest) return;
  await install();
  writeFileSync(stamp, digest);
}

/** Runs a command to its end (the installs run side by side: they wait on the network more than on the CPU). */
function run(cmd: string, args: readonly string[], cwd: string): Promise<void> {
  const child = spawn(cmd, args, { cwd, stdio: ["ignore", "pipe", "pipe"], timeout: 600_000 });
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(" ")} failed (${code ?? signal}):\n${output}`.slice(-8000))));
  });
}

/**
 * A JS workspace's directory (test/frameworks/<name>: "js", or "js-ai7" for the AI SDK 7, which cannot share a
 * node_modules with AI SDK 6), with its packages installed and its snippets copied in.
 */
export async function jsWorkspace(name = "js"): Promise<string> {
  const source = path.join(here, name);
  const dir = path.join(cache, name);
  mkdirSync(dir, { recursive: true });
  const manifest = ["package.json", "package-lock.json"].map((f) => path.join(source, f));
  await installOnce(dir, manifest, async () => {
    for (const f of manifest) copyFileSync(f, path.join(dir, path.basename(f)));
    await run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"], dir);
  });
  for (const f of readdirSync(source)) if (f.endsWith(".mjs")) copyFileSync(path.join(source, f), path.join(dir, f));
  return dir;
}

/** The interpreter of the venv `name`, with test/frameworks/python/<name>.requirements.txt installed. */
export async function pythonVenv(name: string): Promise<string> {
  const requirements = path.join(here, "python", `${name}.requirements.txt`);
  const dir = path.join(cache, `python-${name}`);
  const python = path.join(dir, "bin", "python");
  if (!existsSync(python)) {
    const found = findPython();
    if (!found) throw new Error("no Python >= 3.10 found (set RUNWATCH_PYTHON)");
    await run(found, ["-m", "venv", dir], here);
  }
  await installOnce(dir, [requirements], () => run(python, ["-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", requirements], here));
  return python;
}

/** A snippet file's text, for the check that docs/OTEL.md shows exactly the code the test runs. */
export const snippet = (relative: string): string => readFileSync(path.join(here, relative), "utf8");
