#!/usr/bin/env node
// The `runwatch` command. It runs the compiled JavaScript in dist/ (built by `npm install`, and again here when a
// source is newer), so no TypeScript is compiled at run time. RUNWATCH_FROM_SOURCE=1 runs the TypeScript sources
// through tsx instead (development).
if (process.env.RUNWATCH_FROM_SOURCE === "1") {
  const { register } = await import("tsx/esm/api");
  register();
  const { runCli } = await import("../cli.ts");
  await runCli(process.argv.slice(2));
} else {
  const { ensureBuilt } = await import("../build.mjs");
  await ensureBuilt();
  const { runCli } = await import("../../dist/deploy/cli.js");
  await runCli(process.argv.slice(2));
}
