/**
 * The projects repository: projects, their members and roles, and the audit log of what was done to them
 * (docs/TEAMS.md). A user's personal project has the user's id (core/postgres/migrations/100_projects.sql).
 */
import { Conflict, NotFound, ValidationError } from "../../core/errors.js";
import { isRole, type Role } from "../../core/access/roles.js";
import { displayTextProblem } from "../../core/display-text.js";
import type { Sql } from "../../core/ports/sql.js";
import { addressOf } from "./email.js";

export interface Project {
  readonly id: number;
  readonly slug: string;
  readonly name: string;
  /** Whether it is its owner's personal project (made at registration). */
  readonly personal: boolean;
  readonly created_at: string;
}

/** A project as one of its members sees it. */
export interface Membership extends Project {
  readonly role: Role;
}

export interface Member {
  readonly user_id: number;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  readonly added_at: string;
}

export const MAX_PROJECT_NAME = 100;

type ProjectRow = { id: unknown; slug: unknown; name: unknown; personal_of: unknown; created_at: unknown };
const toProject = (r: ProjectRow): Project => ({
  id: Number(r.id),
  slug: String(r.slug),
  name: String(r.name),
  personal: r.personal_of !== null && r.personal_of !== undefined,
  created_at: new Date(r.created_at as string).toISOString(),
});
const PROJECT_COLUMNS = "p.id, p.slug, p.name, p.personal_of, p.created_at";

/** A slug's stem from a name: lower-case letters and digits joined by single dashes, at most 40 characters. */
export function slugStem(name: string): string {
  const stem = name.normalize("NFKD").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "");
  return stem === "" ? "project" : stem;
}

export function checkName(name: string): string {
  const trimmed = (name ?? "").trim();
  if (!trimmed) throw new ValidationError({ message: "the project needs a name", field: "name" });
  if (trimmed.length > MAX_PROJECT_NAME) throw new ValidationError({ message: `the name is longer than ${MAX_PROJECT_NAME} characters`, field: "name" });
  const problem = displayTextProblem(trimmed);
  if (problem) throw new ValidationError({ message: `the name ${problem}`, field: "name" });
  return trimmed;
}

/** Inserts a project under the first free slug of `stem`, `stem-2`, `stem-3`, … (`id` given: a personal project). */
async function insertProject(tx: Sql, stem: string, name: string, personalOf?: number): Promise<Project> {
  for (let n = 1; ; n++) {
    const slug = n === 1 ? stem : `${stem}-${n}`;
    const rows = await tx.query<ProjectRow>(
      `INSERT INTO projects (id, slug, name, personal_of) VALUES (coalesce($1, nextval('account_ids')), $2, $3, $1)
       ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name, personal_of, created_at`,
      [personalOf ?? null, slug, name],
    );
    if (rows[0]) return toProject(rows[0]);
  }
}

/** Appends to a project's audit log. */
export async function audit(sql: Sql, projectId: number, actorId: number | null, action: string, target = "", details: Record<string, unknown> = {}): Promise<void> {
  await sql.query("INSERT INTO project_audit_log (project_id, actor_id, action, target, details) VALUES ($1, $2, $3, $4, $5)", [
    projectId,
    actorId,
    action,
    target,
    JSON.stringify(details),
  ]);
}

/** The personal project of a user just inserted (inside the transaction that inserted them): it has their id. */
export async function createPersonalProject(tx: Sql, user: { id: number; name: string; email: string }): Promise<Project> {
  const project = await insertProject(tx, slugStem(user.email.split("@")[0]!), `${user.name.slice(0, 88)}'s project`, user.id);
  await tx.query("INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'owner')", [project.id, user.id]);
  await audit(tx, project.id, user.id, "project.create", project.slug, { personal: true });
  return project;
}

