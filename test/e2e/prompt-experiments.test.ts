/**
 * Experiments over prompt versions over real HTTP (docs/PROMPTS.md): the experiments API names the prompt version an
 * experiment ran (both fields or neither, a version the project has), and the prompt's page lists each version's
 * experiments with their scores, linking the comparison with production's experiment on the same dataset.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { bearer, json, loginJar, startTestServer, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let key: string;
let jar: CookieJar;

const post = async (path: string, body: unknown, method = "POST") => {
  const res = await fetch(`${srv.url}${path}`, { ...json(key, body), method });
  return { status: res.status, body: (await res.json()) as any };
};

/** An experiment of prompt version `version` on dataset "prompt set" whose items score `scores` on correctness. */
async function experiment(version: number, scores: number[]): Promise<string> {
  const { status, body } = await post("/api/experiments", { dataset: "prompt set", name: `prompt v${version}`, prompt_name: "answer", prompt_version: version });
  expect(status).toBe(201);
  const id = body.experiment.id as string;
  const events = scores.flatMap((_, i) => [
    { event_type: "run_start", sdk_run_id: `p${version}-${i}`, agent_name: "qa-bot", payload: { experiment_id: id, dataset_item_id: `i${i}`, repetition: 1 } },
    { event_type: "run_end", sdk_run_id: `p${version}-${i}`, payload: { output: "answer" } },
  ]);
  expect((await post("/api/ingest/batch", { events })).body).toMatchObject({ rejected: 0 });
  for (let i = 0; i < scores.length; i++) {
    for (let tries = 0; ; tries++) {
      const res = await post("/api/scores", { sdk_run_id: `p${version}-${i}`, name: "correctness", value: scores[i] });
      if (res.status === 201) break;
      if (tries > 100) throw new Error(`score not stored: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return id;
}

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true, pipelineOptions: { maxWaitMs: 5 }, env: { RUNWATCH_RATE_LIMIT_PER_MINUTE: "100000" } });
  const owner = await srv.account();
  team = await createProject(srv.ports.sql, owner.id, "Prompt experiments");
  const member = await srv.account();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  await switchProject(srv.ports.sql, member.id, team.slug);
  key = await srv.key(member.id, { projectId: team.id });
  jar = await loginJar(srv.url, member.email);
  for (const text of ["Answer {{question}}", "Answer {{question}} briefly"]) expect((await post("/api/prompts/answer/versions", { prompt: text })).status).toBe(201);
  expect((await post("/api/prompts/answer/labels/production", { version: 1 }, "PUT")).status).toBe(200);
  await post("/api/datasets", { name: "prompt set" });
  await post("/api/datasets/prompt%20set/items", { items: [0, 1, 2, 3].map((i) => ({ id: `i${i}`, input: i })) });
});
afterAll(async () => {
  await srv?.close();
});

describe("experiments over prompt versions", () => {
  it("refuses a prompt version the experiment cannot name, naming the field", async () => {
    const base = { dataset: "prompt set", name: "bad" };
    expect((await post("/api/experiments", { ...base, prompt_name: "answer" })).body.error).toMatchObject({ field: "prompt_version" });
    expect((await post("/api/experiments", { ...base, prompt_version: 1 })).body.error).toMatchObject({ field: "prompt_name" });
    const missing = await post("/api/experiments", { ...base, prompt_name: "nope", prompt_version: 1 });
    expect([missing.status, missing.body.error.field]).toEqual([422, "prompt_name"]);
    const beyond = await post("/api/experiments", { ...base, prompt_name: "answer", prompt_version: 3 });
    expect([beyond.status, beyond.body.error.field, beyond.body.error.message]).toEqual([422, "prompt_version", expect.stringContaining("versions 1 to 2")]);
    expect((await post("/api/experiments", { ...base, prompt_name: "a b", prompt_version: 1 })).body.error).toMatchObject({ field: "prompt_name" });
  });

  it("lists each version's experiments on the prompt's page, linking the comparison with production's", async () => {
    const v1 = await experiment(1, [1, 1, 1, 0.6]);
    const v2 = await experiment(2, [1, 0, 1, 0]);
    const listed = (await (await fetch(`${srv.url}/api/experiments?dataset=prompt%20set`, bearer(key))).json()) as any;
    expect(listed.experiments.map((e: any) => [e.name, e.prompt_name, e.prompt_version, e.scores.correctness.mean])).toEqual([
      ["prompt v2", "answer", 2, 0.5], ["prompt v1", "answer", 1, 0.9],
    ]);

    const html = await (await jar.fetch(`${srv.url}/p/${team.slug}/prompts/answer`)).text();
    const rows = html.slice(html.indexOf('id="experiments"'), html.indexOf('id="diff"'));
    expect(rows).toMatch(new RegExp(`data-experiment="${v2}" data-version="2">[\\s\\S]*?prompt v2[\\s\\S]*?correctness 0.5[\\s\\S]*?` +
      `compare\\?experiments=${v1},${v2}&amp;baseline=${v1}">Compare with production \\(v1\\)`));
    expect(rows).toMatch(new RegExp(`data-experiment="${v1}" data-version="1">[\\s\\S]*?correctness 0.9`));
    // The link opens the comparison the datasets pages already have.
    const compare = await jar.fetch(`${srv.url}/p/${team.slug}/datasets/prompt%20set/compare?experiments=${v1},${v2}&baseline=${v1}`);
    expect(compare.status).toBe(200);
    expect(await compare.text()).toContain("prompt v2");
  });
});
