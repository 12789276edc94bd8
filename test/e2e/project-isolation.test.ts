/**
 * Projects are the tenant boundary, over real HTTP (docs/TEAMS.md): a team project and a member's personal project
 * hold runs with the same sdk_run_ids and span ids, sent by keys of each; every read (API, pages, CSV) of one never
 * shows the other's. Members see the team's runs in the dashboard once they switch to it; a viewer reads but may
 * not post; a removed member loses the project at their next request.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { bearer, csrfFrom, json, loginJar, startTestServer, waitForRun, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let ada: { id: number; email: string };
let bob: { id: number; email: string };
let adaPersonalKey: string;
let teamKey: string;

const RUN = "shared-run";
const events = (marker: string) => [
  { event_type: "run_start", sdk_run_id: RUN, agent_name: `agent-${marker}`, session_id: "same-session", payload: { input: { marker } } },
  { event_type: "step", sdk_run_id: RUN, span_id: "span-1", payload: { node_name: `node-${marker}`, phase: "end" } },
  { event_type: "run_end", sdk_run_id: RUN, payload: { output: { marker } } },
];

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  ada = await srv.user(`ada-${Date.now()}@example.com`);
  bob = await srv.user(`bob-${Date.now()}@example.com`);
  team = await createProject(srv.ports.sql, ada.id, "Support team");
  await setMember(srv.ports.sql, team.id, bob.email, "viewer", ada.id);
  adaPersonalKey = await srv.key(ada.id);
  teamKey = await srv.key(ada.id, { name: "team agent", projectId: team.id });
  for (const [key, marker] of [[adaPersonalKey, "personal"], [teamKey, "team"]] as const) {
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events: events(marker) }))).status).toBe(207);
    await waitForRun(srv.url, key, RUN, (b) => b.run.status === "success");
  }
});
afterAll(async () => {
  await srv?.close();
});

describe("projects as the tenant boundary", () => {
  it("keeps two projects' runs with the same ids apart on every read API path", async () => {
    for (const [key, marker, other] of [[adaPersonalKey, "personal", "team"], [teamKey, "team", "personal"]] as const) {
      for (const path of ["/api/runs", `/api/runs/${RUN}`, `/api/runs/${RUN}/spans`, "/api/sessions", "/api/sessions/same-session"]) {
        const res = await fetch(`${srv.url}${path}`, bearer(key));
        expect([path, res.status]).toEqual([path, 200]);
        const text = await res.text();
        expect([path, text.includes(`agent-${marker}`) || text.includes(`node-${marker}`)]).toEqual([path, true]);
        expect([path, text.includes(`agent-${other}`) || text.includes(`node-${other}`)]).toEqual([path, false]);
      }
    }
    const personal = (await (await fetch(`${srv.url}/api/runs/${RUN}`, bearer(adaPersonalKey))).json()) as { run: { run_id: string } };
    const teamRun = (await (await fetch(`${srv.url}/api/runs/${RUN}`, bearer(teamKey))).json()) as { run: { run_id: string } };
    expect(personal.run.run_id).not.toBe(teamRun.run.run_id);
    // A score sent with one project's key lands on that project's run only.
    expect((await fetch(`${srv.url}/api/scores`, json(teamKey, { sdk_run_id: RUN, name: "team-only", value: 1 }))).status).toBe(201);
    const scores = async (key: string) => (await (await fetch(`${srv.url}/api/runs/${RUN}/scores`, bearer(key))).json()) as { scores: { name: string }[] };
    expect((await scores(teamKey)).scores.map((s) => s.name)).toEqual(["team-only"]);
    expect((await scores(adaPersonalKey)).scores).toEqual([]);
  });

  it("shows a member the project they switched to, lets a viewer read but not post, and forgets a removed member at once", async () => {
    const jar = await loginJar(srv.url, bob.email);
    // Bob's dashboard starts in his personal project: none of the team's runs.
    expect(await (await jar.fetch(`${srv.url}/dashboard`)).text()).not.toContain(RUN);
    const page = await (await jar.fetch(`${srv.url}/dashboard`)).text();
    const csrf = csrfFrom(page);
    const switched = await jar.form(`${srv.url}/projects/switch`, { _csrf: csrf, project: team.slug });
    expect(switched.status).toBe(303);
    const dashboard = await (await jar.fetch(`${srv.url}/dashboard`)).text();
    expect(dashboard).toContain(RUN);
    expect((await jar.fetch(`${srv.url}/dashboard/${RUN}`)).status).toBe(200);
    const run = await (await jar.fetch(`${srv.url}/dashboard/${RUN}/tree`)).text();
    expect(run).toContain("node-team");
    expect(run).not.toContain("node-personal");
    const csv = await (await jar.fetch(`${srv.url}/costs.csv`)).text();
    expect(csv).toContain("agent-team");
    expect(csv).not.toContain("agent-personal");
    // A viewer's feedback is refused; so is a switch to a project he is not a member of.
    const feedback = await jar.form(`${srv.url}/dashboard/${RUN}/scores`, { _csrf: csrf, value: "up" });
    expect(feedback.status).toBe(403);
    const foreign = await jar.form(`${srv.url}/projects/switch`, { _csrf: csrf, project: `ada-${ada.id}` });
    expect(foreign.status).toBe(404);
    // Promoted to member, the same post is stored.
    await setMember(srv.ports.sql, team.id, bob.email, "member", ada.id);
    expect((await jar.form(`${srv.url}/dashboard/${RUN}/scores`, { _csrf: csrf, value: "up" })).status).toBe(303);
    // Removed, his next request is in his personal project again.
    await srv.ports.sql.query("DELETE FROM project_members WHERE project_id = $1 AND user_id = $2", [team.id, bob.id]);
    expect(await (await jar.fetch(`${srv.url}/dashboard/${RUN}/tree`)).text()).not.toContain("node-team");
  });
});
