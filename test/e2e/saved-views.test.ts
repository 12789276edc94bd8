/**
 * Saved views of the runs list (docs/DASHBOARD.md, Saved views; docs/API.md): over real HTTP, the API saves, lists and
 * deletes a project's views with the answers the document names; the dashboard's form saves one and the sidebar of
 * every member links to the runs page that reproduces it; a viewer sees them but no save or delete control; another
 * project never sees them, by API or page.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, setMember } from "../../stores/accounts/projects.js";
import { switchProject } from "../../stores/accounts/current-project.js";
import { csrfFrom, json, loginJar, startTestServer, type CookieJar, type TestServer } from "./harness.js";

let srv: TestServer;
let team: { id: number; slug: string };
let ownerKey: string;
let viewerKey: string;
let strangerKey: string;
let owner: { id: number; email: string };
let viewer: { id: number; email: string };
let stranger: { id: number; email: string };

const api = (key: string, path: string, init: RequestInit = {}) =>
  fetch(`${srv.url}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` } });
const post = (key: string, body: unknown) => fetch(`${srv.url}/api/views`, json(key, body));
const names = async (key: string) => ((await (await api(key, "/api/views")).json()).views as { name: string }[]).map((v) => v.name);

beforeAll(async () => {
  srv = await startTestServer();
  owner = await srv.user();
  team = await createProject(srv.ports.sql, owner.id, "Views team");
  ownerKey = await srv.key(owner.id, { projectId: team.id });
  viewer = await srv.user();
  await setMember(srv.ports.sql, team.id, viewer.email, "viewer", owner.id);
  await switchProject(srv.ports.sql, viewer.id, team.slug);
  await switchProject(srv.ports.sql, owner.id, team.slug);
  viewerKey = await srv.key(viewer.id, { projectId: team.id });
  stranger = await srv.user();
  strangerKey = await srv.key(stranger.id);
}, 60_000);
afterAll(async () => {
  await srv?.close();
});

describe("the saved views API", () => {
  let id = "";

  it("saves a view with its canonical filter, columns and order, and lists it", async () => {
    const res = await post(ownerKey, { name: "Failed refunds", filter: "agent:refund   status:error", columns: ["cost", "agent", "tags"], sort: "cost", order: "desc" });
    expect(res.status).toBe(201);
    const { view } = await res.json();
    id = view.id;
    // The filter in its canonical form (core/runs-filter format), the columns in the table's order.
    expect(view).toMatchObject({ name: "Failed refunds", filter: "status:error agent:refund", columns: ["agent", "tags", "cost"], sort: "cost", order: "desc", created_by: owner.id });
    const list = await (await api(ownerKey, "/api/views")).json();
    expect(list.views).toEqual([view]);
    // Defaults: every run, the default columns, newest first.
    const plain = await (await post(ownerKey, { name: "Everything" })).json();
    expect(plain.view).toMatchObject({ filter: "", sort: "start_time", order: "desc" });
    expect(plain.view.columns).toContain("input");
  });

  it("refuses a taken name, a bad filter, column, order or name with the field named", async () => {
    const taken = await post(ownerKey, { name: "Failed refunds" });
    expect(taken.status).toBe(409);
    expect((await taken.json()).error).toMatchObject({ code: "view_exists", field: "name" });
    const bad: [unknown, string][] = [
      [{ name: "x", filter: "colour:red" }, "filter"],
      [{ name: "x", filter: "cost>abc" }, "filter"],
      [{ name: "x", filter: "a".repeat(2001) }, "filter"],
      [{ name: "x", columns: ["agent", "colour"] }, "columns.1"],
      [{ name: "x", columns: [] }, "columns"],
      [{ name: "x", sort: "colour" }, "sort"],
      [{ name: "x", order: "sideways" }, "order"],
      [{ name: "" }, "name"],
      [{ name: "n".repeat(101) }, "name"],
      [{ name: "tab\there" }, "name"],
      [{ filter: "status:error" }, "name"],
      [{ name: "x", extra: 1 }, "extra"],
    ];
    for (const [body, field] of bad) {
      const res = await post(ownerKey, body);
      const answer = await res.json();
      expect([JSON.stringify(body).slice(0, 60), res.status, answer.error.field]).toEqual([JSON.stringify(body).slice(0, 60), 422, field]);
    }
    expect((await fetch(`${srv.url}/api/views`, json(ownerKey, "[1]"))).status).toBe(422);
    expect((await fetch(`${srv.url}/api/views`, json(ownerKey, "{"))).status).toBe(400);
    expect(await names(ownerKey)).toEqual(["Everything", "Failed refunds"]);
  });

  it("lets a viewer's key read the views but not save or delete one", async () => {
    expect(await names(viewerKey)).toEqual(["Everything", "Failed refunds"]);
    const save = await post(viewerKey, { name: "Mine" });
    expect(save.status).toBe(403);
    expect((await save.json()).error.code).toBe("forbidden");
    expect((await api(viewerKey, `/api/views/${id}`, { method: "DELETE" })).status).toBe(403);
  });

  it("keeps another project's views apart", async () => {
    expect(await names(strangerKey)).toEqual([]);
    expect((await api(strangerKey, `/api/views/${id}`, { method: "DELETE" })).status).toBe(404);
    // The same name is free in another project.
    expect((await post(strangerKey, { name: "Failed refunds" })).status).toBe(201);
    expect(await names(ownerKey)).toEqual(["Everything", "Failed refunds"]);
  });

  it("deletes a view once", async () => {
    expect((await api(ownerKey, `/api/views/${id}`, { method: "DELETE" })).status).toBe(204);
    expect((await api(ownerKey, `/api/views/${id}`, { method: "DELETE" })).status).toBe(404);
    expect((await api(ownerKey, "/api/views/not-a-uuid", { method: "DELETE" })).status).toBe(404);
    expect(await names(ownerKey)).toEqual(["Everything"]);
  });

  it("caps a project's views", async () => {
    const { MAX_VIEWS_PER_PROJECT } = await import("../../stores/saved-views.js");
    const { insertSavedView } = await import("../../stores/saved-views.js");
    const other = await createProject(srv.ports.sql, owner.id, "Many views");
    for (let i = 0; i < MAX_VIEWS_PER_PROJECT; i++) {
      await insertSavedView(srv.ports.sql, other.id, owner.id, { name: `v${i}`, filter: "", columns: ["agent"], sort: "start_time", order: "desc" });
    }
    const key = await srv.key(owner.id, { projectId: other.id });
    const res = await post(key, { name: "one more" });
    expect(res.status).toBe(422);
    expect((await res.json()).error.message).toMatch(/at most 200 saved views/);
  });
});

describe("saved views on the dashboard", () => {
  let ownerJar: CookieJar;
  let viewerJar: CookieJar;

  beforeAll(async () => {
    ownerJar = await loginJar(srv.url, owner.email);
    viewerJar = await loginJar(srv.url, viewer.email);
  });

  const page = async (jar: CookieJar, path: string) => {
    const res = await jar.fetch(`${srv.url}/p/${team.slug}${path}`);
    return { status: res.status, html: await res.text() };
  };

  it("saves the page's filter, columns and order under a name, and every member's sidebar links to it", async () => {
    const state = { q: 'status:error tag:vip "time out"', sort: "duration", order: "asc", cols: "agent,duration,cost" };
    const { html } = await page(ownerJar, `/dashboard?${new URLSearchParams(state)}`);
    expect(html).toContain('id="save-view-form"');
    const res = await ownerJar.form(`${srv.url}/p/${team.slug}/runs/views`, { _csrf: csrfFrom(html), name: "Slow VIP errors", ...state });
    expect(res.status).toBe(303);
    const to = res.headers.get("location")!;
    const url = new URL(to, srv.url);
    expect(url.pathname).toBe(`/p/${team.slug}/dashboard`);
    expect(Object.fromEntries(url.searchParams)).toEqual({ q: 'status:error tag:vip "time out"', sort: "duration", order: "asc", cols: "agent,duration,cost" });

    // The URL alone reproduces the view: its filter in the box, its columns, its order; the sidebar marks it.
    for (const jar of [ownerJar, viewerJar]) {
      const shown = await page(jar, to.replace(`/p/${team.slug}`, ""));
      expect(shown.status).toBe(200);
      expect(shown.html).toContain('value="status:error tag:vip &quot;time out&quot;"');
      expect([...shown.html.matchAll(/<th[^>]*data-col="([a-z]+)"/g)].map((m) => m[1])).toEqual(["agent", "duration", "cost"]);
      expect(shown.html).toMatch(/data-col="duration" aria-sort="ascending"/);
      expect(shown.html).toMatch(/class="nav-link nav-view active"[^>]*title="Slow VIP errors"/);
      expect(shown.html).toContain("<h1>Slow VIP errors</h1>");
    }
  });

  it("shows a viewer the views but no save or delete control", async () => {
    const { html } = await page(viewerJar, "/dashboard");
    expect(html).toContain('title="Slow VIP errors"');
    expect(html).toContain('title="Everything"');
    expect(html).not.toContain('id="save-view-form"');
    const view = await page(viewerJar, `/dashboard?${new URLSearchParams({ q: 'status:error tag:vip "time out"', sort: "duration", order: "asc", cols: "agent,duration,cost" })}`);
    expect(view.html).not.toContain('id="delete-view-form"');
    const owners = await page(ownerJar, `/dashboard?${new URLSearchParams({ q: 'status:error tag:vip "time out"', sort: "duration", order: "asc", cols: "agent,duration,cost" })}`);
    expect(owners.html).toContain('id="delete-view-form"');
    // And a viewer's post is refused all the same.
    const res = await viewerJar.form(`${srv.url}/p/${team.slug}/runs/views`, { _csrf: csrfFrom(html), name: "Sneaky" });
    expect(res.status).toBe(403);
    expect(await names(ownerKey)).not.toContain("Sneaky");
  });

  it("shows a refused name by the form, keeping the page", async () => {
    const { html } = await page(ownerJar, "/dashboard");
    const res = await ownerJar.form(`${srv.url}/p/${team.slug}/runs/views`, { _csrf: csrfFrom(html), name: "Everything", q: "status:error" });
    expect(res.status).toBe(409);
    const body = await res.text();
    expect(body).toContain('id="save-error"');
    expect(body).toContain("a view named &quot;Everything&quot; exists");
    expect(body).toContain('value="status:error"');
  });

  it("deletes a view from its page and goes back to the same filter", async () => {
    const q = new URLSearchParams({ q: 'status:error tag:vip "time out"', sort: "duration", order: "asc", cols: "agent,duration,cost" });
    const { html } = await page(ownerJar, `/dashboard?${q}`);
    const path = /action="([^"]+\/runs\/views\/[^"]+\/delete)"/.exec(html)![1]!;
    const back = /name="back" value="([^"]+)"/.exec(html)![1]!.replaceAll("&amp;", "&");
    const res = await ownerJar.form(`${srv.url}${path}`, { _csrf: csrfFrom(html), back });
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe(`/p/${team.slug}${back}`);
    expect(await names(ownerKey)).toEqual(["Everything"]);
  });

  it("never shows another project's views", async () => {
    const jar = await loginJar(srv.url, stranger.email);
    const res = await jar.fetch(`${srv.url}/dashboard`);
    const html = await res.text();
    expect(html).toContain('title="Failed refunds"'); // the stranger's own
    expect(html).not.toContain('title="Everything"');
  });
});
