/**
 * A project's judge: agents-service's POST /judge with the project's own provider settings when it has them
 * (stores/evaluation/provider-keys.ts). An evaluator that names a provider uses the project's key for it, if any;
 * one that names none uses the project's first (openai, anthropic, gemini); the model defaults to the project's
 * default model for that provider. Without a project key the service's own keys answer, as before. A key that cannot
 * be opened (SESSION_SECRET changed) is an evaluation error that says to enter it again, never a fall back to the
 * service's key.
 */
import type { AgentsFailure } from "../../core/agents/client.js";
import type { JudgeRequest } from "../../core/agents/contract.js";
import type { Sql } from "../../core/ports/sql.js";
import type { Sealer } from "../../core/sealed.js";
import type { JudgeCall } from "./evaluate.js";
import { openProviderKeys, type ProviderKey } from "./provider-keys.js";

type OpenedKey = Awaited<ReturnType<typeof openProviderKeys>>[number];

export function withProjectKeys(judge: JudgeCall, keys: readonly OpenedKey[]): JudgeCall {
  if (keys.length === 0) return judge;
  return async (req: JudgeRequest) => {
    const key = req.provider ? keys.find((k) => k.provider === req.provider) : keys[0];
    if (!key) return judge(req);
    if ("broken" in key) {
      const failure: AgentsFailure = {
        status: 422, code: "provider_key_unreadable", field: "api_key",
        message: `the project's ${key.provider} key was saved under another SESSION_SECRET and cannot be read: enter it again in the project's settings`,
      };
      return failure;
    }
    const k: ProviderKey = key;
    const model = req.model ?? k.default_model ?? undefined;
    return judge({ ...req, provider: k.provider, ...(model ? { model } : {}), connection: { api_key: k.api_key, ...(k.base_url ? { base_url: k.base_url } : {}) } });
  };
}

/** The project's judge, its keys read now (a key changed applies to the next call). */
export async function projectJudge(deps: { sql: Sql; sealer: Sealer }, projectId: number, judge: JudgeCall): Promise<JudgeCall> {
  return withProjectKeys(judge, await openProviderKeys(deps.sql, deps.sealer, projectId));
}
