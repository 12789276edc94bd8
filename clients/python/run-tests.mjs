#!/usr/bin/env node
// The Python client's suite, run by the root `npm test` (test/run-all.mjs): creates clients/python/.venv when
// missing, installs the package with its dev and langchain extras (pytest, ruff, langgraph, langchain-core from
// PyPI), then runs ruff (lint + format check, target py310) and pytest. Exits non-zero on any failure,
// including pytest's exit code 5 (no tests collected).
//
//   node clients/python/run-tests.mjs [pytest args...]      e.g. -k langchain, tests/test_transport.py
//   RUNWATCH_PYTHON=python3.10 node clients/python/run-tests.mjs    (interpreter for a new venv)
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { findPython } from "./find-python.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const venv = path.join(here, ".venv");
const bin = (name) => path.join(venv, "bin", name);

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: here, ...opts });
  if (r.error) {
    console.error(`[python] cannot run ${cmd}: ${r.error.message}`);
    return 1;
  }
  return r.status ?? 1;
}

function step(label, cmd, args, opts) {
  console.log(`\n[python] ${label}`);
  const code = run(cmd, args, opts);
  if (code !== 0) {
    console.error(`[python] ${label} failed (exit ${code})`);
    process.exit(code);
  }
}

// A new venv needs Python >= 3.10.
if (!existsSync(bin("python"))) {
  const python = findPython();
  if (!python) {
    console.error("[python] no Python >= 3.10 found (set RUNWATCH_PYTHON)");
    process.exit(1);
  }
  step(`creating ${path.relative(process.cwd(), venv) || venv} with ${python}`, python, ["-m", "venv", venv]);
}

// Install (again) only when pyproject.toml changed since the last install.
const stamp = path.join(venv, ".runwatch-install-stamp");
const digest = createHash("sha256").update(readFileSync(path.join(here, "pyproject.toml"))).digest("hex");
if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== digest) {
  step("pip install -e .[dev,langchain]", bin("python"), [
    "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", `${here}[dev,langchain]`,
  ]);
  writeFileSync(stamp, digest);
}

step("ruff check", bin("ruff"), ["check", "src", "tests", "bench"]);
step("ruff format --check", bin("ruff"), ["format", "--check", "src", "tests", "bench"]);

console.log("\n[python] pytest");
const code = run(bin("python"), ["-m", "pytest", "-rs", ...process.argv.slice(2)]);
if (code === 5) {
  console.error("[python] pytest collected no tests: counted as a failure");
  process.exit(1);
}
process.exit(code);
