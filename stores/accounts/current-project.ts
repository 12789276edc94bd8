/**
 * The project the dashboard shows a user: the one they last switched to while they are still its member, else their
 * personal project. Resolved on every request, so a member removed from a project loses it at their next request.
 */
import type { Role } from "../../core/access/roles.js";
import type { Sql } from "../../core/ports/sql.js";
import { PROJECT_COLUMNS, projectsOf, toProject, type Membership, type ProjectRow } from "./projects.js";

/** The user's current project with their role in it; undefined only for a user who is a member of no project. */
export async function currentProject(sql: Sql, userId: number): Promise<Membership | undefined> {
  const rows = await sql.query<ProjectRow & { role: string }>(
    `SELECT ${PROJECT_COLUMNS}, m.role
       FROM users u
       JOIN project_members m ON m.user_id = u.id
       JOIN projects p ON p.id = m.project_id
      WHERE u.id = $1
      ORDER BY (p.id = u.current_project_id) DESC, (p.personal_of = u.id) IS NOT TRUE, p.id
      LIMIT 1`,
    [userId],
  );
  return rows[0] ? { ...toProject(rows[0]), role: rows[0].role as Role } : undefined;
}

/** Makes the member's project with `slug` their current one; undefined (and nothing changed) when they are not a member. */
export async function switchProject(sql: Sql, userId: number, slug: string): Promise<Membership | undefined> {
  const target = (await projectsOf(sql, userId)).find((p) => p.slug === slug.trim().toLowerCase());
  if (!target) return undefined;
  await sql.query("UPDATE users SET current_project_id = $2 WHERE id = $1", [userId, target.id]);
  return target;
}
