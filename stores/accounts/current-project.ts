/**
 * The project the dashboard shows a user: the one they last switched to while they are still its member, else their
 * personal project. Resolved on every request, so a member removed from a project loses it at their next request.
 */
import type { Sql } from "../../core/ports/sql.js";
import { membershipsOf, type Membership } from "./projects.js";

/** The user's projects (personal first, then by name) and the current one among them; undefined without any. */
export async function currentProject(sql: Sql, userId: number): Promise<{ current: Membership; all: Membership[] } | undefined> {
  const { all, chosen } = await membershipsOf(sql, userId);
  return all.length === 0 ? undefined : { current: chosen ?? all[0]!, all };
}

/** Makes the member's project with `slug` their current one; undefined (and nothing changed) when they are not a member. */
export async function switchProject(sql: Sql, userId: number, slug: string): Promise<Membership | undefined> {
  const target = (await currentProject(sql, userId))?.all.find((p) => p.slug === slug.trim().toLowerCase());
  if (!target) return undefined;
  await rememberProject(sql, userId, target.id);
  return target;
}

/** Makes the member's project `projectId` the one they come back to (a project page they opened names it). */
export async function rememberProject(sql: Sql, userId: number, projectId: number): Promise<void> {
  await sql.query("UPDATE users SET current_project_id = $2 WHERE id = $1", [userId, projectId]);
}
