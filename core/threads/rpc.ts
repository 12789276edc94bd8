/**
 * Request/response calls over a worker_threads message port, both ways: each side serves named handlers and
 * calls the other's. A call's arguments and result are structured-cloned (Transferables in `transfer` move
 * instead). Errors cross as plain data and come back as Errors with the same name, message, code and stack.
 */
import type { MessagePort, Transferable, Worker } from "node:worker_threads";

export type Handler = (...args: any[]) => unknown;

/** A handler's result whose buffers move to the caller instead of being copied. */
export class Transfer<T> {
  constructor(
    readonly value: T,
    readonly list: readonly Transferable[],
  ) {}
}

/**
 * bytes, or a copy of them that owns its whole ArrayBuffer: only such a buffer may be transferred (a Buffer is
 * often a view into a larger, shared one: Node's pool, a socket's read buffer).
 */
export function ownBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return (own ? bytes : bytes.slice()) as Uint8Array<ArrayBuffer>;
}
export type Handlers = Record<string, Handler>;

type Endpoint = Pick<MessagePort | Worker, "postMessage" | "on" | "off">;

type Message =
  | { readonly t: "call"; readonly id: number; readonly method: string; readonly args: unknown[] }
  | { readonly t: "notify"; readonly method: string; readonly args: unknown[] }
  | { readonly t: "ok"; readonly id: number; readonly value: unknown }
  | { readonly t: "err"; readonly id: number; readonly error: WireError };

interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly code?: unknown;
}

export class Rpc {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private readonly listener = (m: Message) => this.receive(m);

  constructor(
    private readonly endpoint: Endpoint,
    private readonly handlers: Handlers,
  ) {
    endpoint.on("message", this.listener);
  }

  call<T>(method: string, args: unknown[] = [], transfer?: readonly Transferable[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.endpoint.postMessage({ t: "call", id, method, args } satisfies Message, transfer as Transferable[] | undefined);
      } catch (err) {
        this.pending.delete(id);
        reject(err);
      }
    });
  }

  /** A call without a reply. */
  notify(method: string, args: unknown[] = []): void {
    this.endpoint.postMessage({ t: "notify", method, args } satisfies Message);
  }

  /** Rejects every call still waiting for a reply (the other side is gone). */
  failPending(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  detach(): void {
    this.endpoint.off("message", this.listener);
  }

  private receive(m: Message): void {
    if (m.t === "ok" || m.t === "err") {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.t === "ok") p.resolve(m.value);
      else p.reject(fromWire(m.error));
      return;
    }
    const handler = this.handlers[m.method];
    const run = async () => {
      if (!handler) throw new Error(`no handler for ${m.method}`);
      return handler(...m.args);
    };
    const done = run();
    if (m.t === "notify") {
      done.catch((err: unknown) => console.error(`rpc notification ${m.method} failed`, err));
      return;
    }
    done.then(
      (value) =>
        value instanceof Transfer ? this.reply({ t: "ok", id: m.id, value: value.value }, value.list) : this.reply({ t: "ok", id: m.id, value }),
      (err: unknown) => this.reply({ t: "err", id: m.id, error: toWire(err) }),
    );
  }

  private reply(m: Message, transfer?: readonly Transferable[]): void {
    try {
      this.endpoint.postMessage(m, transfer as Transferable[] | undefined);
    } catch (err) {
      // A result that cannot be cloned: report that instead of leaving the caller waiting forever.
      if (m.t === "ok") this.endpoint.postMessage({ t: "err", id: m.id, error: toWire(err) } satisfies Message);
    }
  }
}

function toWire(err: unknown): WireError {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, stack: err.stack, code: typeof code === "string" || typeof code === "number" ? code : undefined };
  }
  return { name: "Error", message: String(err) };
}

function fromWire(w: WireError): Error {
  const err = new Error(w.message);
  err.name = w.name;
  if (w.stack) err.stack = w.stack;
  if (w.code !== undefined) (err as { code?: unknown }).code = w.code;
  return err;
}
