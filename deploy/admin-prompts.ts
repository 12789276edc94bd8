/**
 * The CLI's prompt commands (deploy/cli-prompts.ts → deploy/admin.ts), run by the instance's operator on a project
 * named by slug (or a user's personal project): push a version, read one, point a label at one. The same checks as
 * the API (prompts/); the audit log names no member, as for every operator command.
 */
import { ValidationError } from "../core/errors.js";
import type { Sql } from "../core/ports/sql.js";
import { labelPrompt, pushPromptVersion, readPrompt, type PromptVersionView } from "../prompts/index.js";
import { checkLabel, LATEST } from "../stores/prompt-input.js";
import { selectedProject, type ProjectSelection } from "./project-selection.js";

export type PromptAdminRequest =
  | ({ cmd: "prompt.push"; name: string; body: unknown } & ProjectSelection)
  | ({ cmd: "prompt.get"; name: string; label?: string; version?: number } & ProjectSelection)
  | ({ cmd: "prompt.label"; name: string; label: string; version: number } & ProjectSelection);

export type PromptAdminResult = { prompt: PromptVersionView } | { label: string; version: number; previous: number | null };

export async function runPromptAdmin(sql: Sql, req: PromptAdminRequest): Promise<PromptAdminResult> {
  const projectId = await selectedProject(sql, req);
  if (projectId === undefined) throw new ValidationError({ field: "project", message: "name the project: --project P, or --email E for E's personal project" });
  switch (req.cmd) {
    case "prompt.push":
      return { prompt: await pushPromptVersion(sql, projectId, null, req.name, req.body) };
    case "prompt.get": {
      const ref = req.version !== undefined ? { version: req.version } : req.label === undefined || req.label === LATEST ? { latest: true as const } : { label: checkLabel(req.label) };
      return { prompt: await readPrompt(sql, projectId, req.name, ref) };
    }
    case "prompt.label":
      return labelPrompt(sql, projectId, null, req.name, req.label, req.version);
  }
}
