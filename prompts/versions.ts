/**
 * What the API, the pages and the CLI do with prompts: each checks its input here, once, and reads a version with
 * the variables it names, so every way in answers alike.
 */
import type { Sql } from "../core/ports/sql.js";
import { checkLabel, checkPromptName, checkPromptVersion } from "../stores/prompt-input.js";
import { createPromptVersion, listPromptVersions, movePromptLabel, readPromptVersion, type PromptVersion, type VersionRef } from "../stores/prompts.js";
import { diffVersions, type VersionDiff } from "./diff.js";
import { promptVariables } from "./template.js";

export interface PromptVersionView extends PromptVersion {
  /** The `{{variables}}` compile() fills, in the order they first appear. */
  readonly variables: readonly string[];
}

const view = (v: PromptVersion): PromptVersionView => ({ ...v, variables: promptVariables(v.prompt) });

/** Writes a new version of `name` from a request's body (creating the prompt); 422 naming the field it refuses. */
export async function pushPromptVersion(sql: Sql, projectId: number, userId: number | null, name: unknown, body: unknown): Promise<PromptVersionView> {
  const checked = checkPromptName(name);
  return view(await createPromptVersion(sql, projectId, userId, checked, checkPromptVersion(body)));
}

export async function readPrompt(sql: Sql, projectId: number, name: string, ref: VersionRef): Promise<PromptVersionView> {
  return view(await readPromptVersion(sql, projectId, checkPromptName(name), ref));
}

/** A prompt's versions, newest first, `limit` of them below `before` when given. */
export async function promptVersions(sql: Sql, projectId: number, name: string, page: { limit: number; before?: number }): Promise<PromptVersionView[]> {
  return (await listPromptVersions(sql, projectId, checkPromptName(name), page)).map(view);
}

/** Points `label` at `version` (a rollback when it is older than the label's). */
export async function labelPrompt(sql: Sql, projectId: number, userId: number | null, name: string, label: unknown, version: number) {
  return movePromptLabel(sql, projectId, userId, checkPromptName(name), checkLabel(label), version);
}

export async function diffPromptVersions(sql: Sql, projectId: number, name: string, from: number, to: number): Promise<{ from: PromptVersionView; to: PromptVersionView; diff: VersionDiff }> {
  const [a, b] = [await readPrompt(sql, projectId, name, { version: from }), await readPrompt(sql, projectId, name, { version: to })];
  return { from: a, to: b, diff: diffVersions(a, b) };
}
