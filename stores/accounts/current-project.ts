/**
 * The project the dashboard shows a user: the one they last switched to while they are still its member, else their
 * personal project. Resolved on every request, so a member removed from a project loses it at their next request.
 */
import type { Role } from "../../core/access/roles.js";
import type { Sql } from "../../core/ports/sql.js";
import { PROJECT_COLUMNS, toProject, type Membership, type ProjectRow } from "./projects.js";

/** The user's projects (personal first, then by name) and the current one among them; undefined without any. */
export async function currentProject(sql: Sql, userId: number): Promise<{ current: Membership; all: Membership[] } | undefined> {
  const rows = await sql.query<ProjectRow & { role: string; chosen: unknown }>(
    `SELECT ${PROJECT_COLUMNS}, m.role, (p.id = u.current_project_id) AS chosen
       FROM users u
       JOIN project_members m ON m.user_id = u.id
       JOIN projects p ON p.id = m.project_id
      WHERE u.id = $1
      ORDER BY (p.personal_of = u.id) IS NOT TRUE, lower(p.name), p.id`,
    [userId],
  );
  if (rows.length === 0) return undefined;
  const all = rows.map((r) => ({ ...toProject(r), role: r.role as Role }));
  const chosen = rows.findIndex((r) => r.chosen === true);
  return { current: all[chosen >= 0 ? chosen : 0]!, all };
}

/** Makes the member's project with `slug` their current one; undefined (and nothing changed) when they are not a member. */
export async function switchProject(sql: Sql, userId: number, slug: string): Promise<Membership | undefined> {
  const target = (await currentProject(sql, userId))?.all.find((p) => p.slug === slug.trim().toLowerCase());
  if (!target) return undefined;
  await sql.query("UPDATE users SET current_project_id = $2 WHERE id = $1", [userId, target.id]);
  return target;
}
