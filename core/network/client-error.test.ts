/** Requests Node's parser refuses get the status Node would send, with a JSON body saying why. */
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerClientError } from "./client-error.js";

let server: http.Server;
let port: number;

beforeAll(async () => {
  server = http.createServer((_req, res) => res.end("ok"));
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** Sends raw bytes and reads the whole answer. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(bytes));
    let answer = "";
    socket.on("data", (d) => (answer += d.toString()));
    socket.on("end", () => resolve(answer));
    socket.on("error", reject);
  });
}

describe("answerClientError", () => {
  it("answers a request line over 16 KiB with a 431 and a JSON error", async () => {
    const res = await fetch(`http://127.0.0.1:${port}/runs?q=${"x".repeat(20_000)}`);
    expect(res.status).toBe(431);
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("request_too_large");
    expect(body.error.message).toMatch(/16 KiB/);
  });

  it("answers bytes that are not HTTP with a 400 and a JSON error, and keeps serving", async () => {
    const answer = await raw("HELLO THERE\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(answer.split("\r\n\r\n")[1]!)).toEqual({ error: { code: "bad_request", message: "malformed HTTP request" } });
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe("ok");
  });
});
