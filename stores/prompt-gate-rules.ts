/**
 * A prompt's gate rules (Postgres migration 162; docs/PROMPTS.md, The gate): "score `correctness` mean may drop by at
 * most 0.05" when its `production` label moves, in the form an agent's rules take (experiment-gate.ts).
 */
import { Conflict, NotFound } from "../core/errors.js";
import type { Sql } from "../core/ports/sql.js";
import { audit } from "./accounts/projects.js";
import { MAX_GATE_RULES, type GateRule } from "./experiment-gate.js";

async function promptId(sql: Sql, projectId: number, name: string): Promise<number> {
  const [row] = await sql.query<{ id: number }>("SELECT id FROM prompts WHERE project_id = $1 AND name = $2", [projectId, name]);
  if (!row) throw new NotFound({ resource: "prompt", message: `no prompt named ${JSON.stringify(name)} in this project` });
  return Number(row.id);
}

export async function promptGateRules(sql: Sql, projectId: number, name: string): Promise<GateRule[]> {
  const rows = await sql.query<{ score_name: string; max_drop: number }>(
    "SELECT score_name, max_drop FROM prompt_gate_rules WHERE prompt_id = $1 ORDER BY score_name", [await promptId(sql, projectId, name)],
  );
  return rows.map((r) => ({ score_name: String(r.score_name), max_drop: Number(r.max_drop) }));
}

/** Adds or changes the prompt's rule for `rule.score_name`; audited as `prompt.gate_rule`. */
export async function setPromptGateRule(sql: Sql, projectId: number, name: string, rule: GateRule, userId: number | null): Promise<void> {
  await sql.transaction(async (tx) => {
    const id = await promptId(tx, projectId, name);
    const [n] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM prompt_gate_rules WHERE prompt_id = $1 AND score_name <> $2", [id, rule.score_name]);
    if (Number(n?.n ?? 0) >= MAX_GATE_RULES) {
      throw new Conflict({ code: "limit", field: "score_name", message: `a prompt may have at most ${MAX_GATE_RULES} gate rules` });
    }
    await tx.query(
      `INSERT INTO prompt_gate_rules (prompt_id, score_name, max_drop, updated_by) VALUES ($1, $2, $3, $4)
       ON CONFLICT (prompt_id, score_name) DO UPDATE SET max_drop = EXCLUDED.max_drop, updated_by = EXCLUDED.updated_by, updated_at = now()`,
      [id, rule.score_name, rule.max_drop, userId],
    );
    await audit(tx, projectId, userId, "prompt.gate_rule", `${name} ${rule.score_name}`, { prompt: name, ...rule });
  });
}

/** Removes the prompt's rule for `scoreName`; 404 when it has none. */
export async function removePromptGateRule(sql: Sql, projectId: number, name: string, scoreName: string, userId: number | null): Promise<void> {
  await sql.transaction(async (tx) => {
    const gone = await tx.query("DELETE FROM prompt_gate_rules WHERE prompt_id = $1 AND score_name = $2 RETURNING score_name", [await promptId(tx, projectId, name), scoreName]);
    if (!gone.length) throw new NotFound({ resource: "gate_rule", message: `prompt ${JSON.stringify(name)} has no gate rule on ${JSON.stringify(scoreName)}` });
    await audit(tx, projectId, userId, "prompt.gate_rule_removed", `${name} ${scoreName}`, { prompt: name, score_name: scoreName });
  });
}
