/**
 * The difference between two prompt versions, line by line, for the API and the prompt page. Bounded: a version is
 * at most a few hundred KiB, and the line diff gives up past MAX_EDIT_LENGTH edits or DIFF_TIMEOUT_MS, answering
 * `too_large` with both sides' line counts instead of holding a web thread.
 */
import { diffLines } from "diff";
import type { PromptConfigValue, PromptContent } from "../stores/prompt-input.js";

export const MAX_EDIT_LENGTH = 2_000;
export const DIFF_TIMEOUT_MS = 200;

export interface DiffPart {
  readonly op: "same" | "add" | "remove";
  readonly text: string;
}

export interface SideDiff {
  readonly parts: readonly DiffPart[] | null;
  /** True when the sides differ too much to show line by line: `parts` is null. */
  readonly too_large: boolean;
  readonly changed: boolean;
}

export interface VersionDiff {
  readonly prompt: SideDiff;
  readonly config: SideDiff;
}

/** A prompt as the lines a diff compares: a chat's messages each under a `[role]` line. */
export function promptAsText(content: PromptContent): string {
  if (typeof content === "string") return content.endsWith("\n") ? content : `${content}\n`;
  return content.map((m) => `[${m.role}]\n${m.content}${m.content.endsWith("\n") ? "" : "\n"}`).join("");
}

const configAsText = (config: PromptConfigValue) => `${JSON.stringify(config, null, 2)}\n`;

export function diffText(before: string, after: string): SideDiff {
  if (before === after) return { parts: before ? [{ op: "same", text: before }] : [], too_large: false, changed: false };
  const changes = diffLines(before, after, { maxEditLength: MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS });
  if (!changes) return { parts: null, too_large: true, changed: true };
  return { parts: changes.map((c) => ({ op: c.added ? "add" : c.removed ? "remove" : "same", text: c.value })), too_large: false, changed: true };
}

/** The prompt's and the model config's differences from `from` to `to`. */
export function diffVersions(from: { prompt: PromptContent; config: PromptConfigValue }, to: { prompt: PromptContent; config: PromptConfigValue }): VersionDiff {
  return { prompt: diffText(promptAsText(from.prompt), promptAsText(to.prompt)), config: diffText(configAsText(from.config), configAsText(to.config)) };
}
