/**
 * The judgement both gates share (docs/EVALUATION.md, The activation gate; docs/PROMPTS.md, The gate): a rule per
 * score ("correctness may drop by at most 0.05"), the experiments it trusts and their counted scores, what breaks a
 * rule, and what forcing a refused change takes. The activation of an agent's config version (activation-gate.ts) and
 * the move of a prompt's `production` label (prompts/gate.ts) differ only in which two experiments they compare and
 * what they change.
 */
import { can, ROLES } from "../core/access/roles.js";
import { AuthError, ValidationError } from "../core/errors.js";
import { needsRepair } from "../core/events/storable.js";
import { displayTextProblem } from "../core/display-text.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import { summarizeExperiment, type ExperimentSummary } from "./datasets/experiment-results.js";
import type { Experiment } from "./datasets/experiments.js";
import { gateScores } from "./datasets/gate-scores.js";
import { MAX_SCORE_NAME } from "./scores.js";

export const MAX_GATE_RULES = 20;
export const MAX_FORCE_REASON = 2_000;

export interface GateRule {
  readonly score_name: string;
  readonly max_drop: number;
}

export interface GateViolation {
  readonly score: string;
  readonly active_mean: number;
  /** null: the candidate's experiment has no counted score of this name. */
  readonly candidate_mean: number | null;
  readonly max_drop: number;
}

/** Whose experiments the gates compare: those made by the roles that may edit datasets (members and above). */
export const EXPERIMENT_MAKERS = ROLES.filter((r) => can(r, "edit_datasets"));

/** Checks a rule from a form or the API: a score name and the largest drop of its mean allowed (≥ 0). */
export function parseGateRule(input: { score_name?: unknown; max_drop?: unknown }): GateRule {
  const name = typeof input.score_name === "string" ? input.score_name.trim() : "";
  if (!name || name.length > MAX_SCORE_NAME || displayTextProblem(name)) {
    throw new ValidationError({ field: "score_name", message: `score_name must be a score's name (1 to ${MAX_SCORE_NAME} characters, no control characters)` });
  }
  const drop = typeof input.max_drop === "number" ? input.max_drop : typeof input.max_drop === "string" && input.max_drop.trim() !== "" ? Number(input.max_drop) : NaN;
  if (!Number.isFinite(drop) || drop < 0 || drop > 1e9) {
    throw new ValidationError({ field: "max_drop", message: "max_drop must be a number from 0 (no drop allowed) to 1000000000" });
  }
  return { score_name: name, max_drop: drop };
}

/** An experiment's summary as the gate sees it: its scores are those the gate counts (datasets/gate-scores.ts). */
export async function gateSummary(ch: ClickHouse, projectId: number, e: Experiment): Promise<ExperimentSummary> {
  const [summary, scores] = await Promise.all([summarizeExperiment(ch, projectId, e), gateScores(ch, projectId, e.id)]);
  return { ...summary, scores };
}

/**
 * The rules `candidate` breaks against `active`. A score the active side has and the candidate lacks is a violation
 * too: a candidate cannot pass by having no counted score. A score the active side lacks holds the candidate to nothing.
 */
export function gateViolations(rules: readonly GateRule[], active: ExperimentSummary | null, candidate: ExperimentSummary | null): GateViolation[] {
  const violations: GateViolation[] = [];
  if (!candidate || !active) return violations;
  for (const rule of rules) {
    const a = active.scores[rule.score_name]?.mean;
    const c = candidate.scores[rule.score_name]?.mean;
    if (typeof a !== "number") continue;
    if (typeof c !== "number" || a - c > rule.max_drop + 1e-12) {
      violations.push({ score: rule.score_name, active_mean: a, candidate_mean: typeof c === "number" ? c : null, max_drop: rule.max_drop });
    }
  }
  return violations;
}

export const namedExperiment = (e: ExperimentSummary) => `experiment "${e.name}" (${e.id}, made by ${e.created_by ?? "a former user"})`;
export const fmtMean = (n: number) => String(Math.round(n * 10_000) / 10_000);

export interface Force {
  readonly reason: string;
  /** Whether the caller may force (`force_activation`: an admin or the owner). */
  readonly allowed: boolean;
}

/** The reason of a forced change, once checked: 403 when the caller may not force, 422 without a reason. */
export function forcedReason(force: Force, what: string): string {
  if (!force.allowed) throw new AuthError({ code: "forbidden", message: `only an admin or the owner may force ${what} the gate refuses` });
  const reason = force.reason.trim();
  if (!reason || reason.length > MAX_FORCE_REASON || needsRepair(reason)) {
    throw new ValidationError({ field: "reason", message: `a forced change needs a reason (1 to ${MAX_FORCE_REASON} characters)` });
  }
  return reason;
}
