/**
 * `runwatch prompt push|get|label` (deploy/cli.ts): the project by `--project <slug>` or `--email E` (E's personal
 * project); the work is deploy/admin-prompts.ts, through a running server's admin socket or on the stores.
 *
 * push's file is a version as the API takes it — a JSON object `{"prompt": …, "config": …}` — or, when it is not one,
 * the text of a text prompt. --message and --label add to what the file says.
 */
import fs from "node:fs/promises";
import type { Config } from "../core/config.js";
import { admin } from "./admin-client.js";
import { out, required, UsageError } from "./cli-output.js";
import type { PromptAdminResult } from "./admin-prompts.js";

type Values = Record<string, string | boolean | undefined>;

export const PROMPT_USAGE = `
  runwatch prompt push <name> --project P --file F [--message M] [--label L]
                                                           F as the prompt's next version (a JSON object like the
                                                           API's body, else the text of a text prompt); L moves to it
  runwatch prompt get <name> --project P [--label L | --version V]
                                                           a version as JSON (default: the newest)
  runwatch prompt label <name> <label> <version> --project P [--force --reason R]
                                                           point a label at a version (a rollback: an older one);
                                                           production goes through the gate, --force passes it`;

/** The API's body from a file: a JSON object as it is, anything else as a text prompt. */
function bodyOf(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // Not JSON: a text prompt.
  }
  return { prompt: text };
}

const versionArg = (raw: string | undefined, what: string) => {
  const n = Number(raw);
  if (raw === undefined || !Number.isInteger(n) || n < 1) throw new UsageError(`${what} takes a version number, e.g. 3`);
  return n;
};

export async function promptCommand(config: Config, verb: string, args: readonly string[], values: Values): Promise<number> {
  const str = (name: string) => values[name] as string | undefined;
  const [name, ...rest] = args;
  if (!name) throw new UsageError(`runwatch prompt ${verb} needs the prompt's name`);
  const selection = { project: str("project"), email: str("email"), name };
  if (verb === "push") {
    required(values, "file");
    const body = bodyOf(await fs.readFile(str("file")!, "utf8"));
    if (str("message") !== undefined) body.message = str("message");
    if (str("label") !== undefined) body.labels = [...(Array.isArray(body.labels) ? body.labels : []), str("label")];
    const { prompt } = (await admin(config, { cmd: "prompt.push", ...selection, body })) as Extract<PromptAdminResult, { prompt: unknown }>;
    out(`Pushed ${prompt.name} v${prompt.version}${prompt.labels.length ? ` (${prompt.labels.join(", ")})` : ""}.`);
    return 0;
  }
  if (verb === "get") {
    if (str("label") !== undefined && str("version") !== undefined) throw new UsageError("give --label or --version, not both");
    const version = str("version") === undefined ? undefined : versionArg(str("version"), "--version");
    const { prompt } = (await admin(config, { cmd: "prompt.get", ...selection, label: str("label"), version })) as Extract<PromptAdminResult, { prompt: unknown }>;
    out(JSON.stringify(prompt, null, 2));
    return 0;
  }
  const [label, version] = rest;
  if (!label) throw new UsageError("runwatch prompt label <name> <label> <version>");
  const force = values.force === true ? { force: true, reason: str("reason") ?? "" } : {};
  const moved = (await admin(config, { cmd: "prompt.label", ...selection, label, version: versionArg(version, "runwatch prompt label"), ...force })) as Extract<PromptAdminResult, { label: string }>;
  const forced = moved.forced ? " (forced past the gate)" : "";
  out(moved.previous === null ? `${name}: ${moved.label} → v${moved.version}${forced}.` : `${name}: ${moved.label} v${moved.previous} → v${moved.version}${forced}.`);
  return 0;
}
