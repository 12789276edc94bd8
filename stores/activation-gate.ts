/**
 * The activation gate (docs/EVALUATION.md): an agent's config version is compared, through its latest experiment,
 * with the active version's latest experiment on the same dataset; a rule per score ("correctness may drop by at
 * most 0.05") refuses an activation that breaks it, unless an admin forces it with a reason. Every activation is in
 * the audit log, with the experiments it was judged on.
 *
 * What the gate trusts: experiments made by someone allowed to make them (a member, an admin or the owner, now), and
 * their scores from the project's evaluators, reviewers and members' read+ingest keys (datasets/gate-scores.ts) —
 * never a viewer's experiment or the scores an ingest key sends. A score a rule names that the active version's
 * experiment has and the version's lacks is a refusal too: a version cannot pass by having no counted score.
 */
import { Conflict } from "../core/errors.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { activateVersion, getAgent } from "./agent-registry.js";
import { audit } from "./accounts/projects.js";
import type { ExperimentSummary } from "./datasets/experiment-results.js";
import { experimentsOfAgent } from "./datasets/experiments.js";
import {
  EXPERIMENT_MAKERS, fmtMean as fmt, forcedReason, gateSummary, gateViolations, MAX_GATE_RULES, namedExperiment as named,
  type Force, type GateRule, type GateViolation,
} from "./experiment-gate.js";

export { EXPERIMENT_MAKERS, MAX_FORCE_REASON, MAX_GATE_RULES, parseGateRule, type Force, type GateRule, type GateViolation } from "./experiment-gate.js";

export interface GateCheck {
  readonly agent: string;
  readonly version: number;
  readonly active_version: number | null;
  /**
   * The version's latest experiment, and the active version's latest on the same dataset (null when none), each made
   * by a member or above; their `scores` are the counted ones (datasets/gate-scores.ts).
   */
  readonly candidate: ExperimentSummary | null;
  readonly active: ExperimentSummary | null;
  readonly rules: readonly GateRule[];
  readonly violations: readonly GateViolation[];
  /** What the check was made on, in words: which experiments, or why there was nothing to compare. */
  readonly basis: string;
}

export async function gateRules(sql: Sql, agentId: number): Promise<GateRule[]> {
  const rows = await sql.query<{ score_name: string; max_drop: number }>(
    "SELECT score_name, max_drop FROM agent_gate_rules WHERE agent_id = $1 ORDER BY score_name", [agentId],
  );
  return rows.map((r) => ({ score_name: String(r.score_name), max_drop: Number(r.max_drop) }));
}

/** Adds or changes the agent's rule for `rule.score_name`. */
export async function setGateRule(sql: Sql, projectId: number, agentName: string, rule: GateRule, userId: number | null): Promise<void> {
  const agent = await getAgent(sql, projectId, agentName);
  const existing = await gateRules(sql, agent.id);
  if (existing.length >= MAX_GATE_RULES && !existing.some((r) => r.score_name === rule.score_name)) {
    throw new Conflict({ code: "limit", field: "score_name", message: `an agent may have at most ${MAX_GATE_RULES} gate rules` });
  }
  await sql.query(
    `INSERT INTO agent_gate_rules (agent_id, score_name, max_drop, updated_by) VALUES ($1, $2, $3, $4)
     ON CONFLICT (agent_id, score_name) DO UPDATE SET max_drop = EXCLUDED.max_drop, updated_by = EXCLUDED.updated_by, updated_at = now()`,
    [agent.id, rule.score_name, rule.max_drop, userId],
  );
}

export async function removeGateRule(sql: Sql, projectId: number, agentName: string, scoreName: string): Promise<void> {
  const agent = await getAgent(sql, projectId, agentName);
  await sql.query("DELETE FROM agent_gate_rules WHERE agent_id = $1 AND score_name = $2", [agent.id, scoreName]);
}

function basisOf(version: number, activeVersion: number | null, candidate: ExperimentSummary | null, active: ExperimentSummary | null): string {
  if (!candidate) return `version ${version} has no experiment made by a member, an admin or the owner: nothing to compare`;
  const mine = `version ${version}'s ${named(candidate)} on dataset "${candidate.dataset}"`;
  if (activeVersion === null) return `${mine}; the agent has no active version: nothing to compare`;
  if (activeVersion === version) return `${mine}; version ${version} is the active one: nothing to compare`;
  if (!active) return `${mine}; active version ${activeVersion} has no experiment made by a member, an admin or the owner on that dataset: nothing to compare`;
  return `${mine} against active version ${activeVersion}'s ${named(active)}, with the scores of evaluators, reviewers and members' read+ingest keys`;
}

