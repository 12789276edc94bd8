/**
 * A project's judge: agents-service's POST /judge with the project's own provider settings when it has them
 * (stores/evaluation/provider-keys.ts). An evaluator that names a provider uses the project's key for it, if any;
 * one that names none uses the project's first (openai, anthropic, gemini); the model defaults to the project's
 * default model for that provider, else the provider's usual one (DEFAULT_MODELS, as agents-service would choose).
 * Without a project key the service's own keys answer — the operator's account — only when the operator allows the
 * project that (RUNWATCH_OPERATOR_JUDGE_KEY, evaluation/judging/operator-key.ts); else the call is refused, before
 * any cap is counted. A key that cannot be opened (SESSION_SECRET changed) is an evaluation error that says to enter
 * it again, never a fall back to the service's key.
 */
import type { AgentsFailure } from "../../core/agents/client.js";
import { DEFAULT_MODELS, type JudgeRequest } from "../../core/agents/contract.js";
import type { Sql } from "../../core/ports/sql.js";
import type { Sealer } from "../../core/sealed.js";
import type { JudgeCall } from "./evaluate.js";
import { mayUseOperatorKey, operatorKeyRefused, type OperatorKeyPolicy } from "./operator-key.js";
import { openProviderKeys, type ProviderKey } from "../../stores/evaluation/provider-keys.js";

type OpenedKey = Awaited<ReturnType<typeof openProviderKeys>>[number];

/** `operatorKey`: whether the project may use the service's keys where it has none of its own. */
export function withProjectKeys(judge: JudgeCall, keys: readonly OpenedKey[], operatorKey: boolean): JudgeCall {
  return async (req: JudgeRequest) => {
    const key = req.provider ? keys.find((k) => k.provider === req.provider) : keys[0];
    if (!key) return operatorKey ? judge(req) : operatorKeyRefused(req.provider);
    if ("broken" in key) {
      const failure: AgentsFailure = {
        status: 422, code: "provider_key_unreadable", field: "api_key",
        message: `the project's ${key.provider} key was saved under another SESSION_SECRET and cannot be read: enter it again in the project's settings`,
      };
      return failure;
    }
    const k: ProviderKey = key;
    const model = req.model ?? k.default_model ?? DEFAULT_MODELS[k.provider];
    return judge({ ...req, provider: k.provider, model, connection: { api_key: k.api_key, ...(k.base_url ? { base_url: k.base_url } : {}) } });
  };
}

export interface ProjectJudgeDeps {
  readonly sql: Sql;
  readonly sealer: Sealer;
  readonly operator: OperatorKeyPolicy;
}

/** The project's judge, its keys and the operator's permission read now (a change applies to the next call). */
export async function projectJudge(deps: ProjectJudgeDeps, projectId: number, judge: JudgeCall): Promise<JudgeCall> {
  const [keys, operatorKey] = await Promise.all([openProviderKeys(deps.sql, deps.sealer, projectId), mayUseOperatorKey(deps.sql, deps.operator, projectId)]);
  return withProjectKeys(judge, keys, operatorKey);
}
