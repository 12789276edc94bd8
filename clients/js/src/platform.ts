/**
 * The only contact with the host runtime. Everything is feature-detected so the same build runs on
 * Node ≥ 18, Deno, Bun, browsers and edge runtimes: no node:* imports, only fetch, timers and crypto.
 */

interface ProcessLike {
  env?: Record<string, string | undefined>;
  on?: (event: string, listener: () => void) => unknown;
}

const g = globalThis as unknown as {
  process?: ProcessLike;
  Deno?: { unrefTimer?: (id: number) => void; refTimer?: (id: number) => void; env?: { get(name: string): string | undefined } };
  crypto?: { randomUUID?: () => string; getRandomValues?: <T extends ArrayBufferView>(a: T) => T };
};

/** Reads an environment variable where the runtime exposes one (process.env, Deno.env); undefined elsewhere. */
export function readEnv(name: string): string | undefined {
  try {
    const v = g.process?.env?.[name];
    if (v !== undefined && v !== "") return v;
    const d = g.Deno?.env?.get(name);
    if (d !== undefined && d !== "") return d;
  } catch {
    // Deno without --allow-env throws; behave as if unset.
  }
  return undefined;
}

export type TimerHandle = ReturnType<typeof setTimeout>;

/** Lets the runtime exit even though the timer is pending (Node/Bun `unref`, Deno `unrefTimer`). */
export function unrefTimer(t: TimerHandle): void {
  const h = t as unknown as { unref?: () => void };
  if (typeof h?.unref === "function") h.unref();
  else if (typeof t === "number" && typeof g.Deno?.unrefTimer === "function") g.Deno.unrefTimer(t);
}

/** The opposite of unrefTimer: the timer keeps the runtime alive (used while someone awaits a flush). */
export function refTimer(t: TimerHandle): void {
  const h = t as unknown as { ref?: () => void };
  if (typeof h?.ref === "function") h.ref();
  else if (typeof t === "number" && typeof g.Deno?.refTimer === "function") g.Deno.refTimer(t);
}

/**
 * Registers a callback for the runtime's "event loop is about to go idle" moment (Node/Bun beforeExit).
 * One process listener serves every client, so creating many clients never trips MaxListeners warnings.
 * Returns the unregister function, or undefined where the runtime has no such event.
 */
const exitCallbacks = new Set<() => void>();
let exitHookInstalled = false;
export function onBeforeExit(listener: () => void): (() => void) | undefined {
  const p = g.process;
  if (!p || typeof p.on !== "function") return undefined;
  if (!exitHookInstalled) {
    try {
      p.on("beforeExit", () => {
        for (const cb of [...exitCallbacks]) {
          try {
            cb();
          } catch {
            /* one client's failure must not stop the others */
          }
        }
      });
      exitHookInstalled = true;
    } catch {
      return undefined;
    }
  }
  exitCallbacks.add(listener);
  return () => {
    exitCallbacks.delete(listener);
  };
}

export function randomBytes(n: number): Uint8Array {
  const b = new Uint8Array(n);
  if (typeof g.crypto?.getRandomValues === "function") {
    g.crypto.getRandomValues(b);
  } else {
    for (let i = 0; i < n; i++) b[i] = Math.floor(Math.random() * 256);
  }
  return b;
}

export function randomUuid(): string {
  if (typeof g.crypto?.randomUUID === "function") return g.crypto.randomUUID();
  const b = randomBytes(16);
  b[6] = 0x40 | (b[6]! & 0x0f);
  b[8] = 0x80 | (b[8]! & 0x3f);
  return formatUuid(b);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function formatUuid(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) s += "-";
    s += HEX[b[i]!];
  }
  return s;
}

/** A value that follows async calls (AsyncLocalStorage where the runtime has it), for spans nesting by context. */
export interface AsyncContext<T> {
  run<R>(value: T, fn: () => R): R;
  get(): T | undefined;
}

/**
 * Node ≥ 20.16 (and Bun, Deno) expose AsyncLocalStorage through process.getBuiltinModule without an import;
 * elsewhere spans nest only when given a parent explicitly.
 */
export function asyncContext<T>(): AsyncContext<T> {
  try {
    const getBuiltin = (g.process as { getBuiltinModule?: (id: string) => unknown } | undefined)?.getBuiltinModule;
    const hooks = typeof getBuiltin === "function" ? (getBuiltin("node:async_hooks") as { AsyncLocalStorage?: new () => { run<R>(v: T, fn: () => R): R; getStore(): T | undefined } }) : undefined;
    if (hooks?.AsyncLocalStorage) {
      const als = new hooks.AsyncLocalStorage();
      return { run: (value, fn) => als.run(value, fn), get: () => als.getStore() };
    }
  } catch {
    // No AsyncLocalStorage here.
  }
  return { run: (_value, fn) => fn(), get: () => undefined };
}
