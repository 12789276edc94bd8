/**
 * The instance admin over real HTTP (docs/TEAMS.md, Instance admin): /admin lists every user and project to the
 * admins named by RUNWATCH_ADMIN_EMAILS and to nobody else; disabling a user ends their session, refuses their
 * login and the keys they created, and enabling them gives it all back.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, childServerEnv, CookieJar, csrfFrom, loginJar, ownPostgres, runwatchCli, startChildServer, startTestServer, type TestServer } from "./harness.js";

let srv: TestServer;
const tag = Math.random().toString(36).slice(2, 8);
const adminEmail = `admin-${tag}@example.com`;

beforeAll(async () => {
  srv = await startTestServer({ env: { RUNWATCH_ADMIN_EMAILS: ` ${adminEmail.toUpperCase()} , other@example.com` } });
});
afterAll(async () => {
  await srv?.close();
});

describe("instance admin", () => {
  it("shows /admin to admins only, and disabling a user ends their session, login and keys until enabled", async () => {
    const admin = await srv.user(adminEmail);
    const bob = await srv.user(`bob-${tag}@example.com`);
    const bobKey = await srv.key(bob.id);
    const adminJar = await loginJar(srv.url, admin.email);
    const bobJar = await loginJar(srv.url, bob.email);

    const page = await adminJar.fetch(`${srv.url}/admin`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(bob.email);
    expect(html).toContain(`bob-${tag}`); // Bob's personal project
    expect((await bobJar.fetch(`${srv.url}/admin`)).status).toBe(403);
    const csrfBob = csrfFrom(await (await bobJar.fetch(`${srv.url}/settings/api-keys`)).text());
    expect((await bobJar.form(`${srv.url}/admin/users/${admin.id}/disable`, { _csrf: csrfBob })).status).toBe(403);
    expect((await fetch(`${srv.url}/admin`, { redirect: "manual" })).status).toBe(302); // logged out: to the login page

    const csrf = csrfFrom(html);
    expect((await adminJar.form(`${srv.url}/admin/users/${admin.id}/disable`, { _csrf: csrf })).status).toBe(409); // not oneself
    expect((await adminJar.form(`${srv.url}/admin/users/999999999/disable`, { _csrf: csrf })).status).toBe(404);
    expect((await adminJar.form(`${srv.url}/admin/users/${bob.id}/disable`, { _csrf: "forged" })).status).toBe(403);
    expect((await fetch(`${srv.url}/api/runs`, bearer(bobKey))).status).toBe(200);
    const disabled = await adminJar.form(`${srv.url}/admin/users/${bob.id}/disable`, { _csrf: csrf });
    expect(disabled.status).toBe(302);
    expect(await (await adminJar.fetch(`${srv.url}/admin`)).text()).toMatch(/disabled <time/);

    const after = await bobJar.fetch(`${srv.url}/dashboard`);
    expect([after.status, after.headers.get("location")]).toEqual([302, "/login?next=%2Fdashboard"]);
    await expect(loginJar(srv.url, bob.email)).rejects.toThrow(/answered 401/);
    const refused = await fetch(`${srv.url}/api/runs`, bearer(bobKey));
    expect(refused.status).toBe(401);

    expect((await adminJar.form(`${srv.url}/admin/users/${bob.id}/enable`, { _csrf: csrf })).status).toBe(302);
    await loginJar(srv.url, bob.email);
    // An unknown key is remembered briefly (2 s): the key works again once that has passed.
    await new Promise((r) => setTimeout(r, 2_100));
    expect((await fetch(`${srv.url}/api/runs`, bearer(bobKey))).status).toBe(200);
  }, 60_000);
});

describe("the demo account", () => {
  const children = new Set<ChildProcess>();
  const dirs: string[] = [];
  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    await Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true })));
  });

  it("is never the instance admin: on a fresh instance the first registered user is, and sees an Admin link", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-demo-admin-"));
    dirs.push(dataDir);
    const tag = path.basename(dataDir).replace(/[^a-z0-9]/gi, "").slice(-10).toLowerCase();
    const { env, url } = await childServerEnv(dataDir, {
      NODE_ENV: "test", LOG_LEVEL: "error", KAFKA_TOPIC: `runwatch.test.demoadmin.${tag}`, CLICKHOUSE_DATABASE: `runwatch_test_demoadmin_${tag}`,
      ...(await ownPostgres("demoadmin")),
    });
    // The demo first, on the fresh data dir (no server runs yet: the command runs one for itself).
    expect(runwatchCli(env, "demo")).toContain("demo@runwatch.dev");
    await startChildServer(env, url, children);

    const jar = new CookieJar();
    const csrf = csrfFrom(await (await jar.fetch(`${url}/register`)).text());
    const registered = await jar.form(`${url}/register`, { _csrf: csrf, name: "First Real", email: `first-${tag}@example.com`, password: "correct horse battery", password_confirm: "correct horse battery" });
    expect(registered.status).toBe(302);
    expect((await jar.fetch(`${url}/admin`)).status).toBe(200);
    expect(await (await jar.fetch(`${url}/dashboard`)).text()).toMatch(/<a href="\/admin"[^>]*>.*Admin<\/a>/s);

    const demo = await loginJar(url, "demo@runwatch.dev", "runwatch-demo");
    expect((await demo.fetch(`${url}/admin`)).status).toBe(403);
    expect(await (await demo.fetch(`${url}/dashboard`)).text()).not.toContain('href="/admin"');
  }, 120_000);
});
