/**
 * The cap on a project's evaluation rules (docs/EVALUATORS.md, Rules): at most MAX_RULES_PER_PROJECT, enabled or not.
 * Each judging rule makes a job per matching run: without a cap one project's rules multiply a single request of
 * runs into thousands of judge calls. The job queue takes projects in turns (jobs.ts claimJobs), so such a backlog
 * delays its own project; the cap bounds the backlog one run can make.
 */
import { ValidationError } from "../../core/errors.js";
import type { Sql } from "../../core/ports/sql.js";

export const MAX_RULES_PER_PROJECT = 50;

/**
 * Runs `insert` (a new rule's INSERT) in a transaction once the project has fewer than MAX_RULES_PER_PROJECT rules;
 * 422 naming the cap otherwise. The project's row lock orders concurrent creations, so none passes a count another
 * is about to change.
 */
export async function insertWithinRuleCap<T>(sql: Sql, projectId: number, insert: (tx: Sql) => Promise<T>): Promise<T> {
  return sql.transaction(async (tx) => {
    await tx.query("SELECT id FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
    const [count] = await tx.query<{ n: number }>("SELECT count(*)::int AS n FROM evaluation_rules WHERE project_id = $1", [projectId]);
    if (Number(count?.n ?? 0) >= MAX_RULES_PER_PROJECT) {
      throw new ValidationError({ message: `a project may have at most ${MAX_RULES_PER_PROJECT} evaluation rules: change or delete one instead of adding another` });
    }
    return insert(tx);
  });
}
