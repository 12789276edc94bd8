/**
 * Projects, members, roles and project keys on the metadata store (PGlite, and a PostgreSQL server when
 * DATABASE_URL is set): the migration of a database made before projects existed, personal projects at
 * registration, members and the owner's rules, key scopes, the audit log, and the CLI's project commands.
 */
import { randomUUID } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey, newApiKey } from "../../core/ids.js";
import { memberRevocation, REALTIME_REVOKE_CHANNEL } from "../../core/tokens.js";
import { ACCESS_CHANGED_CHANNEL, removeMemberNow, setMemberNow } from "../../accounts/index.js";
import type { Sql } from "../../core/ports/sql.js";
import { migratePostgres } from "../../core/postgres/migrate.js";
import { openPg } from "../../core/postgres/pg.js";
import { openPglite } from "../../core/postgres/pglite.js";
import { runAdmin } from "../../deploy/admin.js";
import { createApiKey, findActiveKeyByHash, listApiKeys, revokeApiKey } from "./api-keys.js";
import { auditLog, createProject, membersOf, projectsOf, removeMember, roleIn, setMember, slugStem } from "./projects.js";
import { signInWithIdentity, UNVERIFIED_ACCOUNT } from "./identities.js";
import { acceptInvitation, createInvitation, invitationOf } from "./invitations.js";
import { allUsers, isInstanceAdmin, setUserDisabled } from "./instance-admin.js";
import { checkCredentials, createUser } from "./users.js";

const MIGRATIONS = fileURLToPath(new URL("../../core/postgres/migrations/", import.meta.url));

/** A directory with the migrations of the release before projects (versions below 100). */
async function migrationsBeforeProjects(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-migrations-"));
  for (const f of await readdir(MIGRATIONS)) if (/^\d{3}_/.test(f) && Number(f.slice(0, 3)) < 100) await cp(path.join(MIGRATIONS, f), path.join(dir, f));
  return dir;
}

interface Target {
  name: string;
  unavailable?: string;
  open(): Promise<{ sql: Sql; close(): Promise<void> }>;
}

const targets: Target[] = [
  {
    name: "PGlite",
    async open() {
      const dir = await mkdtemp(path.join(os.tmpdir(), "runwatch-projects-"));
      const sql = await openPglite(dir);
      return { sql, close: async () => { await sql.close(); await rm(dir, { recursive: true, force: true }); } };
    },
  },
  {
    name: "PostgreSQL server",
    unavailable: process.env.DATABASE_URL ? undefined : "DATABASE_URL is not set",
    async open() {
      const url = new URL(process.env.DATABASE_URL!);
      const db = `runwatch_projects_${randomUUID().replaceAll("-", "").slice(0, 12)}`;
      const admin = await openPg(url.toString(), { max: 1 });
      await admin.query(`CREATE DATABASE ${db}`);
      url.pathname = `/${db}`;
      const sql = await openPg(url.toString());
      return {
        sql,
        close: async () => {
          await sql.close();
          await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
          await admin.close();
        },
      };
    },
  },
];

