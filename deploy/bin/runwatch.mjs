#!/usr/bin/env node
// The `runwatch` command: loads the TypeScript CLI through tsx (no build step).
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../cli.ts");
await runCli(process.argv.slice(2));
