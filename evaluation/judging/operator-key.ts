/**
 * Whether a project's judges may run on agents-service's own provider keys — the operator's account — when the
 * project has no key of its own for the provider: the operator's setting RUNWATCH_OPERATOR_JUDGE_KEY
 * (core/agents/operator-judge-key.ts), read against the project's slug and its owner. Without it, anyone who
 * registers would spend the operator's account.
 */
import type { AgentsFailure } from "../../core/agents/client.js";
import type { OperatorJudgeKey } from "../../core/agents/operator-judge-key.js";
import type { Sql } from "../../core/ports/sql.js";
import { isInstanceAdmin } from "../../stores/accounts/instance-admin.js";
import { projectOwner } from "../../stores/accounts/projects.js";

/** What the check needs: the operator's setting and who the instance admins are (config.adminEmails). */
export interface OperatorKeyPolicy {
  readonly operatorJudgeKey: OperatorJudgeKey;
  readonly adminEmails: readonly string[];
}

export async function mayUseOperatorKey(sql: Sql, policy: OperatorKeyPolicy, projectId: number): Promise<boolean> {
  const setting = policy.operatorJudgeKey;
  if (setting.kind === "all") return true;
  if (!setting.admins && setting.slugs.size === 0) return false;
  const row = await projectOwner(sql, projectId);
  if (!row) return false;
  if (setting.slugs.has(row.slug)) return true;
  return setting.admins && row.email !== null && (await isInstanceAdmin(sql, { id: row.owner_id!, email: row.email }, policy.adminEmails));
}

/** A judge call refused because the project may not use the operator's keys: an evaluation error that says what to do. */
export const operatorKeyRefused = (provider: string | undefined): AgentsFailure => ({
  status: 403,
  code: "operator_key_not_allowed",
  field: "provider",
  message: `this instance's own ${provider ?? "LLM provider"} key is not available to this project's judges (RUNWATCH_OPERATOR_JUDGE_KEY): `
    + `an admin of the project adds the project's own key${provider ? ` for ${provider}` : ""} in its settings (PUT /api/provider-keys/${provider ?? "{provider}"})`,
});
