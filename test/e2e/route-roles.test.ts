/**
 * The route × role matrix (docs/TEAMS.md): every dashboard and API route names the project action it performs
 * (core/access/roles.ts), and for every such route and every role, over real HTTP, a member whose role lacks the
 * action is answered 403 and one whose role has it is not: with a real session and CSRF token for the dashboard's
 * routes, and with an API key the member made for the API's (a key acts with its creator's current role). The routes
 * come from the app's own route table, so a new route that names no action fails here until it is classified.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_ROLE, can, ROLES, type Role } from "../../core/access/roles.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, waitForRun, type CookieJar, type TestServer } from "./harness.js";

/** Routes that act in no project: public, the API's description, the instance admin's, or the project page's own lookup. */
const NOT_PROJECT_ROUTES = new Set([
  "GET /healthz", "GET /metrics",
  "GET /api/openapi.json", "GET /api/docs",
  "GET /", "GET /register", "POST /register", "GET /login", "POST /login", "POST /logout",
  "GET /admin", "POST /admin/users/:id/disable", "POST /admin/users/:id/enable",
  "GET /settings/project", "POST /projects", "POST /projects/switch", "GET /invitations/:token", "POST /invitations/:token/accept",
]);

let srv: TestServer;
let team: { id: number; slug: string };
const jars = new Map<Role, { jar: CookieJar; csrf: string }>();
/** An API key of the team's that a member with the role made (as an admin, before being given this role). */
const keys = new Map<Role, string>();

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  const owner = await srv.user(`owner-${Date.now()}@example.com`);
  team = await createProject(srv.ports.sql, owner.id, "Matrix");
  const key = await srv.key(owner.id, { projectId: team.id });
  await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: [
    { event_type: "run_start", sdk_run_id: "m-1", agent_name: "bot", payload: {} },
    { event_type: "human_input_requested", sdk_run_id: "m-1", payload: { question: "ok?" } },
  ] }));
  await waitForRun(srv.url, key, "m-1", (b) => b.run.status === "waiting_for_input");
  for (const role of ROLES) {
    const user = role === "owner" ? owner : await srv.user(`${role}-${Date.now()}@example.com`);
    if (role !== "owner") await setMember(srv.ports.sql, team.id, user.email, role, owner.id);
    await switchProject(srv.ports.sql, user.id, team.slug);
    keys.set(role, role === "owner" ? key : await srv.key(user.id, { projectId: team.id, name: `${role}'s` }));
    const jar = await loginJar(srv.url, user.email);
    jars.set(role, { jar, csrf: csrfFrom(await (await jar.fetch(`${srv.url}/dashboard`)).text()) });
  }
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

/** A route's path with its parameters filled in: the team's run, agent and slug; ids that name nothing. */
const fill = (path: string) =>
  path.replace(":run", "m-1").replace(":name", "bot").replace(":slug", team.slug).replace(":version", "1").replace(":id", "987654").replace(":token", "0".repeat(64));

describe("the route × role matrix", () => {
  it("lists every route, and each dashboard route names the action it performs", () => {
    const routes = srv.web.app.routes.flatMap((r) => r.methods.map((m) => ({ key: `${m} ${r.path}`, action: r.action })));
    const unnamed = routes.filter((r) => r.action === undefined).map((r) => r.key).filter((k) => !NOT_PROJECT_ROUTES.has(k));
    expect(unnamed, JSON.stringify(unnamed)).toEqual([]);
    expect(routes.filter((r) => r.action !== undefined).length).toBeGreaterThan(30);
  });

  it("answers 403 exactly where the member's role lacks the route's action", async () => {
    const seen: string[] = [];
    // Owner last: the owner's posts (an empty rename, a delete without the slug typed) are refused as bad input.
    for (const role of ROLES) {
      const { jar, csrf } = jars.get(role)!;
      for (const r of srv.web.app.routes) {
        if (!r.action || r.credential !== "session") continue;
        for (const method of r.methods) {
          const url = `${srv.url}${fill(r.path)}`;
          const res = method === "GET" ? await jar.fetch(url) : await jar.form(url, { _csrf: csrf });
          await res.arrayBuffer();
          const allowed = can(role, r.action);
          seen.push(`${role} ${method} ${r.path} ${res.status}`);
          expect([role, method, r.path, r.action, res.status === 403]).toEqual([role, method, r.path, r.action, !allowed]);
          // Never an internal error (a 502 is /improve telling that the agents service is not running here).
          expect([role, method, r.path, res.status]).not.toEqual([role, method, r.path, 500]);
        }
      }
    }
    expect(seen.length).toBeGreaterThan(120);
  }, 120_000);

  it("answers an API key 403 exactly where its creator's role lacks the route's action", async () => {
    const seen: string[] = [];
    const api = srv.web.app.routes.filter((r) => r.credential === "key");
    expect(api.length).toBeGreaterThan(40);
    for (const role of ROLES) {
      for (const r of api) {
        for (const method of r.methods) {
          const url = `${srv.url}${fillApi(r.path)}`;
          const res = method === "GET" ? await fetch(url, bearer(keys.get(role)!)) : await fetch(url, { ...json(keys.get(role)!, {}), method });
          const body = await res.text();
          const allowed = can(role, r.action!);
          seen.push(`${role} ${method} ${r.path} ${res.status}`);
          expect([role, method, r.path, r.action, res.status === 403]).toEqual([role, method, r.path, r.action, !allowed]);
          if (!allowed) expect(JSON.parse(body)).toMatchObject({ error: { code: "forbidden" } });
          expect([role, method, r.path, res.status]).not.toEqual([role, method, r.path, 500]);
        }
      }
      // Sending, outside the route table (ingest is dispatched before it): the same rule.
      for (const path of ["/api/ingest", "/v1/traces"]) {
        const body = path === "/api/ingest" ? { event_type: "run_start", sdk_run_id: `sent-by-${role}`, agent_name: "bot", payload: {} } : { resourceSpans: [] };
        const res = await fetch(`${srv.url}${path}`, json(keys.get(role)!, body));
        expect([role, path, res.status === 403]).toEqual([role, path, !can(role, "send")]);
      }
    }
    expect(seen.length).toBe(api.reduce((n, r) => n + r.methods.length, 0) * ROLES.length);
  }, 120_000);

  it("reaches every action of the policy table by some route", () => {
    // ...and the matrices above refuse it to every role below its least role.
    const actions = new Set(srv.web.app.routes.map((r) => r.action).filter(Boolean));
    for (const a of Object.keys(ACTION_ROLE)) expect([a, actions.has(a as keyof typeof ACTION_ROLE)]).toEqual([a, true]);
  });
});

/** An API route's path with its parameters filled in: the team's run and agent; ids that name nothing. */
const fillApi = (path: string) =>
  path.replace(":sdk_run_id", "m-1").replace(":name", "bot").replace(":version", "1").replace(":provider", "openai").replace(":session_id", "s-1")
    .replace(":item_id", "00000000-0000-4000-8000-000000000000").replace(":id", "00000000-0000-4000-8000-000000000000");
