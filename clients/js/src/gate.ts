/**
 * Activating an agent's config version through the activation gate (docs/EVALUATION.md): resolves to the gate's
 * check (both experiments' summaries, the rules); a version whose latest experiment broke a rule rejects with a
 * RunwatchError (status 409) whose message names the score and both values, unless forced with a reason by a key
 * of an admin or the owner.
 */
import { call, type ApiHost as DatasetHost } from "./api-call.js";

export interface GateCheck {
  /** What was compared, in words: the two experiments, or why there was nothing to compare. */
  basis: string;
  active_version: number | null;
  active_experiment: { id: string; name: string; scores: Record<string, { mean: number | null; count: number }> } | null;
  candidate_experiment: { id: string; name: string; scores: Record<string, { mean: number | null; count: number }> } | null;
  rules: { score_name: string; max_drop: number }[];
  /** candidate_mean null: the version's experiment has no score of that name the gate counts. */
  violations: { score: string; active_mean: number; candidate_mean: number | null; max_drop: number }[];
}

export interface Activation {
  agent: string;
  version: number;
  forced: boolean;
  gate: GateCheck;
}

export function activateConfigVersion(host: DatasetHost, agent: string, version: number, options: { force?: boolean; reason?: string } = {}): Promise<Activation> {
  return call(host, "POST", `/api/agents/${encodeURIComponent(agent)}/configs/${version}/activate`, { ...(options.force ? { force: true, reason: options.reason ?? "" } : {}) });
}
