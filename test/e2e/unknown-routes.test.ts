/**
 * An unknown path is a 404 not_found whatever the method and credentials: the CSRF check guards routes that can
 * change something, so an API client's typo (a Bearer POST to a made-up path) is not answered 403 csrf_failed.
 * A real cookie route without its token still is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, loginJar, startTestServer, type TestAccount, type TestServer } from "./harness.js";

let srv: TestServer;
let acct: TestAccount;
beforeAll(async () => {
  srv = await startTestServer();
  acct = await srv.account();
});
afterAll(async () => { await srv?.close(); });

describe("unknown routes", () => {
  it.each(["/api/ingestt", "/api/runs/x/made-up", "/api/made-up", "/v2/traces", "/made-up"])("a Bearer POST to %s is 404 not_found", async (path) => {
    const res = await fetch(`${srv.url}${path}`, json(acct.key, { event_type: "run_start" }));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });

  it("a logged-in form POST to a made-up path is 404; to a real route without the token, 403", async () => {
    const jar = await loginJar(srv.url, acct.email);
    expect((await jar.form(`${srv.url}/settings/made-up`, { name: "x" })).status).toBe(404);
    const res = await jar.form(`${srv.url}/logout`, {});
    expect(res.status).toBe(403);
  });
});
