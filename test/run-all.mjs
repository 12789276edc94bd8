#!/usr/bin/env node
// The README's test command (`npm test`): the TypeScript suites (vitest), then the Python client's suite.
// Each suite decides for itself what to skip when a server is absent; REQUIRE_SERVICES=1 turns skips into failures.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { stdio: "inherit", ...opts }).status ?? 1;

let failed = run("npx", ["vitest", "run", "--config", "test/vitest.config.ts", ...process.argv.slice(2)]);
if (existsSync("clients/python/run-tests.mjs")) failed ||= run("node", ["clients/python/run-tests.mjs"]);
process.exit(failed);
