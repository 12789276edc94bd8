/**
 * The route × role matrix (docs/TEAMS.md): every dashboard route names the project action it performs
 * (core/access/roles.ts), and for every such route and every role, over real HTTP with a real session and CSRF
 * token, a member whose role lacks the action is answered 403 and one whose role has it is not. The routes come from
 * the app's own route table, so a new route that names no action fails here until it is classified.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTION_ROLE, can, ROLES, type Role } from "../../core/access/roles.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { csrfFrom, json, loginJar, startTestServer, waitForRun, type CookieJar, type TestServer } from "./harness.js";

/** Routes that act in no project: public, Bearer-key API (scoped by the key), the instance admin's, or the project page's own lookup. */
const NOT_PROJECT_ROUTES = new Set([
  "GET /healthz", "GET /metrics",
  "GET /api/runs", "GET /api/runs/:sdk_run_id", "GET /api/runs/:sdk_run_id/spans", "GET /api/runs/:sdk_run_id/input", "POST /api/runs/:sdk_run_id/input",
  "GET /api/agents/:name/config", "POST /api/agents/:name/configs/:version/activate", "POST /api/scores", "POST /api/scores/batch", "GET /api/runs/:sdk_run_id/scores", "GET /api/sessions", "GET /api/sessions/:session_id",
  "GET /api/openapi.json", "GET /api/docs",
  "POST /api/datasets", "GET /api/datasets", "GET /api/datasets/:name", "PATCH /api/datasets/:name", "POST /api/datasets/:name/items", "GET /api/datasets/:name/items",
  "POST /api/datasets/:name/import",
  "POST /api/experiments", "GET /api/experiments", "GET /api/experiments/:id", "POST /api/experiments/:id/complete",
  "GET /api/evaluator-templates", "POST /api/evaluators", "GET /api/evaluators", "GET /api/evaluators/:id", "PATCH /api/evaluators/:id",
  "POST /api/evaluators/:id/try", "GET /api/evaluation-settings", "PUT /api/evaluation-settings", "POST /api/evaluation-rules",
  "GET /api/evaluation-rules", "GET /api/evaluation-rules/:id", "PATCH /api/evaluation-rules/:id", "DELETE /api/evaluation-rules/:id",
  "POST /api/evaluation-rules/:id/backfill", "POST /api/annotation-queues", "GET /api/annotation-queues", "GET /api/annotation-queues/:id",
  "POST /api/annotation-queues/:id/items", "POST /api/annotation-queues/:id/next", "POST /api/annotation-queues/:id/items/:item_id/complete",
  "POST /api/annotation-queues/:id/items/:item_id/skip", "DELETE /api/annotation-queues/:id",
  // The key's owner's role is checked by the route itself (test/e2e/provider-keys.test.ts).
  "GET /api/provider-keys", "PUT /api/provider-keys/:provider", "DELETE /api/provider-keys/:provider",
  "GET /", "GET /register", "POST /register", "GET /login", "POST /login", "POST /logout",
  "GET /admin", "POST /admin/users/:id/disable", "POST /admin/users/:id/enable",
  "GET /settings/project", "POST /projects", "POST /projects/switch", "GET /invitations/:token", "POST /invitations/:token/accept",
]);

let srv: TestServer;
let team: { id: number; slug: string };
const jars = new Map<Role, { jar: CookieJar; csrf: string }>();

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
        if (!r.action) continue;
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
    // Every action of the policy table is reached by some route and refused to some role below its least role.
    const actions = new Set(srv.web.app.routes.map((r) => r.action).filter(Boolean));
    for (const a of Object.keys(ACTION_ROLE)) expect([a, actions.has(a as keyof typeof ACTION_ROLE)]).toEqual([a, true]);
    expect(seen.length).toBeGreaterThan(120);
  }, 120_000);
});