for (const target of targets) {
  describe.skipIf(target.unavailable !== undefined && process.env.REQUIRE_SERVICES !== "1")(`projects (${target.name})`, () => {
    let sql: Sql;
    let close: () => Promise<void>;
    /** Users and a key made by the release before projects, as its code made them. */
    const before = { users: [] as { id: number; email: string }[], key: "" };

    beforeAll(async () => {
      ({ sql, close } = await target.open());
      const old = await migrationsBeforeProjects();
      await migratePostgres(sql, old);
      await rm(old, { recursive: true, force: true });
      // Data in the tables the migration changes, and in those that point at users.
      for (const [email, name] of [["Ada.Lovelace+x@example.com", "Ada"], ["---@example.com", "Dash"]] as const) {
        const [u] = await sql.query<{ id: number }>("INSERT INTO users (email, name, password_hash) VALUES ($1, $2, 'x') RETURNING id", [email, name]);
        before.users.push({ id: Number(u!.id), email });
      }
      before.key = newApiKey();
      await sql.query("INSERT INTO api_keys (user_id, name, key_hash, last4) VALUES ($1, 'old', $2, $3)", [before.users[0]!.id, hashApiKey(before.key), before.key.slice(-4)]);
      const [agent] = await sql.query<{ id: number }>("INSERT INTO agents (user_id, name) VALUES ($1, 'support-bot') RETURNING id", [before.users[0]!.id]);
      await sql.query("INSERT INTO agent_configs (agent_id, version, config, is_active, created_by) VALUES ($1, 1, '{\"model\":\"m\"}', true, $2)", [agent!.id, before.users[0]!.id]);
      await sql.query("INSERT INTO agent_run_starts (user_id, external_id, agent_id, started_at) VALUES ($1, 'run-1', $2, now())", [before.users[0]!.id, agent!.id]);
      await sql.query("INSERT INTO user_settings (user_id, retention_days) VALUES ($1, 30)", [before.users[1]!.id]);
      const [rule] = await sql.query<{ id: number }>("INSERT INTO alert_rules (user_id, name, trigger_type, channel, target) VALUES ($1, 'r', 'run_failed', 'webhook', 'https://example.com') RETURNING id", [before.users[0]!.id]);
      const [job] = await sql.query<{ id: number }>(
        `INSERT INTO notification_jobs (user_id, rule_id, rule_name, trigger_type, channel, target, payload, max_attempts)
         VALUES ($1, $2, 'r', 'run_failed', 'webhook', 'https://example.com', '{}', 3) RETURNING id`, [before.users[0]!.id, rule!.id]);
      await sql.query("INSERT INTO alert_firings (rule_id, dedup_key, job_id) VALUES ($1, 'run-1', $2)", [rule!.id, job!.id]);
      await sql.query("INSERT INTO alert_rule_state (rule_id, suppressed) VALUES ($1, 2)", [rule!.id]);
      await sql.query("INSERT INTO human_inputs (user_id, sdk_run_id, request_event_id, question, response, responded_by) VALUES ($1, 'run-1', '0190a0a0-0000-7000-8000-000000000001', 'ok?', 'yes', 'Ada')", [before.users[0]!.id]);
      await sql.query("INSERT INTO dead_letters (dedup_key, user_id, error, raw, raw_bytes) VALUES ('k-1', $1, 'bad', '\\x00', 1)", [before.users[1]!.id]);
      await migratePostgres(sql);
    });
    afterAll(async () => {
      await close?.();
    });

    it("moves what each user owned into their personal project: agents and their configs and run starts, settings, alert rules with their jobs, firings and state, answers, dead letters", async () => {
      const [ada, dash] = before.users.map((u) => u.id);
      const owner = async (table: string) => (await sql.query<{ p: unknown }>(`SELECT project_id AS p FROM ${table}`)).map((r) => Number(r.p));
      expect(await owner("agents")).toEqual([ada]);
      expect(await owner("project_settings")).toEqual([dash]);
      expect(await owner("alert_rules")).toEqual([ada]);
      expect(await owner("human_inputs")).toEqual([ada]);
      expect(await owner("dead_letters")).toEqual([dash]);
      expect(await owner("agent_run_starts")).toEqual([ada]);
      expect(await owner("notification_jobs")).toEqual([ada]);
      // What hangs off an agent or a rule moves with it; who saved a config version is still recorded.
      expect(await sql.query("SELECT a.project_id::int AS p, c.version, c.is_active, c.created_by::int AS by FROM agent_configs c JOIN agents a ON a.id = c.agent_id"))
        .toEqual([{ p: ada, version: 1, is_active: true, by: ada }]);
      expect(await sql.query("SELECT r.project_id::int AS p, f.dedup_key, s.suppressed FROM alert_firings f JOIN alert_rules r ON r.id = f.rule_id JOIN alert_rule_state s ON s.rule_id = r.id"))
        .toEqual([{ p: ada, dedup_key: "run-1", suppressed: 2 }]);
    });

    it("migrates every user into a personal project with their id, which they own, and their keys into it", async () => {
      for (const u of before.users) {
        const projects = await projectsOf(sql, u.id);
        expect(projects).toEqual([expect.objectContaining({ id: u.id, personal: true, role: "owner" })]);
      }
      const slugs = (await Promise.all(before.users.map((u) => projectsOf(sql, u.id)))).map((p) => p[0]!.slug);
      expect(slugs).toEqual([`ada-lovelace-x-${before.users[0]!.id}`, `user-${before.users[1]!.id}`]);
      // The key made before projects works as before: the owner's personal project, reading and sending.
      expect(await findActiveKeyByHash(sql, hashApiKey(before.key))).toMatchObject({ userId: before.users[0]!.id, projectId: before.users[0]!.id, scope: "read+ingest" });
      // Ids after the migration: users and projects share one sequence, so a personal project has its user's id.
      const ada2 = await createUser(sql, { email: "later@example.com", name: "Later", password: "password-1" });
      expect(ada2.id).toBeGreaterThan(Math.max(...before.users.map((u) => u.id)));
      expect(await projectsOf(sql, ada2.id)).toEqual([expect.objectContaining({ id: ada2.id, slug: "later", name: "Later's project", personal: true, role: "owner" })]);
      const team = await createProject(sql, ada2.id, "Team");
      const third = await createUser(sql, { email: "third@example.com", name: "Third", password: "password-1" });
      expect(new Set([ada2.id, team.id, third.id]).size).toBe(3);
      expect((await projectsOf(sql, third.id))[0]!.id).toBe(third.id);
    });

    it("names the instance admins (the first user, or RUNWATCH_ADMIN_EMAILS) and disables and enables a user", async () => {
      const [first, second] = before.users;
      expect(await isInstanceAdmin(sql, first!, [])).toBe(true);
      expect(await isInstanceAdmin(sql, second!, [])).toBe(false);
      expect(await isInstanceAdmin(sql, first!, [second!.email.toLowerCase()])).toBe(false);
      expect(await isInstanceAdmin(sql, second!, [second!.email.toLowerCase()])).toBe(true);
      const carol = await createUser(sql, { email: `carol-${randomUUID()}@example.com`, name: "Carol", password: "password-1" });
      const { key } = await createApiKey(sql, carol.id, "k", null);
      await sql.query("INSERT INTO sessions (id, user_id, data, expires_at) VALUES ($1, $2, '{}', now() + interval '1 day')", [`s-${carol.id}`, carol.id]);
      await expect(setUserDisabled(sql, first!.id, true, first!.id)).rejects.toMatchObject({ _tag: "Conflict" });
      await setUserDisabled(sql, carol.id, true, first!.id);
      expect((await allUsers(sql)).find((u) => u.id === carol.id)).toMatchObject({ disabled_at: expect.any(String), projects: 1 });
      expect(await sql.query("SELECT id FROM sessions WHERE user_id = $1", [carol.id])).toEqual([]);
      expect(await checkCredentials(sql, carol.email, "password-1")).toBeUndefined();
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toBeNull();
      await setUserDisabled(sql, carol.id, false, first!.id);
      expect(await checkCredentials(sql, carol.email, "password-1")).toMatchObject({ id: carol.id });
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toMatchObject({ userId: carol.id });
      await expect(setUserDisabled(sql, 999_999_999, true, first!.id)).rejects.toMatchObject({ _tag: "NotFound" });
    });

    it("takes hostile single sign-on claims without a 500: a name repaired, an address that is not one refused", async () => {
      const policy = { allowedDomains: [], defaultRole: "viewer" as const };
      const tag = randomUUID().slice(0, 8);
      const user = await signInWithIdentity(sql, { issuer: "https://idp.example", subject: `s-${tag}`, email: `n-${tag}@corp.example`, emailVerified: true, name: "A\u0000B\ud800" }, policy);
      expect(user).toMatchObject({ name: "A\ufffdB\ufffd", created: true });
      for (const email of [`x\u0000-${tag}@corp.example`, `x\ud800-${tag}@corp.example`, `${"a".repeat(300)}@corp.example`]) {
        await expect(signInWithIdentity(sql, { issuer: "https://idp.example", subject: `bad-${email.length}-${tag}`, email, emailVerified: true }, policy)).rejects.toMatchObject({ _tag: "AuthError" });
      }
    });

    it("makes slugs from names, unique on the instance", async () => {
      const owner = await createUser(sql, { email: `slugs-${randomUUID()}@example.com`, name: "S", password: "password-1" });
      const a = await createProject(sql, owner.id, "Support Bots — EU");
      const b = await createProject(sql, owner.id, "support bots eu");
      expect([a.slug, b.slug]).toEqual(["support-bots-eu", "support-bots-eu-2"]);
      expect(slugStem("!!!")).toBe("project");
      expect(slugStem("x".repeat(80))).toHaveLength(40);
      await expect(createProject(sql, owner.id, " ")).rejects.toMatchObject({ _tag: "ValidationError", field: "name" });
      await expect(createProject(sql, owner.id, "n".repeat(101))).rejects.toMatchObject({ _tag: "ValidationError", field: "name" });
    });

    it("adds members with a role, changes it, removes them, never touches the owner, and records it all", async () => {
      const owner = await createUser(sql, { email: `owner-${randomUUID()}@example.com`, name: "O", password: "password-1" });
      const viewer = await createUser(sql, { email: `Viewer-${randomUUID()}@example.com`, name: "V", password: "password-1" });
      const project = await createProject(sql, owner.id, "Shared");
      await setMember(sql, project.id, viewer.email.toUpperCase(), "viewer", owner.id);
      expect(await roleIn(sql, project.id, viewer.id)).toBe("viewer");
      await setMember(sql, project.id, viewer.email, "admin", owner.id);
      expect((await membersOf(sql, project.id)).map((m) => [m.email, m.role])).toEqual([[owner.email, "owner"], [viewer.email, "admin"]]);
      await expect(setMember(sql, project.id, owner.email, "viewer", viewer.id)).rejects.toMatchObject({ _tag: "Conflict", code: "owner_role" });
      await expect(setMember(sql, project.id, viewer.email, "owner", owner.id)).rejects.toMatchObject({ _tag: "ValidationError", field: "role" });
      await expect(setMember(sql, project.id, "nobody@example.com", "viewer", owner.id)).rejects.toMatchObject({ _tag: "NotFound" });
      await expect(removeMember(sql, project.id, owner.email, viewer.id)).rejects.toMatchObject({ _tag: "Conflict" });
      await removeMember(sql, project.id, viewer.email, owner.id);
      expect(await roleIn(sql, project.id, viewer.id)).toBeUndefined();
      await expect(removeMember(sql, project.id, viewer.email, owner.id)).rejects.toMatchObject({ _tag: "NotFound" });
      expect((await auditLog(sql, project.id)).map((a) => [a.actor, a.action, a.target, a.details]).reverse()).toEqual([
        [owner.email, "project.create", project.slug, {}],
        [owner.email, "member.add", viewer.email, { role: "viewer" }],
        [owner.email, "member.role", viewer.email, { from: "viewer", to: "admin" }],
        [owner.email, "member.remove", viewer.email, { role: "admin" }],
      ]);
    });

    it("a key acts with its creator's role; removing them revokes their keys and invitations, demoting them their invitations", async () => {
      const tag = randomUUID().slice(0, 8);
      const [owner, adm, other] = await Promise.all(["o", "adm", "other"].map((n) => createUser(sql, { email: `${n}-${tag}@example.com`, name: n, password: "password-1" })));
      const project = await createProject(sql, owner!.id, `Roles ${tag}`);
      const announced: string[] = [];
      const pubsub = { publish: async (_channel: string, message: string) => { announced.push(message); } };
      await setMember(sql, project.id, adm!.email, "admin", owner!.id);
      const { key } = await createApiKey(sql, adm!.id, "adm's", null, { projectId: project.id });
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toMatchObject({ userId: adm!.id, role: "admin" });
      const first = await createInvitation(sql, project.id, `first-${tag}@example.com`, "admin", adm!.id);
      const demoted = await setMemberNow(sql, pubsub, project.id, adm!.email, "viewer", owner!.id);
      expect([demoted.keys, demoted.invitationsRevoked]).toEqual([1, [`first-${tag}@example.com`]]);
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toMatchObject({ role: "viewer" });
      await expect(invitationOf(sql, first.token)).rejects.toMatchObject({ _tag: "NotFound" });
      await setMember(sql, project.id, adm!.email, "admin", owner!.id);
      const second = await createInvitation(sql, project.id, `second-${tag}@example.com`, "admin", adm!.id);
      const removed = await removeMemberNow(sql, pubsub, project.id, adm!.email, owner!.id);
      expect([removed.keysRevoked, removed.invitationsRevoked]).toEqual([["adm's"], [`second-${tag}@example.com`]]);
      await setMember(sql, project.id, adm!.email, "admin", owner!.id); // back: the key stays revoked
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toBeNull();
      await expect(acceptInvitation(sql, second.token, other!)).rejects.toMatchObject({ _tag: "NotFound" });
      // An invitation whose sender lost the right to invite another way (a removal made before it revoked them) is refused.
      const third = await createInvitation(sql, project.id, other!.email, "admin", adm!.id);
      await removeMember(sql, project.id, adm!.email, owner!.id);
      await expect(acceptInvitation(sql, third.token, other!)).rejects.toMatchObject({ _tag: "NotFound" });
      expect(await roleIn(sql, project.id, other!.id)).toBeUndefined();
      expect(announced.filter((m) => m.startsWith("member:"))).toEqual(Array(3).fill(`member:${adm!.id}:${project.id}`));
      expect((await auditLog(sql, project.id)).map((a) => [a.action, a.target, a.details.why]).filter(([, , why]) => why)).toEqual([
        ["invitation.revoke", `second-${tag}@example.com`, "its sender was removed from the project"],
        ["key.revoke", "adm's", "its creator was removed from the project"],
        ["invitation.revoke", `first-${tag}@example.com`, "its sender's role is now viewer"],
      ]);
    });

    it("links single sign-on only to an account whose address was verified, or that is logged in; a link joins the default project", async () => {
      const tag = randomUUID().slice(0, 8);
      const owner = await createUser(sql, { email: `sso-owner-${tag}@example.com`, name: "O", password: "password-1" });
      const policy = { allowedDomains: [], defaultProject: (await createProject(sql, owner.id, `Corp ${tag}`)).slug, defaultRole: "member" as const };
      const identity = (subject: string, email: string) => ({ issuer: "https://idp.example", subject: `${subject}-${tag}`, email, emailVerified: true });
      const squatted = await createUser(sql, { email: `victim-${tag}@corp.example`, name: "Not the victim", password: "password-1" });
      await expect(signInWithIdentity(sql, identity("victim", squatted.email), policy)).rejects.toMatchObject({ _tag: "Conflict", code: UNVERIFIED_ACCOUNT });
      expect(await sql.query("SELECT 1 FROM user_identities WHERE user_id = $1", [squatted.id])).toEqual([]);
      // Another user logged in does not link it; its owner, logged in with the password, does: then its address is verified.
      await expect(signInWithIdentity(sql, identity("victim", squatted.email), policy, { id: owner.id })).rejects.toMatchObject({ code: UNVERIFIED_ACCOUNT });
      const linked = await signInWithIdentity(sql, identity("victim", squatted.email), policy, { id: squatted.id });
      expect(linked).toMatchObject({ id: squatted.id, created: false, linked: true });
      expect((await projectsOf(sql, squatted.id)).map((p) => [p.slug, p.role])).toContainEqual([policy.defaultProject, "member"]);
      expect(await signInWithIdentity(sql, identity("again", squatted.email), policy)).toMatchObject({ id: squatted.id, linked: true });
      const made = await signInWithIdentity(sql, identity("new", `new-${tag}@corp.example`), policy);
      expect(await signInWithIdentity(sql, identity("new-2", made.email), policy)).toMatchObject({ id: made.id, created: false, linked: true });
    });

    it("keeps a project's keys to it: scope, creator, listing and revoking by project only", async () => {
      const owner = await createUser(sql, { email: `keys-${randomUUID()}@example.com`, name: "K", password: "password-1" });
      const project = await createProject(sql, owner.id, "Keys");
      const { key, info } = await createApiKey(sql, owner.id, "ingest only", null, { projectId: project.id, scope: "ingest" });
      expect(info).toMatchObject({ scope: "ingest", project_id: project.id, created_by: owner.email });
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toMatchObject({ userId: owner.id, projectId: project.id, scope: "ingest" });
      expect((await listApiKeys(sql, project.id)).map((k) => k.name)).toEqual(["ingest only"]);
      expect(await listApiKeys(sql, owner.id)).toEqual([]); // the personal project has none
      await expect(revokeApiKey(sql, owner.id, info.id, owner.id)).rejects.toMatchObject({ _tag: "NotFound" }); // another project's
      await revokeApiKey(sql, project.id, info.id, owner.id);
      expect(await findActiveKeyByHash(sql, hashApiKey(key))).toBeNull();
      await expect(createApiKey(sql, owner.id, "k", null, { projectId: project.id, scope: "write" as never })).rejects.toMatchObject({ field: "scope" });
      expect((await auditLog(sql, project.id)).slice(0, 2).map((a) => a.action)).toEqual(["key.revoke", "key.create"]);
    });

    it("runs the CLI's project commands, and lets only a project's admins create its keys", async () => {
      const tag = randomUUID().slice(0, 8);
      const [alice, bob] = await Promise.all(["alice", "bob"].map((n) => createUser(sql, { email: `${n}-${tag}@example.com`, name: n, password: "password-1" })));
      const { project } = (await runAdmin({ sql }, { cmd: "project.create", email: alice!.email, name: `Agents ${tag}` })) as { project: { slug: string } };
      expect(project.slug).toBe(`agents-${tag}`);
      await runAdmin({ sql }, { cmd: "project.add-member", project: project.slug, email: bob!.email, role: "viewer" });
      const listed = (await runAdmin({ sql }, { cmd: "project.list", email: bob!.email })) as { projects: { slug: string; role: string }[] };
      expect(listed.projects.map((p) => [p.slug, p.role])).toEqual([[`bob-${tag}`, "owner"], [project.slug, "viewer"]]);
      await expect(runAdmin({ sql }, { cmd: "key.create", email: bob!.email, name: "k", project: project.slug })).rejects.toMatchObject({ _tag: "AuthError", code: "forbidden" });
      const made = (await runAdmin({ sql }, { cmd: "key.create", email: alice!.email, name: "k", project: project.slug, scope: "ingest" })) as { key: string };
      expect(await findActiveKeyByHash(sql, hashApiKey(made.key))).toMatchObject({ userId: alice!.id, scope: "ingest" });
      const personal = (await runAdmin({ sql }, { cmd: "key.create", email: bob!.email, name: "mine" })) as { key: string };
      expect(await findActiveKeyByHash(sql, hashApiKey(personal.key))).toMatchObject({ projectId: bob!.id, scope: "read+ingest" });
      await expect(runAdmin({ sql }, { cmd: "key.create", email: alice!.email, name: "k", project: project.slug, scope: "all" })).rejects.toMatchObject({ field: "scope" });
      await expect(runAdmin({ sql }, { cmd: "project.add-member", project: "no-such-project", email: bob!.email })).rejects.toMatchObject({ _tag: "NotFound" });
      await expect(runAdmin({ sql }, { cmd: "project.add-member", project: project.slug, email: bob!.email, role: "root" })).rejects.toMatchObject({ field: "role" });
      // Text Postgres cannot hold, or that only a forged request sends, is named as the field at fault.
      for (const email of ["b\u0000b@example.com", "lone\ud800@example.com", `${"x".repeat(300)}@example.com`]) {
        await expect(runAdmin({ sql }, { cmd: "project.add-member", project: project.slug, email })).rejects.toMatchObject({ _tag: "ValidationError", field: "email" });
      }
      for (const name of ["nul\u0000name", "lone \udc00", "tab\there"]) {
        await expect(runAdmin({ sql }, { cmd: "project.create", email: alice!.email, name })).rejects.toMatchObject({ _tag: "ValidationError", field: "name" });
      }
      await expect(runAdmin({ sql }, { cmd: "key.create", email: "nul\u0000@example.com", name: "k" })).rejects.toMatchObject({ _tag: "NotFound" });
      await expect(runAdmin({ sql }, { cmd: "project.remove-member", project: project.slug, email: bob!.email })).rejects.toMatchObject({ failure: { tag: "Unavailable" } });
      const announced: [string, string][] = [];
      const pubsub = { publish: async (channel: string, message: string) => { announced.push([channel, message]); } };
      await runAdmin({ sql, pubsub }, { cmd: "project.remove-member", project: project.slug, email: bob!.email });
      const projectId = (await projectsOf(sql, alice!.id)).find((p) => p.slug === project.slug)!.id;
      expect(announced).toEqual([[ACCESS_CHANGED_CHANNEL, `member:${bob!.id}:${projectId}`], [REALTIME_REVOKE_CHANNEL, memberRevocation(bob!.id, projectId)]]);
      expect(await roleIn(sql, (await projectsOf(sql, alice!.id)).find((p) => p.slug === project.slug)!.id, bob!.id)).toBeUndefined();
      const all = (await runAdmin({ sql }, { cmd: "project.list" })) as { projects: { slug: string; members: number }[] };
      expect(all.projects.find((p) => p.slug === project.slug)?.members).toBe(1);
    });
  });
}
