/**
 * What only a project's owner may do (docs/TEAMS.md): rename it, hand it to another member, delete it. A personal
 * project is its user's for good: it can be renamed, never transferred or deleted.
 */
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import type { ClickHouse } from "../../core/ports/clickhouse.js";
import type { Sql } from "../../core/ports/sql.js";
import { addressOf, normalizeEmail } from "./email.js";
import { audit, checkName, findProjectById, type Project } from "./projects.js";

/** The ClickHouse tables whose rows a project's deletion removes: every table with a project_id (project-tables.test.ts). */
export const PROJECT_TABLES = ["agent_events", "agent_runs", "run_costs", "llm_calls", "scores", "run_text", "otel_logs", "agent_metric_hours", "agent_metric_hours_by_dimension", "slo_hours"] as const;

async function existing(sql: Sql, projectId: number): Promise<Project> {
  const project = await findProjectById(sql, projectId);
  if (!project) throw new NotFound({ resource: "project", message: "no such project" });
  return project;
}

export async function renameProject(sql: Sql, projectId: number, name: string, actorId: number | null): Promise<void> {
  const trimmed = checkName(name);
  const before = await existing(sql, projectId);
  await sql.transaction(async (tx) => {
    await tx.query("UPDATE projects SET name = $2 WHERE id = $1", [projectId, trimmed]);
    await audit(tx, projectId, actorId, "project.rename", before.slug, { from: before.name, to: trimmed });
  });
}

/** Makes the member with `email` the owner; the old owner stays an admin. */
export async function transferOwnership(sql: Sql, projectId: number, email: string, actorId: number | null): Promise<void> {
  const project = await existing(sql, projectId);
  if (project.personal) throw new Conflict({ code: "personal_project", message: "a personal project stays its user's", field: "email" });
  if (!normalizeEmail(email ?? "")) throw new ValidationError({ message: "name the member who becomes the owner", field: "email" });
  const address = addressOf(email);
  await sql.transaction(async (tx) => {
    const [to] = await tx.query<{ user_id: unknown; role: string }>(
      `SELECT m.user_id, m.role FROM project_members m JOIN users u ON u.id = m.user_id
       WHERE m.project_id = $1 AND lower(u.email) = lower($2) FOR UPDATE OF m`,
      [projectId, address],
    );
    if (!to) throw new NotFound({ resource: "member", message: `${address} is not a member of this project` });
    if (to.role === "owner") return;
    // One owner per project (a unique index): the old owner steps down first, in the same transaction.
    await tx.query("UPDATE project_members SET role = 'admin' WHERE project_id = $1 AND role = 'owner'", [projectId]);
    await tx.query("UPDATE project_members SET role = 'owner' WHERE project_id = $1 AND user_id = $2", [projectId, to.user_id]);
    await audit(tx, projectId, actorId, "project.transfer", address, { from_role: to.role });
  });
}

/**
 * Deletes a project and everything it holds: its rows in Postgres go with it (foreign keys), its runs, events, LLM
 * calls, scores, cost rows and search text in ClickHouse are deleted here. Members who had it as their current project fall back
 * to their personal one.
 */
export async function deleteProject(ports: { sql: Sql; ch: ClickHouse }, projectId: number): Promise<void> {
  const project = await existing(ports.sql, projectId);
  if (project.personal) throw new Conflict({ code: "personal_project", message: "a personal project is deleted only with its user", field: "confirm" });
  await ports.sql.transaction(async (tx) => {
    await tx.query("DELETE FROM dead_letters WHERE project_id = $1", [projectId]); // not a foreign key (migration 104)
    await tx.query("DELETE FROM projects WHERE id = $1", [projectId]);
  });
  for (const table of PROJECT_TABLES) await ports.ch.exec(`DELETE FROM ${table} WHERE project_id = {pid:UInt64}`, { pid: projectId });
}
