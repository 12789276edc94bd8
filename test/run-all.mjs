#!/usr/bin/env node
// The README's test command (`npm test`): typecheck, the structure check (layers, cycles, file sizes), the
// TypeScript suites (vitest), then the Python client's suite.
// `npm test -- <filter>` runs only the matching vitest files.
// Every suite runs; the exit code is non-zero if any failed. Each suite decides what to skip when a server
// is absent; REQUIRE_SERVICES=1 (set by CI in scale mode) turns those skips into failures.
// RUNWATCH_TEST_SCALE_PASS=1 (CI's second pass, in scale mode) runs only what depends on the mode: the vitest
// suites. The typecheck, the structure check and the Python suite (whose integration tests always start an
// embedded server) would repeat the first pass exactly.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const run = (cmd, args) => spawnSync(cmd, args, { stdio: "inherit" }).status ?? 1;

const whole = process.argv.length <= 2;
const modeIndependent = whole && process.env.RUNWATCH_TEST_SCALE_PASS !== "1";
const results = [];
if (modeIndependent) results.push(["typecheck", run("npx", ["tsc", "--noEmit", "-p", "tsconfig.json"])]);
if (modeIndependent) results.push(["structure", run("node", ["test/check-structure.mjs"])]);
results.push(["vitest", run("npx", ["vitest", "run", "--config", "test/vitest.config.ts", ...process.argv.slice(2)])]);
if (existsSync("clients/python/run-tests.mjs") && modeIndependent) {
  results.push(["python client", run("node", ["clients/python/run-tests.mjs"])]);
}
for (const [name, code] of results) console.log(`${name}: ${code === 0 ? "ok" : `FAILED (exit ${code})`}`);
process.exit(results.some(([, code]) => code !== 0) ? 1 : 0);
