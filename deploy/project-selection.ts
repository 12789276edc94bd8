/** How the operator's CLI commands name a project: `--project <slug>`, or `--email E` for E's personal project. */
import type { Sql } from "../core/ports/sql.js";
import { findProjectBySlug, projectsOf } from "../stores/accounts/projects.js";
import { findUserByEmail } from "../stores/accounts/users.js";
import { AdminError } from "./admin-error.js";

/**
 * Which project a command acts on: `project` (its slug), or `email`'s personal project; neither means every project.
 */
export interface ProjectSelection {
  project?: string;
  email?: string;
}

export /** The id of the project a selection names; undefined when it names none (every project). */
async function selectedProject(sql: Sql, sel: ProjectSelection): Promise<number | undefined> {
  if (sel.project !== undefined && sel.email !== undefined) {
    throw new AdminError({ tag: "ValidationError", message: "name one project: --project P, or --email E for E's personal project", field: "project" });
  }
  if (sel.project !== undefined) {
    const project = await findProjectBySlug(sql, sel.project);
    if (!project) throw new AdminError({ tag: "NotFound", message: `no project with the slug ${sel.project}; \`runwatch project list\` shows them`, field: "project" });
    return project.id;
  }
  if (sel.email === undefined) return undefined;
  const user = await findUserByEmail(sql, sel.email);
  if (!user) throw new AdminError({ tag: "NotFound", message: `no user with email ${sel.email}`, field: "email" });
  const personal = (await projectsOf(sql, user.id)).find((p) => p.personal);
  if (!personal) throw new AdminError({ tag: "NotFound", message: `${sel.email} has no personal project: name one with --project`, field: "email" });
  return personal.id;
}

