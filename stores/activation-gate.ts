/**
 * The activation gate (docs/EVALUATION.md): an agent's config version is compared, through its latest experiment,
 * with the active version's latest experiment on the same dataset; a rule per score ("correctness may drop by at
 * most 0.05") refuses an activation that breaks it, unless an admin forces it with a reason (the audit log keeps it).
 */
import { AuthError, Conflict, ValidationError } from "../core/errors.js";
import { needsRepair } from "../core/events/storable.js";
import { displayTextProblem } from "../core/display-text.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { Sql } from "../core/ports/sql.js";
import { activateVersion, getAgent } from "./agent-registry.js";
import { audit } from "./accounts/projects.js";
import { summarizeExperiment, type ExperimentSummary } from "./datasets/experiment-results.js";
import { experimentsOfAgent } from "./datasets/experiments.js";
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
  readonly candidate_mean: number;
  readonly max_drop: number;
}

export interface GateCheck {
  readonly agent: string;
  readonly version: number;
  readonly active_version: number | null;
  /** The version's latest experiment, and the active version's latest on the same dataset (null when none). */
  readonly candidate: ExperimentSummary | null;
  readonly active: ExperimentSummary | null;
  readonly rules: readonly GateRule[];
  readonly violations: readonly GateViolation[];
}

export async function gateRules(sql: Sql, agentId: number): Promise<GateRule[]> {
  const rows = await sql.query<{ score_name: string; max_drop: number }>(
    "SELECT score_name, max_drop FROM agent_gate_rules WHERE agent_id = $1 ORDER BY score_name", [agentId],
  );
  return rows.map((r) => ({ score_name: String(r.score_name), max_drop: Number(r.max_drop) }));
}

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

/** What activating `version` of the agent would do to the gate's scores. */
export async function checkGate(sql: Sql, ch: ClickHouse, projectId: number, agentName: string, version: number): Promise<GateCheck> {
  const agent = await getAgent(sql, projectId, agentName);
  const [rules, active, experiments] = await Promise.all([
    gateRules(sql, agent.id),
    sql.query<{ version: number }>("SELECT version FROM agent_configs WHERE agent_id = $1 AND is_active", [agent.id]),
    experimentsOfAgent(sql, projectId, agent.name),
  ]);
  const activeVersion = active[0] ? Number(active[0].version) : null;
  const candidateExperiment = experiments.find((e) => e.config_version === version);
  const activeExperiment = candidateExperiment && activeVersion !== null && activeVersion !== version
    ? experiments.find((e) => e.config_version === activeVersion && e.dataset_id === candidateExperiment.dataset_id)
    : undefined;
  const [candidate, current] = await Promise.all([
    candidateExperiment ? summarizeExperiment(ch, projectId, candidateExperiment) : null,
    activeExperiment ? summarizeExperiment(ch, projectId, activeExperiment) : null,
  ]);
  const violations: GateViolation[] = [];
  if (candidate && current) {
    for (const rule of rules) {
      const a = current.scores[rule.score_name]?.mean;
      const c = candidate.scores[rule.score_name]?.mean;
      if (typeof a === "number" && typeof c === "number" && a - c > rule.max_drop + 1e-12) {
        violations.push({ score: rule.score_name, active_mean: a, candidate_mean: c, max_drop: rule.max_drop });
      }
    }
  }
  return { agent: agent.name, version, active_version: activeVersion, candidate, active: current, rules, violations };
}

const fmt = (n: number) => String(Math.round(n * 10_000) / 10_000);

/** The refusal of an activation that breaks the gate: names each score and both values. */
export function gateRefusal(check: GateCheck): Conflict {
  const what = check.violations.map((v) =>
    `score "${v.score}" mean would drop from ${fmt(v.active_mean)} (active version ${check.active_version}, experiment "${check.active?.name}") ` +
    `to ${fmt(v.candidate_mean)} (version ${check.version}, experiment "${check.candidate?.name}"); the gate allows a drop of at most ${fmt(v.max_drop)}`);
  return new Conflict({ code: "gate_refused", field: "force", message: `Version ${check.version} of ${check.agent} was not activated: ${what.join("; ")}. An admin may force it with a reason.` });
}

export interface Force {
  readonly reason: string;
  /** Whether the caller may force (`force_activation`: an admin or the owner). */
  readonly allowed: boolean;
}

export type GateOutcome =
  | { readonly activated: true; readonly forced: boolean; readonly check: GateCheck }
  | { readonly activated: false; readonly check: GateCheck; readonly refusal: Conflict };

/**
 * Activates `version` unless the gate refuses it (activated: false, with the refusal naming each score and both
 * values). `force` overrides a refusal when allowed, with a reason that goes into the project's audit log.
 */
export async function activateThroughGate(
  sql: Sql, ch: ClickHouse, projectId: number, agentName: string, version: number, actorId: number | null, force?: Force,
): Promise<GateOutcome> {
  const check = await checkGate(sql, ch, projectId, agentName, version);
  if (check.violations.length === 0) {
    await activateVersion(sql, projectId, agentName, version);
    return { activated: true, forced: false, check };
  }
  if (!force) return { activated: false, check, refusal: gateRefusal(check) };
  if (!force.allowed) throw new AuthError({ code: "forbidden", message: "only an admin or the owner may force an activation the gate refuses" });
  const reason = force.reason.trim();
  if (!reason || reason.length > MAX_FORCE_REASON || needsRepair(reason)) {
    throw new ValidationError({ field: "reason", message: `a forced activation needs a reason (1 to ${MAX_FORCE_REASON} characters)` });
  }
  await activateVersion(sql, projectId, agentName, version);
  await audit(sql, projectId, actorId, "agent.activation_forced", `${check.agent} v${version}`, { reason, violations: check.violations });
  return { activated: true, forced: true, check };
}
