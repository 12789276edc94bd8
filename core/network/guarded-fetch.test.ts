import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postJson } from "../../agents-service/providers/http.js";
import { guardedFetch } from "./guarded-fetch.js";
import { TargetRefused } from "./ssrf.js";

let server: http.Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.url!);
    if (req.url === "/go") res.writeHead(302, { location: `http://127.0.0.1:${port}/inside` }).end();
    else res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A resolver that says every name is this machine: a rebound name, as far as the connection can tell. */
const rebound = async () => [{ address: "127.0.0.1", family: 4 }];
const causeOf = async (p: Promise<unknown>) => p.then(() => undefined, (err: Error & { cause?: unknown }) => err.cause ?? err);

describe("guardedFetch", () => {
  it("connects to the address its lookup answers, checked when the connection is made", async () => {
    const allowed = guardedFetch({ allowPrivate: true, resolve: rebound });
    // No DNS knows this name: reaching the server shows the connection used the checking lookup.
    expect(await (await allowed(`http://provider.invalid:${port}/v1/chat`, { method: "POST", body: "{}" })).json()).toEqual({ ok: true });
    expect(seen).toContain("/v1/chat");

    seen.length = 0;
    const refused = await causeOf(guardedFetch({ allowPrivate: false, resolve: rebound })(`http://provider.invalid:${port}/v1/chat`));
    expect(refused).toBeInstanceOf(TargetRefused);
    expect(String((refused as Error).message)).toMatch(/^host provider\.invalid is not allowed: [^0-9]*$/);
    expect(seen).toEqual([]);
  });

  it("refuses a private IP literal, which no lookup sees, and every redirect", async () => {
    await expect(guardedFetch({ allowPrivate: false })(`http://127.0.0.1:${port}/x`)).rejects.toBeInstanceOf(TargetRefused);
    await expect(guardedFetch({ allowPrivate: false })(`http://[::ffff:127.0.0.1]:${port}/x`)).rejects.toBeInstanceOf(TargetRefused);
    expect(seen).toEqual([]);
    // A public server that redirects to a private one is not followed (here both are loopback, allowed, to see it).
    await expect(guardedFetch({ allowPrivate: true, resolve: rebound })(`http://provider.invalid:${port}/go`)).rejects.toThrow();
    expect(seen).toEqual(["/go"]);
  });

  it("a provider call to a refused address is a 422 at once, not retried as a network failure; an allowed one is read as usual", async () => {
    seen.length = 0;
    let lookups = 0;
    const call = postJson({
      provider: "openai", url: `http://provider.invalid:${port}/v1/chat/completions`, headers: {}, body: {},
      policy: { timeoutMs: 5_000, maxRetries: 3, baseDelayMs: 1_000, maxBackoffMs: 1_000, maxRetryAfterMs: 1_000 },
      fetch: guardedFetch({ allowPrivate: false, resolve: () => (lookups++, rebound()) }),
    });
    await expect(call).rejects.toMatchObject({ status: 422, code: "provider_url_refused" });
    expect([lookups, seen]).toEqual([1, []]);
    // The same call where the address is allowed: the providers read undici's answer like the global fetch's.
    const allowed = await postJson({
      provider: "openai", url: `http://provider.invalid:${port}/v1/chat/completions`, headers: {}, body: {},
      policy: { timeoutMs: 5_000, maxRetries: 0, baseDelayMs: 1, maxBackoffMs: 1, maxRetryAfterMs: 1 },
      fetch: guardedFetch({ allowPrivate: true, resolve: rebound }),
    });
    expect(allowed).toEqual({ body: { ok: true }, attempts: 1 });
  });
});
