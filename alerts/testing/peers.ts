/**
 * Real peers on loopback for notification tests: an HTTP receiver (records every request, answers with a
 * programmable status) and an SMTP server (smtp-server, records every message). Both listen on 127.0.0.1:0.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export interface HttpReceiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** Status for the next request (by 0-based index); default 200. */
  respond: (index: number, req: ReceivedRequest) => number;
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

const waitUntil = async (ok: () => boolean, timeoutMs: number, what: () => string) => {
  const deadline = Date.now() + timeoutMs;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: HttpReceiver = {
    url: "",
    requests,
    respond: () => 200,
    waitFor: async (n, timeoutMs = 15_000) => {
      await waitUntil(() => requests.length >= n, timeoutMs, () => `expected ${n} requests, got ${requests.length}`);
      return requests;
    },
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const r: ReceivedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() };
      const status = receiver.respond(requests.length, r);
      requests.push(r);
      res.writeHead(status, { "content-type": "text/plain" }).end(status < 300 ? "ok" : "try again later");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpReceiver {
  readonly port: number;
  readonly messages: ReceivedMail[];
  /** Credentials seen in AUTH, if any. */
  readonly logins: { username: string; password: string }[];
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

export async function startSmtpReceiver(opts: { user?: string; pass?: string } = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const logins: { username: string; password: string }[] = [];
  const server = new SMTPServer({
    disabledCommands: opts.user ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    authOptional: !opts.user,
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ username: auth.username ?? "", password: auth.password ?? "" });
      if (auth.username === opts.user && auth.password === opts.pass) cb(null, { user: auth.username });
      else cb(new Error("Invalid username or password"));
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    messages,
    logins,
    waitFor: async (n, timeoutMs = 15_000) => {
      await waitUntil(() => messages.length >= n, timeoutMs, () => `expected ${n} mails, got ${messages.length}`);
      return messages;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
