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
  const { ensureBuilt, useBuild } = await import("../build.mjs");
  await ensureBuilt();
  // Imported from the build's own directory, not through the dist symlink: a rebuild meanwhile swaps dist to a new
  // build, and this process keeps loading its modules from the one it started with.
  const { pathToFileURL } = await import("node:url");
  const { runCli } = await import(pathToFileURL(`${await useBuild()}/deploy/cli.js`).href);
  await runCli(process.argv.slice(2));
}
