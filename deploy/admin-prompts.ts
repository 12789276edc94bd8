/**
 * The CLI's prompt commands (deploy/cli-prompts.ts → deploy/admin.ts), run by the instance's operator on a project
 * named by slug (or a user's personal project): push a version, read one, point a label at one. The same checks as
 * the API (prompts/); the audit log names no member, as for every operator command. Moving `production` goes through
 * the gate (prompts/gate.ts), which reads ClickHouse; the operator may force it with a reason, as an admin may.
 */
import { ValidationError } from "../core/errors.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { labelThroughGate, pushPromptVersion, readPrompt, type PromptVersionView } from "../prompts/index.js";
import { checkLabel, LATEST } from "../stores/prompt-input.js";
import { AdminError } from "./admin-error.js";
import { selectedProject, type ProjectSelection } from "./project-selection.js";

export type PromptAdminRequest =
  | ({ cmd: "prompt.push"; name: string; body: unknown } & ProjectSelection)
  | ({ cmd: "prompt.get"; name: string; label?: string; version?: number } & ProjectSelection)
  | ({ cmd: "prompt.label"; name: string; label: string; version: number; force?: boolean; reason?: string } & ProjectSelection);

export type PromptAdminResult = { prompt: PromptVersionView } | { label: string; version: number; previous: number | null; forced: boolean };

export async function runPromptAdmin(sql: Sql, ch: ClickHouse | undefined, req: PromptAdminRequest): Promise<PromptAdminResult> {
  const projectId = await selectedProject(sql, req);
  if (projectId === undefined) throw new ValidationError({ field: "project", message: "name the project: --project P, or --email E for E's personal project" });
  switch (req.cmd) {
    case "prompt.push":
      return { prompt: await pushPromptVersion(sql, projectId, null, req.name, req.body) };
    case "prompt.get": {
      const ref = req.version !== undefined ? { version: req.version } : req.label === undefined || req.label === LATEST ? { latest: true as const } : { label: checkLabel(req.label) };
      return { prompt: await readPrompt(sql, projectId, req.name, ref) };
    }
    case "prompt.label": {
      if (!ch) throw new AdminError({ tag: "Unavailable", message: "moving a label goes through the gate, which needs ClickHouse, which this process has not opened" });
      const force = req.force ? { reason: req.reason ?? "", allowed: true } : undefined;
      const outcome = await labelThroughGate(sql, ch, projectId, null, req.name, req.label, req.version, force);
      if (!outcome.moved) throw outcome.refusal;
      return { label: outcome.label, version: outcome.version, previous: outcome.previous, forced: outcome.forced };
    }
  }
}
