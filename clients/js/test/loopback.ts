/** A programmable ingest server on loopback (real HTTP), speaking the batch contract of docs/API.md (POST /api/ingest/batch). */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
  at: number;
}

export type Responder = (req: Received, n: number) => { status: number; headers?: Record<string, string>; body?: unknown } | undefined;

export const accept207 = (req: Received) => ({
  status: 207,
  body: { results: (req.body?.events ?? []).map((e: any, index: number) => ({ index, status: 202, event_id: e.event_id })) },
});

export class LoopbackServer {
  readonly requests: Received[] = [];
  responder: Responder = accept207;
  private server: http.Server | undefined;
  port = 0;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Events of all batch requests that were answered with a 2xx for that item. */
  accepted: any[] = [];

  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        const r: Received = { method: req.method!, url: req.url!, headers: req.headers, body: text ? JSON.parse(text) : undefined, at: Date.now() };
        this.requests.push(r);
        const out: { status: number; headers?: Record<string, string>; body?: unknown } = this.responder(r, this.requests.length) ?? accept207(r);
        if (out.status === 207 && Array.isArray((out.body as any)?.results) && Array.isArray(r.body?.events)) {
          for (const item of (out.body as any).results) if (item.status >= 200 && item.status < 300) this.accepted.push(r.body.events[item.index]);
        } else if (out.status >= 200 && out.status < 300 && Array.isArray(r.body?.events)) {
          this.accepted.push(...r.body.events);
        }
        res.writeHead(out.status, { "content-type": "application/json", ...out.headers });
        res.end(out.body === undefined ? "" : JSON.stringify(out.body));
      });
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(port, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    s.closeAllConnections?.();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** A loopback port that nothing listens on (bound once, then released). */
export async function freePort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, stepMs = 20): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await sleep(stepMs);
  }
}
