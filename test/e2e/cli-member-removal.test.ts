/**
 * `runwatch project remove-member` while `runwatch start` runs takes effect at once, as the settings page's button
 * does: the removed member's open dashboard socket on the project is closed (not_a_member, 4403), a new token for it
 * is refused, and their next request finds no project. The command reaches the server through its admin socket
 * (embedded) or opens the stores and Redis itself (scale mode), and either way the gateway hears of it. The same for
 * the member's API keys: a new role is theirs at once, and a removal revokes them, as the command's output says.
 */
import type { ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { childServerWithAccount, csrfFrom, loginJar, runwatchCli as cli } from "./harness.js";

const children = new Set<ChildProcess>();
const dirs: string[] = [];
afterAll(async () => {
  for (const c of children) c.kill("SIGKILL");
  for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
});

describe("runwatch project remove-member on a running server", () => {
  it("closes the removed member's live socket on the project and refuses their next request", async () => {
    const s = await childServerWithAccount("rmcli", {}, children, dirs);
    const gatewayPort = Number(s.env.RUNWATCH_GATEWAY_PORT);
    for (const end = Date.now() + 30_000; Date.now() < end;) {
      if (await fetch(`http://127.0.0.1:${gatewayPort}/health`).then((r) => r.ok, () => false)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const bob = s.email.replace("rmcli-", "bob-");
    cli({ ...s.env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", bob, "--name", "Bob");
    const slug = cli(s.env, "project", "create", "--email", s.email, "--name", "Shared agents").split(/\s+/).find((w) => w.startsWith("shared-agents"))!;
    expect(slug).toBeTruthy();
    cli(s.env, "project", "add-member", "--project", slug, "--email", bob, "--role", "viewer");

    // Bob's dashboard on the shared project, with its live socket subscribed.
    const jar = await loginJar(s.url, bob);
    const csrf = csrfFrom(await (await jar.fetch(`${s.url}/dashboard`)).text());
    expect((await jar.form(`${s.url}/projects/switch`, { _csrf: csrf, project: slug })).status).toBe(303);
    const token = await (await jar.fetch(`${s.url}/api/realtime/token`)).json() as { protocols: string[]; channel: string };
    expect(token.channel).toMatch(/^project\./);
    const frames: { type: string; error?: { code: string } }[] = [];
    const ws = new WebSocket(`ws://127.0.0.1:${gatewayPort}/ws`, token.protocols);
    const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
    ws.on("message", (d) => frames.push(JSON.parse(d.toString())));
    const until = async (pred: () => boolean, what: string) => {
      for (const end = Date.now() + 20_000; !pred();) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(frames)}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until(() => frames.some((f) => f.type === "hello"), "hello");
    ws.send(JSON.stringify({ type: "subscribe", channel: token.channel }));
    await until(() => frames.some((f) => f.type === "subscribed"), "subscribed");

    expect(cli(s.env, "project", "remove-member", "--project", slug, "--email", bob)).toBe(`Removed ${bob} from ${slug}.`);
    expect(await closed).toBe(4403);
    expect(frames.some((f) => f.type === "error" && f.error?.code === "not_a_member")).toBe(true);

    // The token minted before the removal is refused too, and the dashboard is back on Bob's own project.
    const again = new WebSocket(`ws://127.0.0.1:${gatewayPort}/ws`, token.protocols);
    const againFrames: { type: string; error?: { code: string } }[] = [];
    again.on("message", (d) => againFrames.push(JSON.parse(d.toString())));
    await new Promise((resolve) => again.on("close", resolve));
    expect(againFrames.some((f) => f.error?.code === "not_a_member")).toBe(true);
    const fresh = await (await jar.fetch(`${s.url}/api/realtime/token`)).json() as { channel: string };
    expect(fresh.channel).not.toBe(token.channel);
    expect(s.output()).not.toMatch(/uncaught error|unhandled rejection|could not announce/);
  }, 120_000);

  it("gives the member's API keys their new role at once, revokes them with the removal, and says so", async () => {
    const s = await childServerWithAccount("rmkeys", {}, children, dirs);
    const bob = s.email.replace("rmkeys-", "bob-");
    cli({ ...s.env, RUNWATCH_PASSWORD: "correct horse battery" }, "user", "create", "--email", bob, "--name", "Bob");
    const slug = cli(s.env, "project", "create", "--email", s.email, "--name", "Keyed agents").split(/\s+/).find((w) => w.startsWith("keyed-agents"))!;
    cli(s.env, "project", "add-member", "--project", slug, "--email", bob, "--role", "admin");
    const key = cli(s.env, "key", "create", "--email", bob, "--name", "bob-agent", "--project", slug);
    const call = (method: string, path: string, body?: unknown) => fetch(`${s.url}${path}`, {
      method, headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body),
    }).then(async (r) => (await r.arrayBuffer(), r.status));
    // The server has the key cached with Bob's role: what follows must reach that copy, well before it expires (10 s).
    expect(await call("POST", "/api/datasets", { name: "as admin" })).toBe(201);
    const within = async (what: string, read: () => Promise<number>, want: number) => {
      const started = Date.now();
      let got = await read();
      while (got !== want && Date.now() - started < 5_000) got = (await new Promise((r) => setTimeout(r, 50)), await read());
      expect([what, got]).toEqual([what, want]);
    };

    expect(cli(s.env, "project", "add-member", "--project", slug, "--email", bob, "--role", "viewer")).toBe(
      `${bob} is now viewer of ${slug}.\nThe API key they made there acts as viewer from now on.`,
    );
    await within("a viewer's write", () => call("POST", "/api/datasets", { name: "as viewer" }), 403);
    expect(await call("GET", "/api/runs")).toBe(200);

    expect(cli(s.env, "project", "remove-member", "--project", slug, "--email", bob)).toBe(`Removed ${bob} from ${slug}.\nRevoked 1 API key (bob-agent) they made there.`);
    await within("a removed member's read", () => call("GET", "/api/runs"), 401);
    expect(s.output()).not.toMatch(/uncaught error|unhandled rejection|could not/);
  }, 180_000);
});
