/**
 * Prompts over real HTTP (docs/PROMPTS.md): versions pushed and read by label, number and as the newest; labels moved
 * and rolled back; the diff of two versions; the ETag a client revalidates with; hostile input refused naming the
 * field; a viewer's key reads but does not write; another project's prompts are 404s; every change is in the audit log.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { auditLog, createProject, setMember } from "../../stores/accounts/projects.js";
import { startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let ownerKey: string;
let memberKey: string;
let viewerKey: string;
let strangerKey: string;

const send = (key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });

const CHAT = [
  { role: "system", content: "You are {{persona}}." },
  { role: "user", content: "Answer {{ question }} in {{lang}}; {{not a var}} stays." },
];

beforeAll(async () => {
  srv = await startTestServer();
  const owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Prompt team");
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  const member = await srv.user();
  await setMember(srv.ports.sql, team.id, member.email, "member", owner.id);
  memberKey = await srv.key(member.id, { projectId: team.id });
  const viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  viewerKey = await srv.key(viewer.id, { projectId: team.id });
  strangerKey = (await srv.account()).key;
});
afterAll(async () => {
  await srv?.close();
});

describe("the prompts API", () => {
  it("pushes immutable versions numbered from 1, with their variables, config, author and message", async () => {
    const res = await send(memberKey, "POST", "/api/prompts/support-answer/versions", {
      prompt: CHAT, config: { provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.2 }, tools: [{ type: "function", function: { name: "lookup" } }] },
      message: "first cut", labels: ["production"],
    });
    const answer = await res.json();
    expect([res.status, answer.error]).toEqual([201, undefined]);
    const { prompt } = answer;
    expect(prompt).toMatchObject({
      name: "support-answer", version: 1, type: "chat", prompt: CHAT, message: "first cut", labels: ["latest", "production"],
      variables: ["persona", "question", "lang"], config: { provider: "openai", model: "gpt-4o-mini", parameters: { temperature: 0.2 } },
    });
    expect(prompt.author).toEqual(expect.any(String));
    const v2 = await (await send(ownerKey, "POST", "/api/prompts/support-answer/versions", { prompt: [CHAT[0], { role: "user", content: "Answer {{question}} briefly in {{lang}}." }], config: { model: "gpt-4o" }, message: "shorter" })).json();
    expect(v2.prompt).toMatchObject({ version: 2, labels: ["latest"], variables: ["persona", "question", "lang"] });
    const text = await (await send(ownerKey, "POST", "/api/prompts/summary/versions", { prompt: "Summarise {{text}}" })).json();
    expect(text.prompt).toMatchObject({ version: 1, type: "text", prompt: "Summarise {{text}}", config: {}, message: "" });
  });

  it("reads by label, by number and the newest; lists prompts and versions", async () => {
    const byLabel = await (await send(viewerKey, "GET", "/api/prompts/support-answer?label=production")).json();
    expect(byLabel.prompt).toMatchObject({ version: 1, labels: ["production"] });
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer")).json()).prompt.version).toBe(2);
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer?label=latest")).json()).prompt.version).toBe(2);
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer?version=1")).json()).prompt.message).toBe("first cut");
    const list = await (await send(viewerKey, "GET", "/api/prompts")).json();
    expect(list.prompts.map((p: any) => [p.name, p.latest_version, p.labels])).toEqual([["summary", 1, {}], ["support-answer", 2, { production: 1 }]]);
    const versions = await (await send(viewerKey, "GET", "/api/prompts/support-answer/versions")).json();
    expect(versions.versions.map((v: any) => v.version)).toEqual([2, 1]);
    const page = await (await send(viewerKey, "GET", "/api/prompts/support-answer/versions?limit=1&before=2")).json();
    expect(page.versions.map((v: any) => v.version)).toEqual([1]);
    for (const [path, status] of [
      ["/api/prompts/nope", 404], ["/api/prompts/support-answer?label=staging", 404], ["/api/prompts/support-answer?version=9", 404],
      ["/api/prompts/support-answer?version=0", 422], ["/api/prompts/support-answer?label=Bad%20Label", 422], ["/api/prompts/support-answer?label=x&version=1", 422],
    ] as const) expect([path, (await send(viewerKey, "GET", path)).status]).toEqual([path, status]);
  });

  it("answers with an ETag and a 304 until the label moves", async () => {
    const first = await send(viewerKey, "GET", "/api/prompts/support-answer?label=production");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^".+"$/);
    expect(first.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const again = await send(viewerKey, "GET", "/api/prompts/support-answer?label=production", undefined, { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    await send(memberKey, "PUT", "/api/prompts/support-answer/labels/production", { version: 2 });
    const moved = await send(viewerKey, "GET", "/api/prompts/support-answer?label=production", undefined, { "if-none-match": etag });
    expect(moved.status).toBe(200);
    expect((await moved.json()).prompt.version).toBe(2);
  });

  it("moves labels and rolls back, naming the version left", async () => {
    const back = await send(memberKey, "PUT", "/api/prompts/support-answer/labels/production", { version: 1 });
    expect(back.status).toBe(200);
    expect(await back.json()).toMatchObject({ label: "production", version: 1, previous: 2, forced: false, gate: { violations: [] } });
    const staging = await (await send(memberKey, "PUT", "/api/prompts/support-answer/labels/staging", { version: 2 })).json();
    expect(staging).toEqual({ label: "staging", version: 2, previous: null, forced: false, gate: null });
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer?label=production")).json()).prompt.version).toBe(1);
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer?version=2")).json()).prompt.labels).toEqual(["latest", "staging"]);
    for (const [label, body, field] of [
      ["production", { version: 3 }, "version"], ["production", { version: "2" }, "version"], ["production", {}, "version"],
      ["latest", { version: 1 }, "label"], ["Prod", { version: 1 }, "label"],
    ] as const) {
      const res = await send(memberKey, "PUT", `/api/prompts/support-answer/labels/${label}`, body);
      expect([label, JSON.stringify(body), res.status, (await res.json()).error.field]).toEqual([label, JSON.stringify(body), 422, field]);
    }
    expect((await send(memberKey, "PUT", "/api/prompts/nope/labels/production", { version: 1 })).status).toBe(404);
    expect((await send(memberKey, "DELETE", "/api/prompts/support-answer/labels/staging")).status).toBe(204);
    expect((await send(memberKey, "DELETE", "/api/prompts/support-answer/labels/staging")).status).toBe(404);
  });

  it("diffs two versions' prompts and configs", async () => {
    const res = await send(viewerKey, "GET", "/api/prompts/support-answer/diff?from=1&to=2");
    expect(res.status).toBe(200);
    const { diff } = await res.json();
    expect(diff.prompt.changed).toBe(true);
    expect(diff.prompt.parts).toContainEqual({ op: "remove", text: "Answer {{ question }} in {{lang}}; {{not a var}} stays.\n" });
    expect(diff.prompt.parts).toContainEqual({ op: "add", text: "Answer {{question}} briefly in {{lang}}.\n" });
    expect(diff.prompt.parts[0]).toEqual({ op: "same", text: "[system]\nYou are {{persona}}.\n[user]\n" });
    expect(diff.config.changed).toBe(true);
    expect((await (await send(viewerKey, "GET", "/api/prompts/support-answer/diff?from=2&to=2")).json()).diff.prompt.changed).toBe(false);
    expect((await send(viewerKey, "GET", "/api/prompts/support-answer/diff?from=1")).status).toBe(422);
    expect((await send(viewerKey, "GET", "/api/prompts/support-answer/diff?from=1&to=7")).status).toBe(404);
  });

  it("bounds the diff of two very different versions", async () => {
    const lines = (seed: string) => Array.from({ length: 3000 }, (_, i) => `${seed} line ${i}`).join("\n");
    await send(ownerKey, "POST", "/api/prompts/huge/versions", { prompt: lines("a") });
    await send(ownerKey, "POST", "/api/prompts/huge/versions", { prompt: lines("b") });
    const started = Date.now();
    const { diff } = await (await send(viewerKey, "GET", "/api/prompts/huge/diff?from=1&to=2")).json();
    expect(diff.prompt).toEqual({ parts: null, too_large: true, changed: true });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("refuses hostile input with the field named, never a 500", async () => {
    const bad: [string, unknown, string | undefined][] = [
      ["p", {}, "prompt"],
      ["p", { prompt: "" }, "prompt"],
      ["p", { prompt: "   " }, "prompt"],
      ["p", { prompt: "x".repeat(100_001) }, "prompt"],
      ["p", { prompt: [] }, "prompt"],
      ["p", { prompt: [{ role: "wizard", content: "x" }] }, "prompt"],
      ["p", { prompt: [{ role: "user" }] }, "prompt"],
      ["p", { prompt: Array.from({ length: 201 }, () => ({ role: "user", content: "x" })) }, "prompt"],
      ["p", { prompt: "nul \u0000" }, "prompt"],
      ["p", { prompt: "x", config: { model: "" } }, "config.model"],
      ["p", { prompt: "x", config: { temperature: 1 } }, "config.temperature"],
      ["p", { prompt: "x", config: { parameters: { big: "x".repeat(70_000) } } }, "config"],
      ["p", { prompt: "x", config: { tools: "all" } }, "config.tools"],
      ["p", { prompt: "x", message: "m".repeat(1001) }, "message"],
      ["p", { prompt: "x", labels: ["latest"] }, "labels.0"],
      ["p", { prompt: "x", labels: ["Has Space"] }, "labels.0"],
      ["p", { prompt: "x", extra: 1 }, "extra"],
      ["bad%20name", { prompt: "x" }, "name"],
      [".dot", { prompt: "x" }, "name"],
      ["n".repeat(101), { prompt: "x" }, "name"],
    ];
    for (const [name, body, field] of bad) {
      const res = await send(memberKey, "POST", `/api/prompts/${name}/versions`, body);
      const answer = await res.json();
      const named = answer.error.field === field || answer.error.field?.startsWith(`${field}.`) ? field : answer.error.field;
      expect([JSON.stringify(body).slice(0, 60), res.status, named]).toEqual([JSON.stringify(body).slice(0, 60), 422, field]);
    }
    expect((await send(memberKey, "POST", "/api/prompts/p/versions", "{not json")).status).toBe(400);
    expect((await send(memberKey, "POST", "/api/prompts/p/versions", "[1]")).status).toBe(422);
    expect((await send(viewerKey, "GET", "/api/prompts/p")).status).toBe(404);
  });

  it("lets a viewer read but not write, and keeps other projects apart", async () => {
    expect((await send(viewerKey, "POST", "/api/prompts/support-answer/versions", { prompt: "x" })).status).toBe(403);
    expect((await send(viewerKey, "PUT", "/api/prompts/support-answer/labels/production", { version: 2 })).status).toBe(403);
    expect((await send(viewerKey, "DELETE", "/api/prompts/support-answer/labels/production")).status).toBe(403);
    expect((await send(strangerKey, "GET", "/api/prompts/support-answer")).status).toBe(404);
    expect((await (await send(strangerKey, "GET", "/api/prompts")).json()).prompts).toEqual([]);
    expect((await send(strangerKey, "PUT", "/api/prompts/support-answer/labels/production", { version: 2 })).status).toBe(404);
  });

  it("writes every change to the project's audit log", async () => {
    const log = await auditLog(srv.ports.sql, team.id, 100);
    const prompts = log.filter((e) => e.action.startsWith("prompt.")).map((e) => [e.action, e.target]).reverse();
    expect(prompts).toEqual([
      ["prompt.version", "support-answer v1"], ["prompt.version", "support-answer v2"], ["prompt.version", "summary v1"],
      ["prompt.label", "support-answer production"], ["prompt.label", "support-answer production"], ["prompt.label", "support-answer staging"],
      ["prompt.unlabel", "support-answer staging"], ["prompt.version", "huge v1"], ["prompt.version", "huge v2"],
    ]);
    expect(log.find((e) => e.action === "prompt.label" && e.target === "support-answer production")?.details).toMatchObject({ prompt: "support-answer", label: "production", version: 1, from: 2 });
  });
});
