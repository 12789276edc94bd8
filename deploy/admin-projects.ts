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
import { removeMemberNow, setMemberNow } from "../accounts/index.js";
import { createProject, findProjectBySlug, projectsOf, roleIn, allProjects, type Member, type Membership, type Project } from "../stores/accounts/projects.js";
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
  | { member: Member; project: Project; keys: number; invitations_revoked: readonly string[]; warning?: string }
  | { removed: string; project: Project; keys_revoked: readonly string[]; invitations_revoked: readonly string[]; warning?: string };

const notFound = (resource: string, message: string): never => {
  throw new NotFound({ resource, message });
};
const errorText = (err: unknown) => (err as Error)?.message ?? String(err);
/** Where a change is announced when this process has no pub/sub: nowhere, which the command's warning says. */
const unopened: Pick<PubSub, "publish"> = { publish: () => Promise.reject(new Error("pub/sub is not open in this process")) };

const invalid = (field: string, message: string): never => {
  throw new ValidationError({ field, message });
};

async function userByEmail(sql: Sql, email: string): Promise<User> {
  return (await findUserByEmail(sql, email)) ?? notFound("user", `no user with email ${email}; create one with \`runwatch user create\``);
}

async function projectBySlug(sql: Sql, slug: string): Promise<Project> {
  return (await findProjectBySlug(sql, slug)) ?? notFound("project", `no project with the slug ${slug}; \`runwatch project list\` shows them`);
}

/**
 * Runs one project command; `pubsub` (to tell web processes and gateways of a member's new role or removal) is
 * needed by add-member and remove-member.
 */
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
      const set = await setMemberNow(sql, pubsub ?? unopened, project.id, req.email, role, null);
      const warning = set.announceError ? `the web processes were not told (${errorText(set.announceError)}): ${req.email}'s API keys keep their old role for up to 10 s` : undefined;
      return { member: set.member, project, keys: set.keys, invitations_revoked: set.invitationsRevoked, ...(warning ? { warning } : {}) };
    }
    case "project.remove-member": {
      if (!pubsub) throw new AdminError({ tag: "Unavailable", message: "removing a member needs pub/sub, which this process has not opened" });
      const project = await projectBySlug(sql, req.project);
      const removed = await removeMemberNow(sql, pubsub, project.id, req.email, null);
      const warning = removed.announceError
        ? `the gateways and web processes were not told (${errorText(removed.announceError)}): ${req.email}'s open dashboards keep the project's live updates until they reconnect`
        : undefined;
      return { removed: req.email, project, keys_revoked: removed.keysRevoked, invitations_revoked: removed.invitationsRevoked, ...(warning ? { warning } : {}) };
    }
  }
}
