/**
 * `runwatch datasets export|import` (deploy/cli.ts): the project by `--project <slug>` or `--email E` (E's personal
 * project); the work is deploy/admin-datasets.ts, through a running server's admin socket or on the stores.
 */
import fs from "node:fs/promises";
import type { Config } from "../core/config.js";
import { admin } from "./admin-client.js";
import { out, required, UsageError } from "./cli-output.js";

type Values = Record<string, string | boolean | undefined>;

export async function datasetsCommand(config: Config, verb: string, values: Values): Promise<number> {
  const str = (name: string) => values[name] as string | undefined;
  required(values, "name");
  const selection = { project: str("project"), email: str("email"), name: str("name")! };
  const file = str("file");
  if (verb === "export") {
    const version = str("version") === undefined ? undefined : Number(str("version"));
    if (version !== undefined && (!Number.isInteger(version) || version < 1)) throw new UsageError("--version takes a version number, e.g. --version 3");
    const r = (await admin(config, { cmd: "datasets.export", ...selection, version, format: str("format") })) as { file: string; version: number; items: number };
    if (file) {
      await fs.writeFile(file, r.file);
      process.stderr.write(`Wrote ${r.items} item${r.items === 1 ? "" : "s"} of version ${r.version} to ${file}.\n`);
    } else {
      process.stdout.write(r.file);
    }
    return 0;
  }
  required(values, "file");
  const text = await fs.readFile(file!, "utf8");
  const format = str("format") ?? (file!.toLowerCase().endsWith(".csv") ? "csv" : "jsonl");
  const r = (await admin(config, { cmd: "datasets.import", ...selection, format, text, create: values.create === true })) as
    { version: number; imported: number; changed: number; created: boolean };
  out(`${r.created ? "Created the dataset; i" : "I"}mported ${r.imported} item${r.imported === 1 ? "" : "s"}: ${r.changed ? `version ${r.version} (${r.changed} changed)` : `nothing changed, still version ${r.version}`}.`);
  return 0;
}