/** Creates a project owned by `ownerId`. */
export async function createProject(sql: Sql, ownerId: number, name: string): Promise<Project> {
  const trimmed = checkName(name);
  return sql.transaction(async (tx) => {
    const project = await insertProject(tx, slugStem(trimmed), trimmed);
    await tx.query("INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, 'owner')", [project.id, ownerId]);
    await audit(tx, project.id, ownerId, "project.create", project.slug);
    return project;
  });
}

export async function findProjectBySlug(sql: Sql, slug: string): Promise<Project | undefined> {
  const rows = await sql.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.slug = $1`, [slug.trim().toLowerCase()]);
  return rows[0] ? toProject(rows[0]) : undefined;
}

export async function findProjectById(sql: Sql, id: number): Promise<Project | undefined> {
  const rows = await sql.query<ProjectRow>(`SELECT ${PROJECT_COLUMNS} FROM projects p WHERE p.id = $1`, [id]);
  return rows[0] ? toProject(rows[0]) : undefined;
}

/**
 * The projects a user is a member of, their personal project first, then by name, and which of them they last
 * switched to in the dashboard (users.current_project_id; undefined when none of them).
 */
export async function membershipsOf(sql: Sql, userId: number): Promise<{ all: Membership[]; chosen: Membership | undefined }> {
  const rows = await sql.query<ProjectRow & { role: string; chosen: unknown }>(
    `SELECT ${PROJECT_COLUMNS}, m.role, (p.id = u.current_project_id) AS chosen
       FROM users u
       JOIN project_members m ON m.user_id = u.id
       JOIN projects p ON p.id = m.project_id
      WHERE u.id = $1
      ORDER BY (p.personal_of = u.id) IS NOT TRUE, lower(p.name), p.id`,
    [userId],
  );
  const all = rows.map((r) => ({ ...toProject(r), role: r.role as Role }));
  return { all, chosen: all[rows.findIndex((r) => r.chosen === true)] };
}

/** The projects a user is a member of, their personal project first, then by name. */
export const projectsOf = async (sql: Sql, userId: number): Promise<Membership[]> => (await membershipsOf(sql, userId)).all;

/** Every project on the instance (the instance admin's view), newest first. */
export async function allProjects(sql: Sql): Promise<(Project & { members: number })[]> {
  const rows = await sql.query<ProjectRow & { members: unknown }>(
    `SELECT ${PROJECT_COLUMNS}, (SELECT count(*) FROM project_members m WHERE m.project_id = p.id) AS members
     FROM projects p ORDER BY p.created_at DESC, p.id DESC`,
  );
  return rows.map((r) => ({ ...toProject(r), members: Number(r.members) }));
}

/** The user's role in the project, or undefined when they are not a member. */
export async function roleIn(sql: Sql, projectId: number, userId: number): Promise<Role | undefined> {
  const rows = await sql.query<{ role: string }>("SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2", [projectId, userId]);
  return rows[0] && isRole(rows[0].role) ? rows[0].role : undefined;
}

export async function membersOf(sql: Sql, projectId: number): Promise<Member[]> {
  const rows = await sql.query<{ user_id: unknown; email: unknown; name: unknown; role: string; added_at: unknown }>(
    `SELECT m.user_id, u.email, u.name, m.role, m.added_at FROM project_members m JOIN users u ON u.id = m.user_id
     WHERE m.project_id = $1 ORDER BY array_position(ARRAY['owner','admin','member','viewer'], m.role), lower(u.email)`,
    [projectId],
  );
  return rows.map((r) => ({ user_id: Number(r.user_id), email: String(r.email), name: String(r.name), role: r.role as Role, added_at: new Date(r.added_at as string).toISOString() }));
}

/**
 * Adds the user with `email` to the project with `role`, or gives a member that role. The owner's role is changed
 * only by a transfer of ownership, and nobody is made owner here.
 */
export async function setMember(sql: Sql, projectId: number, email: string, role: Role, actorId: number | null): Promise<Member> {
  if (role === "owner") throw new ValidationError({ message: "a project has one owner: transfer the ownership instead", field: "role" });
  if (!isRole(role)) throw new ValidationError({ message: "the role must be viewer, member or admin", field: "role" });
  const address = addressOf(email);
  return sql.transaction(async (tx) => {
    const users = await tx.query<{ id: unknown }>("SELECT id FROM users WHERE lower(email) = lower($1)", [address]);
    if (!users[0]) throw new NotFound({ resource: "user", message: `no account with the e-mail ${address}` });
    const userId = Number(users[0].id);
    const before = await tx.query<{ role: string }>("SELECT role FROM project_members WHERE project_id = $1 AND user_id = $2 FOR UPDATE", [projectId, userId]);
    if (before[0]?.role === "owner") throw new Conflict({ code: "owner_role", message: "the owner's role changes only by a transfer of ownership", field: "email" });
    await tx.query(
      `INSERT INTO project_members (project_id, user_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (project_id, user_id) DO UPDATE SET role = EXCLUDED.role`,
      [projectId, userId, role],
    );
    await audit(tx, projectId, actorId, before[0] ? "member.role" : "member.add", address, before[0] ? { from: before[0].role, to: role } : { role });
    return (await membersOf(tx, projectId)).find((m) => m.user_id === userId)!;
  });
}

/** Removes a member (never the owner) and returns their user id; NotFound when they are not one. */
export async function removeMember(sql: Sql, projectId: number, email: string, actorId: number | null): Promise<number> {
  const address = addressOf(email);
  return sql.transaction(async (tx) => {
    const rows = await tx.query<{ user_id: unknown; role: string }>(
      `SELECT m.user_id, m.role FROM project_members m JOIN users u ON u.id = m.user_id
       WHERE m.project_id = $1 AND lower(u.email) = lower($2) FOR UPDATE OF m`,
      [projectId, address],
    );
    if (!rows[0]) throw new NotFound({ resource: "member", message: `${address} is not a member of this project` });
    if (rows[0].role === "owner") throw new Conflict({ code: "owner_role", message: "the owner cannot be removed: transfer the ownership first", field: "email" });
    await tx.query("DELETE FROM project_members WHERE project_id = $1 AND user_id = $2", [projectId, rows[0].user_id]);
    await audit(tx, projectId, actorId, "member.remove", address, { role: rows[0].role });
    return Number(rows[0].user_id);
  });
}

export interface AuditEntry {
  readonly id: number;
  readonly actor: string | null;
  readonly action: string;
  readonly target: string;
  readonly details: Record<string, unknown>;
  readonly at: string;
}

/** The project's audit log, newest first. */
export async function auditLog(sql: Sql, projectId: number, limit = 100): Promise<AuditEntry[]> {
  const rows = await sql.query<{ id: unknown; email: string | null; action: string; target: string; details: unknown; at: unknown }>(
    `SELECT a.id, u.email, a.action, a.target, a.details, a.at FROM project_audit_log a LEFT JOIN users u ON u.id = a.actor_id
     WHERE a.project_id = $1 ORDER BY a.at DESC, a.id DESC LIMIT $2`,
    [projectId, limit],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    actor: r.email,
    action: r.action,
    target: r.target,
    details: (typeof r.details === "string" ? JSON.parse(r.details) : r.details) as Record<string, unknown>,
    at: new Date(r.at as string).toISOString(),
  }));
}

/** The project's slug and its owner (id and e-mail; null for a project without one). */
export async function projectOwner(sql: Sql, projectId: number): Promise<{ slug: string; owner_id: number | null; email: string | null } | undefined> {
  const [row] = await sql.query<{ slug: string; owner_id: unknown; email: string | null }>(
    `SELECT p.slug, u.id AS owner_id, u.email FROM projects p
       LEFT JOIN project_members m ON m.project_id = p.id AND m.role = 'owner'
       LEFT JOIN users u ON u.id = m.user_id
      WHERE p.id = $1 ORDER BY u.id LIMIT 1`,
    [projectId],
  );
  return row && { slug: row.slug, owner_id: row.owner_id === null || row.owner_id === undefined ? null : Number(row.owner_id), email: row.email };
}
