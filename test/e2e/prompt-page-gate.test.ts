/**
 * The prompt's page over real HTTP: the gate's rules set and removed from its form (members and above, as the API;
 * bad input shown again by its field; every change audited as through the API), and per version the mean of each
 * score given to the runs whose LLM calls used it, beside their runs, latency, tokens and cost — in a team's project,
 * where the member who sends the runs is not the project (its LLM calls are the project's).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { csrfFrom, json, loginJar, startTestServer, until, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let memberJar: CookieJar;
let viewerJar: CookieJar;
let memberKey: string;

const page = async (jar: CookieJar, path: string) => {
  const res = await jar.fetch(`${srv.url}/p/${team.slug}${path}`);
  return { status: res.status, html: await res.text() };
};
const post = async (jar: CookieJar, path: string, fields: Record<string, string>) => {
  const csrf = csrfFrom((await page(jar, "/prompts/triage")).html);
  const res = await jar.form(`${srv.url}/p/${team.slug}${path}`, { _csrf: csrf, ...fields });
  return { status: res.status, location: res.headers.get("location"), html: res.status === 303 ? "" : await res.text() };
};
const api = (path: string, init?: RequestInit) => fetch(`${srv.url}${path}`, init ?? { headers: { authorization: `Bearer ${memberKey}` } }).then((r) => r.json() as Promise<any>);

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 } });
  const owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Prompt gate page");
  const member = await srv.user();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  const viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  for (const u of [member, viewer]) await switchProject(srv.ports.sql, u.id, team.slug);
  memberKey = await srv.key(member.id, { projectId: team.id });
  memberJar = await loginJar(srv.url, member.email);
  viewerJar = await loginJar(srv.url, viewer.email);
  for (const prompt of ["Sort {{ticket}}", "Sort {{ticket}} into one queue"]) {
    expect((await fetch(`${srv.url}/api/prompts/triage/versions`, json(memberKey, { prompt }))).status).toBe(201);
  }
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

describe("the prompt page's gate rules and scores per version", () => {
  it("adds, changes and removes a gate rule from the form; a viewer sees the rules without it", async () => {
    const added = await post(memberJar, "/prompts/triage/gate/rules", { score_name: "correctness", max_drop: "0.05" });
    expect(added.status).toBe(303);
    expect(decodeURIComponent(added.location ?? "")).toContain("correctness mean may drop by at most 0.05");
    expect((await api("/api/prompts/triage/gate")).rules).toEqual([{ score_name: "correctness", max_drop: 0.05 }]);
    expect((await post(memberJar, "/prompts/triage/gate/rules", { score_name: "correctness", max_drop: "0.1" })).status).toBe(303);
    expect((await post(memberJar, "/prompts/triage/gate/rules", { score_name: "tone", max_drop: "0" })).status).toBe(303);
    const shown = await page(memberJar, "/prompts/triage");
    expect(shown.html).toContain('data-rule="correctness"');
    expect(shown.html).toMatch(/data-rule="correctness"><td>correctness<\/td><td class="num">0\.1</);
    expect(shown.html).toContain('id="add-gate-rule"');

    const bad = await post(memberJar, "/prompts/triage/gate/rules", { score_name: "tone", max_drop: "-1" });
    expect(bad.status).toBe(422);
    expect(bad.html).toContain("max_drop must be a number");
    expect(bad.html).toMatch(/name="max_drop"[^>]*value="-1"/);
    expect((await post(memberJar, "/prompts/triage/gate/rules", { score_name: "", max_drop: "0.1" })).status).toBe(422);

    const removed = await post(memberJar, "/prompts/triage/gate/rules/remove", { score_name: "tone" });
    expect(removed.status).toBe(303);
    expect((await api("/api/prompts/triage/gate")).rules).toEqual([{ score_name: "correctness", max_drop: 0.1 }]);
    expect((await post(memberJar, "/prompts/triage/gate/rules/remove", { score_name: "tone" })).status).toBe(404);

    const viewer = await page(viewerJar, "/prompts/triage");
    expect(viewer.html).toContain('data-rule="correctness"');
    expect(viewer.html).not.toContain('id="add-gate-rule"');
    expect(viewer.html).not.toContain("/gate/rules/remove");
    expect((await post(viewerJar, "/prompts/triage/gate/rules", { score_name: "x", max_drop: "1" })).status).toBe(403);
    expect((await post(viewerJar, "/prompts/triage/gate/rules/remove", { score_name: "correctness" })).status).toBe(403);

    const audit = await srv.ports.sql.query<{ action: string }>("SELECT action FROM project_audit_log WHERE project_id = $1 AND action LIKE 'prompt.gate%' ORDER BY id", [team.id]);
    expect(audit.map((a) => a.action)).toEqual(["prompt.gate_rule", "prompt.gate_rule", "prompt.gate_rule", "prompt.gate_rule_removed"]);
  });

  it("shows per version the mean of each score its runs were given", async () => {
    const runOf = (id: string, version: number) => [
      { event_type: "step", sdk_run_id: id, agent_name: "triage-bot", span_id: `${id}-llm`, payload: { kind: "llm", node_name: "sort", phase: "start", model: "gpt-4o-mini" } },
      { event_type: "step", sdk_run_id: id, span_id: `${id}-llm`, payload: { kind: "llm", node_name: "sort", phase: "end", model: "gpt-4o-mini", prompt_tokens: 10, completion_tokens: 2, duration_ms: 100, prompt_name: "triage", prompt_version: version } },
    ];
    const events = [...runOf("t-1", 1), ...runOf("t-2", 1), ...runOf("t-3", 2)];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(memberKey, { events }))).status).toBe(207);
    for (const [id, value] of [["t-1", 1], ["t-2", 0.5], ["t-3", 0.2]] as const) {
      await until(`score on ${id}`, async () => (await fetch(`${srv.url}/api/scores`, json(memberKey, { sdk_run_id: id, name: "correctness", value }))).status, (s) => s === 201);
    }
    const cell = (html: string, version: number) => new RegExp(`<tr data-version="${version}"[\\s\\S]*?data-usage="scores">([\\s\\S]*?)</td>`).exec(html)?.[1] ?? "";
    const shown = await until("the scores per version", () => page(memberJar, "/prompts/triage"), (p) => cell(p.html, 1).includes("correctness") && cell(p.html, 2).includes("correctness"));
    expect(cell(shown.html, 1)).toMatch(/correctness 0\.75/);
    expect(cell(shown.html, 1)).toContain('title="2 scores"');
    expect(cell(shown.html, 2)).toMatch(/correctness 0\.2/);
    expect(shown.html).toMatch(/<tr data-version="1"[\s\S]*?data-usage="runs">2</);
  });
});
