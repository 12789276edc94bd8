/**
 * A project's own LLM provider keys for its judges, over real HTTP (docs/EVALUATORS.md, Provider keys): an admin saves
 * the team's OpenAI key and its own OpenAI-compatible server; the playground and the online rules of that project then
 * reach that server with that key (the fake on loopback records it), while another project's judge still uses the
 * service's key; the key is sealed in Postgres and never answered; a member may not set it; a removed key hands the
 * judge back to the service's; a key sealed under another SESSION_SECRET is an evaluation error that says so; and a
 * base URL on a private address is refused when the operator has not allowed it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../core/logger.js";
import { sealerFor } from "../../core/sealed.js";
import { ValidationError } from "../../core/errors.js";
import { startEvaluationWorker, type EvaluationWorker } from "../../evaluation/jobs/worker.js";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { providerKeySealer, setProviderKey } from "../../stores/evaluation/provider-keys.js";
import { startFakeProviders, type FakeProviders } from "../../agents-service/test/fake-providers.js";
import { KEYS, SECRET, startHarness, type Harness } from "../../agents-service/test/harness.js";
import { bearer, json, startTestServer, type TestServer, until, waitForRun } from "./harness.js";

// Both fakes listen on loopback: the operator allows private provider servers here (web reads it per request).
process.env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS = "1";

const TEAM_KEY = "sk-team-own-0123456789";
let agents: Harness;
let theirs: FakeProviders;
let srv: TestServer;
let worker: EvaluationWorker;
let keys: { owner: string; member: string; outsider: string };
let teamId: number;

beforeAll(async () => {
  agents = await startHarness({ allowPrivateProviderUrls: true, llmMaxRetries: 0 });
  theirs = await startFakeProviders({ openai: TEAM_KEY, anthropic: undefined, gemini: undefined });
  theirs.judge = () => ({ explanation: "the team's judge", score: true });
  agents.fake.judge = () => ({ explanation: "the service's judge", score: true });
  srv = await startTestServer({
    pipeline: true,
    pipelineOptions: { maxWaitMs: 5 },
    // Every project may judge on the service's keys here (by default only the instance admins' may: judge-spend.test.ts).
    env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_AGENTS_URL: agents.url, AGENT_SECRET: SECRET, RUNWATCH_OPERATOR_JUDGE_KEY: "all" },
  });
  const owner = await srv.user();
  const member = await srv.user();
  const team = await createProject(srv.ports.sql, owner.id, "Keyed team");
  teamId = team.id;
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  const outsider = await srv.account();
  keys = { owner: await srv.key(owner.id, { projectId: team.id }), member: await srv.key(member.id, { projectId: team.id }), outsider: outsider.key };
  worker = await startEvaluationWorker(srv.ports, srv.ports.config, createLogger("error"), {
    settings: { concurrency: 4, pollMs: 50, leaseSeconds: 30, backoffMs: 100, maxBackoffMs: 300 }, projects: () => [team.id, outsider.id],
  });
  for (const key of [keys.owner, keys.outsider]) {
    const events = ["k-1", "k-2"].flatMap((id) => [
      { event_type: "run_start", sdk_run_id: id, agent_name: "keyed-bot", payload: { input: "What is 2+2?" } },
      { event_type: "run_end", sdk_run_id: id, payload: { output: "4" } },
    ]);
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(key, { events }))).status).toBe(207);
  }
  // The judges read the runs: wait until the pipeline has stored them (a loaded machine takes a moment).
  for (const key of [keys.owner, keys.outsider]) for (const id of ["k-1", "k-2"]) await waitForRun(srv.url, key, id, (v) => v.run.status === "success");
}, 60_000);
afterAll(async () => {
  delete process.env.RUNWATCH_ALLOW_PRIVATE_PROVIDER_URLS;
  await worker?.close();
  await srv?.close();
  await theirs?.close();
  await agents?.close();
});

const send = async (method: string, path: string, body: unknown, key: string) => {
  const res = await fetch(`${srv.url}${path}`, { ...json(key, body), method });
  return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as any) };
};
const get = async (path: string, key: string) => (await fetch(`${srv.url}${path}`, bearer(key))).json() as Promise<any>;
const judgeOf = async (key: string) =>
  (await send("POST", "/api/evaluators", { name: "correct", type: "llm_judge", prompt: "Is {{output}} right for {{input}}?", output: { type: "boolean" } }, key)).body.evaluator.id as string;
const fromService = () => agents.fake.requests.filter((r) => r.headers.authorization === `Bearer ${KEYS.openai}`).length;

describe("a project's own provider keys", () => {
  it("are set by an admin only, kept sealed, and never answered", async () => {
    const body = { api_key: TEAM_KEY, base_url: `${theirs.url}/openai/v1`, default_model: "gpt-4o-mini" };
    const byMember = await send("PUT", "/api/provider-keys/openai", body, keys.member);
    expect(byMember.status).toBe(403);
    const mistral = await send("PUT", "/api/provider-keys/mistral", body, keys.owner);
    expect(mistral.body.error?.field, JSON.stringify(mistral)).toBe("provider");
    expect((await send("PUT", "/api/provider-keys/openai", { ...body, api_key: "has spaces in it" }, keys.owner)).body.error.field).toBe("api_key");
    expect((await send("PUT", "/api/provider-keys/openai", { ...body, base_url: "ftp://example.com" }, keys.owner)).body.error.field).toBe("base_url");
    expect((await send("PUT", "/api/provider-keys/openai", { ...body, default_model: "a model; drop" }, keys.owner)).body.error.field).toBe("default_model");
    const saved = await send("PUT", "/api/provider-keys/openai", body, keys.owner);
    expect(saved.status).toBe(200);
    expect(saved.body.provider_key).toMatchObject({ provider: "openai", key_hint: "6789", base_url: `${theirs.url}/openai/v1`, default_model: "gpt-4o-mini" });
    const listed = await get("/api/provider-keys", keys.member);
    expect(JSON.stringify(listed)).not.toContain(TEAM_KEY);
    expect(listed.provider_keys).toHaveLength(1);
    expect((await get("/api/provider-keys", keys.outsider)).provider_keys).toEqual([]);
    const [row] = await srv.ports.sql.query<{ api_key: string }>("SELECT api_key FROM project_provider_keys WHERE project_id = $1", [teamId]);
    expect(row!.api_key).not.toContain(TEAM_KEY);
    const audit = await srv.ports.sql.query<{ action: string; details: unknown }>("SELECT action, details FROM project_audit_log WHERE project_id = $1 AND action LIKE 'provider_key.%'", [teamId]);
    expect(audit.map((a) => a.action)).toEqual(["provider_key.set"]);
    expect(JSON.stringify(audit)).not.toContain(TEAM_KEY);
  });

  it("send the project's judge calls — playground and online — to its server with its key; others use the service's", async () => {
    const teamJudge = await judgeOf(keys.owner);
    const before = fromService();
    const tried = await send("POST", `/api/evaluators/${teamJudge}/try`, { sdk_run_id: "k-1" }, keys.owner);
    expect(tried.status).toBe(200);
    expect(tried.body.score?.value, JSON.stringify(tried.body).slice(0, 600)).toBe(true);
    expect(theirs.requests).toHaveLength(1);
    expect(theirs.requests[0]!.headers.authorization).toBe(`Bearer ${TEAM_KEY}`);
    expect(theirs.requests[0]!.body.model).toBe("gpt-4o-mini");
    expect(fromService()).toBe(before);

    await send("POST", "/api/evaluation-rules", { evaluator_id: teamJudge, filter: { agent_name: "keyed-bot" }, sampling: 1 }, keys.owner);
    const events = [
      { event_type: "run_start", sdk_run_id: "k-3", agent_name: "keyed-bot", payload: { input: "What is 3+3?" } },
      { event_type: "run_end", sdk_run_id: "k-3", payload: { output: "6" } },
    ];
    expect((await fetch(`${srv.url}/api/ingest/batch`, json(keys.owner, { events }))).status).toBe(207);
    await until("the online judge", () => get("/api/runs/k-3/scores", keys.owner), (b) => b.scores?.length === 1);
    expect(theirs.requests).toHaveLength(2);
    expect(fromService()).toBe(before);

    // A backfill's estimate prices the model the judge will use: the project key's default model.
    const fresh = (await send("POST", "/api/evaluators", { name: "fresh", type: "llm_judge", prompt: "Is {{output}} right?", output: { type: "boolean" } }, keys.owner)).body.evaluator.id;
    const rule = (await send("POST", "/api/evaluation-rules", { evaluator_id: fresh, filter: { agent_name: "keyed-bot" }, sampling: 1 }, keys.owner)).body.rule;
    const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    expect((await send("POST", `/api/evaluation-rules/${rule.id}/backfill`, range, keys.owner)).body.estimate.basis).toContain("gpt-4o-mini");

    // Another project, with no key of its own: the service's.
    const otherJudge = await judgeOf(keys.outsider);
    expect((await send("POST", `/api/evaluators/${otherJudge}/try`, { sdk_run_id: "k-1" }, keys.outsider)).status).toBe(200);
    expect(fromService()).toBe(before + 1);
    expect(theirs.requests).toHaveLength(2);
  });

  it("say so when a key cannot be opened, and hand the judge back to the service's once removed", async () => {
    const teamJudge = await judgeOf(keys.owner).catch(async () => (await get("/api/evaluators", keys.owner)).evaluators[0].id as string);
    const foreign = sealerFor("another-secret-of-at-least-32-characters", "project provider keys").seal(TEAM_KEY);
    await srv.ports.sql.query("UPDATE project_provider_keys SET api_key = $2 WHERE project_id = $1", [teamId, foreign]);
    const unreadable = await send("POST", `/api/evaluators/${teamJudge}/try`, { sdk_run_id: "k-2" }, keys.owner);
    expect(unreadable.body.error?.code ?? unreadable.body.evaluation_error?.code ?? JSON.stringify(unreadable.body)).toContain("provider_key_unreadable");
    expect((await send("DELETE", "/api/provider-keys/openai", null, keys.member)).status).toBe(403);
    expect((await send("DELETE", "/api/provider-keys/openai", null, keys.owner)).status).toBe(204);
    expect((await send("DELETE", "/api/provider-keys/openai", null, keys.owner)).status).toBe(404);
    const before = fromService();
    expect((await send("POST", `/api/evaluators/${teamJudge}/try`, { sdk_run_id: "k-2" }, keys.owner)).status).toBe(200);
    expect(fromService()).toBe(before + 1);
  });

  it("takes a short placeholder key for a keyless server, shown by no hint at all", async () => {
    const saved = await send("PUT", "/api/provider-keys/gemini", { api_key: "none" }, keys.owner);
    expect(saved.body.provider_key.key_hint).toBe("");
    expect((await send("DELETE", "/api/provider-keys/gemini", null, keys.owner)).status).toBe(204);
  });

  it("keeps the saved key for a change of model, and takes it again for a change of server", async () => {
    const server = `${theirs.url}/openai/v1`;
    expect((await send("PUT", "/api/provider-keys/openai", { api_key: TEAM_KEY, base_url: server, default_model: "gpt-4o-mini" }, keys.owner)).status).toBe(200);
    const sealed = async () => (await srv.ports.sql.query<{ api_key: string }>("SELECT api_key FROM project_provider_keys WHERE project_id = $1 AND provider = 'openai'", [teamId]))[0]!.api_key;
    const before = await sealed();
    const changed = await send("PUT", "/api/provider-keys/openai", { base_url: server, default_model: "gpt-4.1-mini" }, keys.owner);
    expect([changed.status, changed.body.provider_key]).toEqual([200, expect.objectContaining({ key_hint: "6789", base_url: server, default_model: "gpt-4.1-mini" })]);
    expect(await sealed()).toBe(before);
    // The judge now asks the team's server for the new model, with the same key.
    const teamJudge = (await get("/api/evaluators", keys.owner)).evaluators[0].id as string;
    const seen = theirs.requests.length;
    expect((await send("POST", `/api/evaluators/${teamJudge}/try`, { sdk_run_id: "k-1" }, keys.owner)).status).toBe(200);
    expect([theirs.requests[seen]!.headers.authorization, theirs.requests[seen]!.body.model]).toEqual([`Bearer ${TEAM_KEY}`, "gpt-4.1-mini"]);
    // The key never goes to a server it was not entered for: a new one, or none, takes the key again.
    for (const base_url of ["http://127.0.0.1:9/v1", ""]) {
      const moved = await send("PUT", "/api/provider-keys/openai", { base_url, default_model: "gpt-4.1-mini" }, keys.owner);
      expect([moved.status, moved.body.error?.field]).toEqual([422, "api_key"]);
    }
    expect((await send("PUT", "/api/provider-keys/anthropic", { default_model: "claude-sonnet-4" }, keys.owner)).body.error?.field).toBe("api_key");
    expect((await send("PUT", "/api/provider-keys/openai", { default_model: "x" }, keys.member)).status).toBe(403);
    expect(await sealed()).toBe(before);
    const audit = await srv.ports.sql.query<{ action: string }>("SELECT action FROM project_audit_log WHERE project_id = $1 AND action = 'provider_key.model'", [teamId]);
    expect(audit).toHaveLength(1);
    expect((await send("DELETE", "/api/provider-keys/openai", null, keys.owner)).status).toBe(204);
  });

  it("refuses a server on a private or link-local address unless the operator allows it", async () => {
    const writes = { sql: srv.ports.sql, sealer: providerKeySealer("x".repeat(40)), allowPrivate: false };
    for (const base_url of ["http://127.0.0.1:11434/v1", "http://169.254.169.254/latest", "http://[::1]/v1", "http://10.0.0.5/v1"]) {
      const err = await setProviderKey(writes, teamId, null, "openai", { api_key: TEAM_KEY, base_url }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe("base_url");
    }
  });
});
