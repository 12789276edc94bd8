/**
 * Human in the loop over real HTTP (web + pipeline + chDB + PGlite): a waiting run's question shows on
 * /dashboard/{run} with an answer form; the answer (form post, CSRF) reaches an agent long-polling
 * GET /api/runs/{id}/input; answering twice is 409; a second question in the run needs a new answer;
 * answers also come through POST /api/runs/{id}/input with the Bearer key.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, CookieJar, csrfFrom, json, startTestServer, waitForRun, type TestServer } from "./harness.js";
import type { SessionUser } from "../../web/deps.js";

let srv: TestServer;
let key: string;
let otherKey: string;
let user: SessionUser;
const jar = new CookieJar();

beforeAll(async () => {
  srv = await startTestServer({ pipeline: true });
  user = await srv.user();
  key = await srv.key(user.id);
  otherKey = await srv.key((await srv.user()).id);
  const csrf = csrfFrom(await (await jar.fetch(`${srv.url}/login`)).text());
  const res = await jar.form(`${srv.url}/login`, { _csrf: csrf, email: user.email, password: "correct horse battery" });
  expect([302, 303]).toContain(res.status);
});
afterAll(() => srv?.close());

const send = async (event: Record<string, unknown>) => {
  const res = await fetch(`${srv.url}/api/ingest`, json(key, event));
  expect(res.status, await res.clone().text()).toBe(202);
  return (await res.json()) as { event_id: string };
};
const input = (id: string, query = "", k = key) => fetch(`${srv.url}/api/runs/${encodeURIComponent(id)}/input${query}`, bearer(k));

describe("human input answered on the dashboard", () => {
  const id = "hitl-e2e-1";

  it("shows the question, delivers the answer to a long-polling agent, refuses a second answer", async () => {
    await send({ event_type: "run_start", sdk_run_id: id, agent_name: "approver", payload: { framework: "langgraph" } });
    const asked = await send({ event_type: "human_input_requested", sdk_run_id: id, payload: { question: "Deploy v2 to prod?", context: { diff: "+12 -3" }, channel: "dashboard" } });
    await waitForRun(srv.url, key, id, (b) => b.run.status === "waiting_for_input");

    expect((await input(id)).status).toBe(204);

    const page = await (await jar.fetch(`${srv.url}/dashboard/${id}`)).text();
    expect(page).toContain("Deploy v2 to prod?");
    expect(page).toContain("+12 -3");
    expect(page).toContain(`name="request_event_id" value="${asked.event_id}"`);

    const started = Date.now();
    const poll = input(id, "?wait=20");
    await new Promise((r) => setTimeout(r, 300));
    const posted = await jar.form(`${srv.url}/dashboard/${id}/input`, { _csrf: csrfFrom(page), request_event_id: asked.event_id, response: "yes, ship it" });
    expect(posted.status).toBe(303);
    expect(posted.headers.get("location")).toBe(`/dashboard/${id}#human-input`);

    const got = await poll;
    expect(got.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(5_000); // woken by the notifier, not by the 5 s fallback check
    const answer = await got.json();
    expect(answer).toMatchObject({ response: "yes, ship it", responded_by: `Test User <${user.email}>`, request_event_id: asked.event_id });
    expect(Date.parse(answer.answered_at)).toBeGreaterThan(0);

    // The run page now shows the answer instead of the form.
    const after = await (await jar.fetch(`${srv.url}/dashboard/${id}`)).text();
    expect(after).toContain("Answer sent");
    expect(after).not.toContain('name="response"');

    const twice = await jar.fetch(`${srv.url}/dashboard/${id}/input`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json", "x-csrf-token": csrfFrom(page) },
      body: new URLSearchParams({ request_event_id: asked.event_id, response: "no" }).toString(),
    });
    expect(twice.status).toBe(409);
    expect((await twice.json()).error.code).toBe("already_answered");

    // Until the agent reports it, the same answer is served again (an agent that restarted gets it too).
    expect((await (await input(id)).json()).response).toBe("yes, ship it");
  });

  it("a second question in the same run needs a new answer", async () => {
    await send({ event_type: "human_input_received", sdk_run_id: id, payload: { response: "yes, ship it", responded_by: "x" } });
    await waitForRun(srv.url, key, id, (b) => b.run.status === "running");
    expect((await input(id)).status).toBe(204);

    const second = await send({ event_type: "human_input_requested", sdk_run_id: id, payload: { question: "Also migrate the DB?" } });
    await waitForRun(srv.url, key, id, (b) => b.run.status === "waiting_for_input");
    const waited = Date.now();
    const none = await input(id, "?wait=1");
    expect(none.status).toBe(204);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(900);

    // An answer for the old question is refused: it names the newer one.
    const stale = await fetch(`${srv.url}/api/runs/${id}/input`, json(key, { response: "late", request_event_id: "01900000-0000-7000-8000-000000000000" }));
    expect(stale.status).toBe(409);
    expect((await stale.json()).error.code).toBe("question_superseded");

    // Postgres refuses NUL in text: a NUL in the responder's name is a 422 naming it, in the answer a U+FFFD.
    const nulName = await fetch(`${srv.url}/api/runs/${id}/input`, json(key, { response: "x", responded_by: "ops\u0000bot" }));
    expect(nulName.status).toBe(422);
    expect((await nulName.json()).error.field).toBe("responded_by");

    const viaApi = await fetch(`${srv.url}/api/runs/${id}/input`, json(key, { response: "not\u0000yet", responded_by: "ops-bot" }));
    expect(viaApi.status).toBe(201);
    expect(await viaApi.json()).toMatchObject({ response: "not\uFFFDyet", responded_by: "ops-bot", request_event_id: second.event_id });
    expect((await (await input(id)).json()).response).toBe("not\uFFFDyet");
  });

  it("validates input and scopes runs to the key's user", async () => {
    expect((await input("no-such-run")).status).toBe(404);
    expect((await input(id, "", otherKey)).status).toBe(404);
    const bad = await input(id, "?wait=31");
    expect(bad.status).toBe(422);
    expect((await bad.json()).error.field).toBe("wait");
    expect((await fetch(`${srv.url}/api/runs/${id}/input`)).status).toBe(401);
    const empty = await fetch(`${srv.url}/api/runs/${id}/input`, json(key, { response: "  " }));
    expect(empty.status).toBe(422);
    expect((await empty.json()).error.field).toBe("response");
    const noCsrf = await jar.form(`${srv.url}/dashboard/${id}/input`, { response: "sneaky" });
    expect(noCsrf.status).toBe(403);
  });
});
