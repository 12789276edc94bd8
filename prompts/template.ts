/**
 * `{{variable}}` templates: which variables a prompt names and the prompt with them filled in. The SDKs
 * (clients/python, clients/js) compile the same way; docs/PROMPTS.md states the rules once for all three:
 * a variable is `{{ name }}` (spaces inside the braces allowed), a name is a letter or `_` then letters, digits,
 * `_`, `.` or `-`; anything else between braces is left as written. A value that is not a string is written as JSON.
 */
import { ValidationError } from "../core/errors.js";
import type { PromptContent, PromptMessageValue } from "../stores/prompt-input.js";

const VARIABLE = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

const textsOf = (content: PromptContent): readonly string[] => (typeof content === "string" ? [content] : content.map((m) => m.content));

/** The variables a prompt names, each once, in the order they first appear. */
export function promptVariables(content: PromptContent): string[] {
  const seen = new Set<string>();
  for (const text of textsOf(content)) for (const m of text.matchAll(VARIABLE)) seen.add(m[1]!);
  return [...seen];
}

const fill = (text: string, vars: Readonly<Record<string, unknown>>) =>
  text.replace(VARIABLE, (_all, name: string) => {
    const v = vars[name];
    return typeof v === "string" ? v : JSON.stringify(v);
  });

/** The prompt with its variables filled in; a ValidationError names the first variable `vars` lacks. */
export function compilePrompt(content: PromptContent, vars: Readonly<Record<string, unknown>>): PromptContent {
  const missing = promptVariables(content).filter((name) => !Object.hasOwn(vars, name) || vars[name] === undefined);
  if (missing.length) {
    throw new ValidationError({ field: `variables.${missing[0]}`, message: `missing variable${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}` });
  }
  return typeof content === "string" ? fill(content, vars) : content.map((m): PromptMessageValue => ({ role: m.role, content: fill(m.content, vars) }));
}
