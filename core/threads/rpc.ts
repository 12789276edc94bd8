/**
 * Request/response calls over a worker_threads message port, both ways: each side serves the methods of one
 * protocol interface and calls the other side's, both checked by the compiler (`Rpc<Local, Remote>`, where each
 * side's handlers are `Local` and the other's `Remote`). A call's arguments and result are structured-cloned
 * (Transferables in `transfer` move instead). Errors cross as data: core errors (effect tagged errors such as
 * Unavailable or ValidationError) come back as the same class with the same fields, others as Errors with the
 * same name, message, code and stack.
 */
import * as workerThreads from "node:worker_threads";
import type { MessagePort, Transferable, Worker } from "node:worker_threads";
import { reviveTaggedError } from "../errors.js";

/** A protocol (an interface of methods): method name → signature. */
export type MethodsOf<T> = { [K in keyof T]: (...args: any[]) => unknown };

/** What the caller receives for a handler's return value (a Transfer delivers its value). */
export type Result<R> = Delivered<Awaited<R>>;
type Delivered<X> = X extends Transfer<infer T> ? T : X;

/** A handler's result whose buffers move to the caller instead of being copied. */
export class Transfer<T> {
  constructor(
    readonly value: T,
    readonly list: readonly Transferable[],
  ) {}
}

/** Node.js 21+: whether postMessage refuses to transfer this buffer (Node marks some it allocates so). */
const isMarkedAsUntransferable = (workerThreads as { isMarkedAsUntransferable?: (o: object) => boolean }).isMarkedAsUntransferable;

/** The transfer list less what Node.js refuses to transfer: those are cloned with the message instead. */
function movable(list: readonly Transferable[] | undefined): Transferable[] | undefined {
  return list && isMarkedAsUntransferable ? list.filter((t) => !isMarkedAsUntransferable(t as object)) : (list as Transferable[] | undefined);
}

/**
 * bytes, or a copy of them that owns its whole ArrayBuffer: only such a buffer may be transferred (a Buffer is
 * often a view into a larger, shared one: Node's pool, a socket's read buffer). Node.js 22 and 24 also mark some
 * whole buffers as untransferable; those are copied too.
 */
export function ownBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer
    && !isMarkedAsUntransferable?.(bytes.buffer);
  // new Uint8Array(bytes) copies into a buffer of its own; a Buffer's slice() would be a view of the same one.
  return (own ? bytes : new Uint8Array(bytes)) as Uint8Array<ArrayBuffer>;
}

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
  /** An effect tagged error: its tag and own fields. */
  readonly tag?: string;
  readonly fields?: Record<string, unknown>;
}

export class Rpc<Local extends MethodsOf<Local>, Remote extends MethodsOf<Remote>> {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private readonly listener = (m: Message) => this.receive(m);

  constructor(
    private readonly endpoint: Endpoint,
    private readonly handlers: Local,
  ) {
    endpoint.on("message", this.listener);
  }

  call<K extends keyof Remote & string>(method: K, args: Parameters<Remote[K]>, transfer?: readonly Transferable[]): Promise<Result<ReturnType<Remote[K]>>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        this.endpoint.postMessage({ t: "call", id, method, args } satisfies Message, movable(transfer));
      } catch (err) {
        this.pending.delete(id);
        reject(err);
      }
    });
  }

  /** A call without a reply. */
  notify<K extends keyof Remote & string>(method: K, args: Parameters<Remote[K]>): void {
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
    const handler = Object.hasOwn(this.handlers, m.method) ? (this.handlers as Record<string, (...args: unknown[]) => unknown>)[m.method] : undefined;
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
      this.endpoint.postMessage(m, movable(transfer));
    } catch (err) {
      // A result that cannot be cloned: report that instead of leaving the caller waiting forever.
      if (m.t === "ok") this.endpoint.postMessage({ t: "err", id: m.id, error: toWire(err) } satisfies Message);
    }
  }
}

function toWire(err: unknown): WireError {
  const tag = (err as { _tag?: unknown } | null)?._tag;
  if (err instanceof Error && typeof tag === "string") {
    const { _tag, cause, ...fields } = err as unknown as Record<string, unknown>;
    void _tag;
    void cause; // may not survive cloning; its message is in the stack
    return { name: err.name, message: err.message, stack: err.stack, tag, fields: { ...fields, message: err.message } };
  }
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { name: err.name, message: err.message, stack: err.stack, code: typeof code === "string" || typeof code === "number" ? code : undefined };
  }
  return { name: "Error", message: String(err) };
}

function fromWire(w: WireError): Error {
  if (w.tag !== undefined) {
    const revived = reviveTaggedError(w.tag, w.fields ?? {});
    if (w.stack) revived.stack = w.stack;
    return revived;
  }
  const err = new Error(w.message);
  err.name = w.name;
  if (w.stack) err.stack = w.stack;
  if (w.code !== undefined) (err as { code?: unknown }).code = w.code;
  return err;
}
