/**
 * The gate on a prompt's `production` label (docs/PROMPTS.md, The gate): moving it to a version compares that
 * version's latest experiment with the latest experiment of the version `production` points at now, on the same
 * dataset, against the prompt's rules — the judgement config activations use (stores/experiment-gate.ts): the same
 * trusted experiments and counted scores, the same refusal, the same force by an admin with a reason. Other labels
 * move freely. With nothing to compare (no rule, no experiment of the version, none of production's on its dataset,
 * no production yet) the move goes through, as an activation does.
 */
import { Conflict, ValidationError } from "../core/errors.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import type { ExperimentSummary } from "../stores/datasets/experiment-results.js";
import { experimentsOfPrompt } from "../stores/datasets/experiments.js";
import {
  EXPERIMENT_MAKERS, fmtMean, forcedReason, gateSummary, gateViolations, namedExperiment, type Force, type GateRule, type GateViolation,
} from "../stores/experiment-gate.js";
import { promptGateRules } from "../stores/prompt-gate-rules.js";
import { checkLabel, checkPromptName } from "../stores/prompt-input.js";
import { listPrompts, movePromptLabel } from "../stores/prompts.js";

/** The label the gate guards. */
export const GATED_LABEL = "production";

export interface PromptGateCheck {
  readonly prompt: string;
  readonly version: number;
  /** The version `production` points at now (null: none). */
  readonly production_version: number | null;
  readonly candidate: ExperimentSummary | null;
  readonly active: ExperimentSummary | null;
  readonly rules: readonly GateRule[];
  readonly violations: readonly GateViolation[];
  readonly basis: string;
}

function basisOf(version: number, production: number | null, candidate: ExperimentSummary | null, active: ExperimentSummary | null): string {
  if (!candidate) return `version ${version} has no experiment made by a member, an admin or the owner: nothing to compare`;
  const mine = `version ${version}'s ${namedExperiment(candidate)} on dataset "${candidate.dataset}"`;
  if (production === null) return `${mine}; the prompt has no production version: nothing to compare`;
  if (production === version) return `${mine}; version ${version} is production already: nothing to compare`;
  if (!active) return `${mine}; production version ${production} has no experiment made by a member, an admin or the owner on that dataset: nothing to compare`;
  return `${mine} against production version ${production}'s ${namedExperiment(active)}, with the scores of evaluators, reviewers and members' read+ingest keys`;
}

/** What pointing `production` at `version` of the prompt would do to the gate's scores. */
export async function checkPromptGate(sql: Sql, ch: ClickHouse, projectId: number, name: string, version: number): Promise<PromptGateCheck> {
  const checked = checkPromptName(name);
  const [rules, prompts, experiments] = await Promise.all([
    promptGateRules(sql, projectId, checked), // 404 for no such prompt
    listPrompts(sql, projectId),
    experimentsOfPrompt(sql, projectId, checked, { madeBy: EXPERIMENT_MAKERS }),
  ]);
  const summary = prompts.find((p) => p.name === checked)!;
  if (version > summary.latest_version) {
    throw new ValidationError({ field: "version", message: `prompt ${JSON.stringify(checked)} has no version ${version} (its newest is ${summary.latest_version})` });
  }
  const production = summary.labels[GATED_LABEL] ?? null;
  const candidateExperiment = experiments.find((e) => e.prompt_version === version);
  const activeExperiment = candidateExperiment && production !== null && production !== version
    ? experiments.find((e) => e.prompt_version === production && e.dataset_id === candidateExperiment.dataset_id)
    : undefined;
  const [candidate, active] = await Promise.all([
    candidateExperiment ? gateSummary(ch, projectId, candidateExperiment) : null,
    activeExperiment ? gateSummary(ch, projectId, activeExperiment) : null,
  ]);
  return {
    prompt: checked, version, production_version: production, candidate, active, rules,
    violations: gateViolations(rules, active, candidate), basis: basisOf(version, production, candidate, active),
  };
}

/** The refusal of a move that breaks the gate: names each score, both values and both experiments. */
export function promptGateRefusal(check: PromptGateCheck): Conflict {
  const active = (v: GateViolation) => `${fmtMean(v.active_mean)} (production version ${check.production_version}, experiment "${check.active?.name}")`;
  const what = check.violations.map((v) => v.candidate_mean === null
    ? `score "${v.score}" has no counted value in version ${check.version}'s experiment "${check.candidate?.name}" to hold against ${active(v)} ` +
      "(the gate counts the scores of evaluators, reviewers and members' read+ingest keys)"
    : `score "${v.score}" mean would drop from ${active(v)} ` +
      `to ${fmtMean(v.candidate_mean)} (version ${check.version}, experiment "${check.candidate?.name}"); the gate allows a drop of at most ${fmtMean(v.max_drop)}`);
  return new Conflict({ code: "gate_refused", field: "force", message: `${GATED_LABEL} of ${check.prompt} was not moved to version ${check.version}: ${what.join("; ")}. An admin may force it with a reason.` });
}

/** What the audit log keeps of a gated move: the experiments it was judged on. */
const auditOf = (check: PromptGateCheck) => ({
  candidate_experiment: check.candidate ? { id: check.candidate.id, name: check.candidate.name } : null,
  active_experiment: check.active ? { id: check.active.id, name: check.active.name } : null,
  basis: check.basis,
});

export type LabelOutcome =
  | { readonly moved: true; readonly forced: boolean; readonly label: string; readonly version: number; readonly previous: number | null; readonly check: PromptGateCheck | null }
  | { readonly moved: false; readonly check: PromptGateCheck; readonly refusal: Conflict };

/**
 * Points `label` at `version`. `production` goes through the gate: refused (moved: false, with the refusal) when the
 * version's experiment breaks a rule, unless `force` is allowed and has a reason. Audited as `prompt.label`, or
 * `prompt.label_forced` with the reason and the violations; a gated move names the experiments it was judged on.
 */
export async function labelThroughGate(
  sql: Sql, ch: ClickHouse, projectId: number, userId: number | null, name: string, label: unknown, version: number, force?: Force,
): Promise<LabelOutcome> {
  const checkedLabel = checkLabel(label);
  const checkedName = checkPromptName(name);
  if (checkedLabel !== GATED_LABEL) return { moved: true, forced: false, check: null, ...(await movePromptLabel(sql, projectId, userId, checkedName, checkedLabel, version)) };
  const check = await checkPromptGate(sql, ch, projectId, checkedName, version);
  if (check.violations.length === 0) {
    const moved = await movePromptLabel(sql, projectId, userId, checkedName, checkedLabel, version, { details: auditOf(check) });
    return { moved: true, forced: false, check, ...moved };
  }
  if (!force) return { moved: false, check, refusal: promptGateRefusal(check) };
  const reason = forcedReason(force, `a move of ${GATED_LABEL}`);
  const moved = await movePromptLabel(sql, projectId, userId, checkedName, checkedLabel, version, {
    action: "prompt.label_forced", details: { reason, violations: check.violations, ...auditOf(check) },
  });
  return { moved: true, forced: true, check, ...moved };
}
