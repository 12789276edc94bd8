#!/usr/bin/env node
// The structure rules of docs/ARCHITECTURE.md, run by `npm test`:
//  1. the layers and each feature's entry point, without cycles (dependency-cruiser, rules in
//     .dependency-cruiser.cjs);
//  2. no source file over 400 lines (tests, fixtures, migrations and generated files aside): past that a module
//     has more than one reason to change.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const MAX_LINES = 400;
const LAYERS = ["core", "stores", "alerts", "evaluation", "human-input", "accounts", "dead-letters", "query", "prompts", "otlp", "plugins", "pipeline", "web", "gateway", "agents-service", "deploy", "test"];
const SOURCE = /\.(ts|mts|mjs|js|py)$/;
const NOT_SOURCE = /(\.test\.ts$|\.d\.ts$|^test\/|\/tests?\/|\/testing\/|\/fixtures\/|\/dist\/|\/static\/vendor\/|^clients\/python\/tests\/)/;

let failed = false;

const cruise = spawnSync("npx", ["depcruise", "--config", ".dependency-cruiser.cjs", "--output-type", "err", ...LAYERS], { encoding: "utf8" });
process.stdout.write(cruise.stdout.replace(/^npm warn.*\n/gm, ""));
if (cruise.status !== 0) {
  process.stderr.write(cruise.stderr.replace(/^npm warn.*\n/gm, ""));
  failed = true;
}

const files = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard"], { encoding: "utf8" })
  .split("\n")
  .filter((f) => SOURCE.test(f) && !NOT_SOURCE.test(f));
const long = [];
for (const f of files) {
  let text;
  try {
    text = readFileSync(f, "utf8");
  } catch {
    continue; // deleted in the work tree
  }
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_LINES) long.push([f, lines]);
}
if (long.length > 0) {
  failed = true;
  console.error(`\nsource files over ${MAX_LINES} lines (split them by responsibility):`);
  for (const [f, n] of long.sort((a, b) => b[1] - a[1])) console.error(`  ${n}  ${f}`);
} else {
  console.log(`no source file over ${MAX_LINES} lines (${files.length} files)`);
}
process.exit(failed ? 1 : 0);
