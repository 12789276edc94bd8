/**
 * The CLI's project and key commands (deploy/cli.ts → deploy/admin.ts), run by the instance's operator. `key create`
 * acts as the user it names, so that user must be allowed to manage the project's keys (core/access/roles.ts);
 * the project commands are the operator's own (their audit entries have no actor).
 */
import { can, isKeyScope, isRole, type KeyScope, type Role } from "../core/access/roles.js";
import { AuthError, NotFound, ValidationError } from "../core/errors.js";
import type { PubSub } from "../core/ports/pubsub.js";
import { AdminError } from "./admin-error.js";
import type { Sql } from "../core/ports/sql.js";
import { createApiKey, parseExpiry, type ApiKeyInfo } from "../stores/accounts/api-keys.js";
import { removeMemberNow } from "../stores/accounts/member-removal.js";
import { createProject, findProjectBySlug, projectsOf, roleIn, setMember, allProjects, type Member, type Membership, type Project } from "../stores/accounts/projects.js";
import { findUserByEmail, type User } from "../stores/accounts/users.js";

export type ProjectAdminRequest =
  | { cmd: "key.create"; email: string; name: string; expires?: string; project?: string; scope?: string }
  | { cmd: "project.create"; email: string; name: string }
  | { cmd: "project.list"; email?: string }
  | { cmd: "project.add-member"; project: string; email: string; role?: string }
  | { cmd: "project.remove-member"; project: string; email: string };

export type ProjectAdminResult =
  | { user: User; key: string; info: ApiKeyInfo; project: Project }
  | { project: Project }
  | { projects: (Project & { role?: Role; members?: number })[] }
  | { member: Member; project: Project }
  | { removed: string; project: Project; warning?: string };

const notFound = (resource: string, message: string): never => {
  throw new NotFound({ resource, message });
};
const invalid = (field: string, message: string): never => {
  throw new ValidationError({ field, message });
};

async function userByEmail(sql: Sql, email: string): Promise<User> {
  return (await findUserByEmail(sql, email)) ?? notFound("user", `no user with email ${email}; create one with \`runwatch user create\``);
}

async function projectBySlug(sql: Sql, slug: string): Promise<Project> {
  return (await findProjectBySlug(sql, slug)) ?? notFound("project", `no project with the slug ${slug}; \`runwatch project list\` shows them`);
}

/** Runs one project command; `pubsub` (to tell gateways of a removed member) is needed by remove-member only. */
export async function runProjectAdmin(sql: Sql, pubsub: Pick<PubSub, "publish"> | undefined, req: ProjectAdminRequest): Promise<ProjectAdminResult> {
  switch (req.cmd) {
    case "key.create": {
      const user = await userByEmail(sql, req.email);
      const project = req.project === undefined ? (await projectsOf(sql, user.id)).find((p) => p.personal) : await projectBySlug(sql, req.project);
      if (!project) return notFound("project", `${user.email} has no personal project: name one with --project`);
      const role = await roleIn(sql, project.id, user.id);
      if (!role || !can(role, "manage_keys")) {
        const why = role ? `their role is ${role}; it takes admin or owner` : "they are not a member";
        throw new AuthError({ code: "forbidden", message: `${user.email} may not create keys in ${project.slug}: ${why}` });
      }
      const scope: KeyScope = req.scope === undefined ? "read+ingest" : isKeyScope(req.scope) ? req.scope : invalid("scope", "--scope takes ingest or read+ingest");
      const { key, info } = await createApiKey(sql, user.id, req.name, parseExpiry(req.expires), { projectId: project.id, scope });
      return { user, key, info, project };
    }
    case "project.create": {
      const user = await userByEmail(sql, req.email);
      return { project: await createProject(sql, user.id, req.name) };
    }
    case "project.list": {
      if (req.email === undefined) return { projects: await allProjects(sql) };
      const user = await userByEmail(sql, req.email);
      return { projects: await projectsOf(sql, user.id) as Membership[] };
    }
    case "project.add-member": {
      const project = await projectBySlug(sql, req.project);
      const role = req.role ?? "member";
      if (!isRole(role)) return invalid("role", "--role takes viewer, member or admin");
      return { member: await setMember(sql, project.id, req.email, role, null), project };
    }
    case "project.remove-member": {
      if (!pubsub) throw new AdminError({ tag: "Unavailable", message: "removing a member needs pub/sub, which this process has not opened" });
      const project = await projectBySlug(sql, req.project);
      const { announceError } = await removeMemberNow(sql, pubsub, project.id, req.email, null);
      const warning = announceError ? `the gateways were not told (${(announceError as Error).message ?? announceError}): ${req.email}'s open dashboards keep the project's live updates until they reconnect` : undefined;
      return { removed: req.email, project, ...(warning ? { warning } : {}) };
    }
  }
}
