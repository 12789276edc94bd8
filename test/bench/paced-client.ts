/**
 * An evenly paced, open-loop HTTP/1.1 load generator on raw keep-alive sockets, for latency at a given rate.
 *
 * Why not node:http: its client costs tens of µs of CPU per request, and the load generator shares the 2 cores
 * with the server it measures; at ~10,000 req/s it took half a core and its own event loop fell behind, which
 * showed up as server latency. Here a request is a prebuilt buffer written to an idle socket and a response is
 * found by its Content-Length (every response of the ingest API has one), so a request costs a few µs.
 *
 * Latency is measured from each request's scheduled time (no coordinated omission): a request that waits for a
 * free connection, or that the generator sends late, counts that wait. `sendLag` reports how late the generator
 * itself was, so a saturated generator cannot pass for a slow server.
 */
import net from "node:net";

export interface PacedResult {
  /** Latencies in ms, sorted ascending. */
  readonly latencies: number[];
  /** How late requests left the generator (ms, sorted). */
  readonly sendLag: number[];
  readonly statuses: Map<number, number>;
  readonly errors: number;
  readonly elapsedSeconds: number;
}

interface Conn {
  readonly socket: net.Socket;
  buf: Buffer;
  /** Scheduled time of the request in flight, or null when idle. */
  scheduled: number | null;
}

const HEADER_END = Buffer.from("\r\n\r\n");

export function httpRequestBytes(url: URL, method: string, headers: Record<string, string>, body: Buffer): Buffer {
  const head =
    `${method} ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\n` +
    Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join("") +
    `Content-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/** Sends requests[i % requests.length] at `rate` per second for `seconds`, over at most maxConnections sockets. */
export async function pacedLoad(url: URL, requests: readonly Buffer[], opts: { rate: number; seconds: number; maxConnections?: number }): Promise<PacedResult> {
  const maxConnections = opts.maxConnections ?? 512;
  const latencies: number[] = [];
  const sendLag: number[] = [];
  const statuses = new Map<number, number>();
  let errors = 0;
  const idle: Conn[] = [];
  const all = new Set<Conn>();
  const queue: { scheduled: number; req: Buffer }[] = [];
  const total = Math.round(opts.rate * opts.seconds);
  let finished = 0;
  let done!: () => void;
  const allDone = new Promise<void>((r) => (done = r));
  const complete = () => {
    if (++finished === total) done();
  };

  const send = (c: Conn, scheduled: number, req: Buffer) => {
    c.scheduled = scheduled;
    sendLag.push(performance.now() - scheduled);
    c.socket.write(req);
  };
  const release = (c: Conn) => {
    c.scheduled = null;
    const next = queue.shift();
    if (next) send(c, next.scheduled, next.req);
    else idle.push(c);
  };
  const open = (): Conn => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port), noDelay: true });
    const c: Conn = { socket, buf: Buffer.alloc(0), scheduled: null };
    all.add(c);
    socket.on("data", (chunk) => {
      c.buf = c.buf.length ? Buffer.concat([c.buf, chunk]) : chunk;
      for (;;) {
        const end = c.buf.indexOf(HEADER_END);
        if (end < 0) return;
        const head = c.buf.toString("latin1", 0, end);
        const m = /\r\ncontent-length:\s*(\d+)/i.exec(head);
        const length = m ? Number(m[1]) : 0;
        if (c.buf.length < end + 4 + length) return;
        const status = Number(head.slice(9, 12));
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        latencies.push(performance.now() - c.scheduled!);
        c.buf = c.buf.subarray(end + 4 + length);
        complete();
        release(c);
      }
    });
    const fail = () => {
      if (!all.delete(c)) return;
      const i = idle.indexOf(c);
      if (i >= 0) idle.splice(i, 1);
      if (c.scheduled !== null) {
        errors++;
        complete();
      }
    };
    socket.on("error", fail);
    socket.on("close", fail);
    return c;
  };

  const interval = 1000 / opts.rate;
  const start = performance.now();
  for (let i = 0; i < total; ) {
    const now = performance.now();
    // Send every request whose time has come, then sleep until the next one is due.
    while (i < total && start + i * interval <= now) {
      const scheduled = start + i * interval;
      const req = requests[i % requests.length]!;
      const c = idle.pop() ?? (all.size < maxConnections ? open() : undefined);
      if (c) send(c, scheduled, req);
      else queue.push({ scheduled, req });
      i++;
    }
    if (i < total) await new Promise((r) => setTimeout(r, Math.max(0, start + i * interval - performance.now())));
  }
  if (total > 0) await allDone;
  const elapsedSeconds = (performance.now() - start) / 1000;
  for (const c of all) c.socket.destroy();
  latencies.sort((a, b) => a - b);
  sendLag.sort((a, b) => a - b);
  return { latencies, sendLag, statuses, errors, elapsedSeconds };
}

/** The q-quantile of sorted values. */
export const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