/** What activating `version` of the agent would do to the gate's scores. */
export async function checkGate(sql: Sql, ch: ClickHouse, projectId: number, agentName: string, version: number): Promise<GateCheck> {
  const agent = await getAgent(sql, projectId, agentName);
  const [rules, active, experiments] = await Promise.all([
    gateRules(sql, agent.id),
    sql.query<{ version: number }>("SELECT version FROM agent_configs WHERE agent_id = $1 AND is_active", [agent.id]),
    experimentsOfAgent(sql, projectId, agent.name, { madeBy: EXPERIMENT_MAKERS }),
  ]);
  const activeVersion = active[0] ? Number(active[0].version) : null;
  const candidateExperiment = experiments.find((e) => e.config_version === version);
  const activeExperiment = candidateExperiment && activeVersion !== null && activeVersion !== version
    ? experiments.find((e) => e.config_version === activeVersion && e.dataset_id === candidateExperiment.dataset_id)
    : undefined;
  const [candidate, current] = await Promise.all([
    candidateExperiment ? gateSummary(ch, projectId, candidateExperiment) : null,
    activeExperiment ? gateSummary(ch, projectId, activeExperiment) : null,
  ]);
  const violations = gateViolations(rules, current, candidate);
  return { agent: agent.name, version, active_version: activeVersion, candidate, active: current, rules, violations, basis: basisOf(version, activeVersion, candidate, current) };
}

/** The refusal of an activation that breaks the gate: names each score and both values. */
export function gateRefusal(check: GateCheck): Conflict {
  const active = (v: GateViolation) => `${fmt(v.active_mean)} (active version ${check.active_version}, experiment "${check.active?.name}")`;
  const what = check.violations.map((v) => v.candidate_mean === null
    ? `score "${v.score}" has no counted value in version ${check.version}'s experiment "${check.candidate?.name}" to hold against ${active(v)} ` +
      "(the gate counts the scores of evaluators, reviewers and members' read+ingest keys)"
    : `score "${v.score}" mean would drop from ${active(v)} ` +
      `to ${fmt(v.candidate_mean)} (version ${check.version}, experiment "${check.candidate?.name}"); the gate allows a drop of at most ${fmt(v.max_drop)}`);
  return new Conflict({ code: "gate_refused", field: "force", message: `Version ${check.version} of ${check.agent} was not activated: ${what.join("; ")}. An admin may force it with a reason.` });
}

/** What the audit log keeps of an activation: the version it replaced and the experiments it was judged on. */
const auditOf = (check: GateCheck) => ({
  previous_version: check.active_version,
  candidate_experiment: check.candidate ? { id: check.candidate.id, name: check.candidate.name } : null,
  active_experiment: check.active ? { id: check.active.id, name: check.active.name } : null,
  basis: check.basis,
});

export type GateOutcome =
  | { readonly activated: true; readonly forced: boolean; readonly check: GateCheck }
  | { readonly activated: false; readonly check: GateCheck; readonly refusal: Conflict };

/**
 * Activates `version` unless the gate refuses it (activated: false, with the refusal naming each score and both
 * values). `force` overrides a refusal when allowed, with a reason. Each activation goes into the project's audit
 * log (`agent.activated`, `agent.activation_forced` with the reason) naming the experiments it was judged on.
 */
export async function activateThroughGate(
  sql: Sql, ch: ClickHouse, projectId: number, agentName: string, version: number, actorId: number | null, force?: Force,
): Promise<GateOutcome> {
  const check = await checkGate(sql, ch, projectId, agentName, version);
  if (check.violations.length === 0) {
    await activateVersion(sql, projectId, agentName, version);
    await audit(sql, projectId, actorId, "agent.activated", `${check.agent} v${version}`, auditOf(check));
    return { activated: true, forced: false, check };
  }
  if (!force) return { activated: false, check, refusal: gateRefusal(check) };
  const reason = forcedReason(force, "an activation");
  await activateVersion(sql, projectId, agentName, version);
  await audit(sql, projectId, actorId, "agent.activation_forced", `${check.agent} v${version}`, { reason, violations: check.violations, ...auditOf(check) });
  return { activated: true, forced: true, check };
}
