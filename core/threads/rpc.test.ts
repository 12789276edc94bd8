/** The typed RPC over a real MessageChannel: calls both ways, transfers, and errors that keep their class. */
import { describe, expect, it } from "vitest";
import { MessageChannel } from "node:worker_threads";
import { Unavailable, ValidationError } from "../errors.js";
import { Rpc, Transfer } from "./rpc.js";

interface Left {
  double(n: number): number;
  fail(kind: "unavailable" | "validation" | "plain"): Promise<never>;
  bytes(n: number): Transfer<Uint8Array>;
}
interface Right {
  greet(name: string): string;
}

function pair() {
  const { port1, port2 } = new MessageChannel();
  const left = new Rpc<Left, Right>(port1, {
    double: (n) => n * 2,
    async fail(kind) {
      if (kind === "unavailable") throw new Unavailable({ service: "event-log", message: "disk full" });
      if (kind === "validation") throw new ValidationError({ message: "must be a string", field: "payload.question" });
      const err = new Error("plain failure") as Error & { code: string };
      err.code = "E_PLAIN";
      throw err;
    },
    bytes: (n) => {
      const b = new Uint8Array(n).fill(7);
      return new Transfer(b, [b.buffer]);
    },
  });
  const right = new Rpc<Right, Left>(port2, { greet: (name) => `hello ${name}` });
  const close = () => { port1.close(); port2.close(); };
  return { left, right, close };
}

describe("Rpc", () => {
  it("calls both ways with typed arguments and results; transferred buffers arrive whole", async () => {
    const { left, right, close } = pair();
    expect(await right.call("double", [21])).toBe(42);
    expect(await left.call("greet", ["ada"])).toBe("hello ada");
    const bytes = await right.call("bytes", [1024]);
    expect(bytes).toBeInstanceOf(Uint8Array);
    expect(bytes.byteLength).toBe(1024);
    expect(bytes[1023]).toBe(7);
    close();
  });

  it("a core error thrown on one side is the same class, tag and fields on the other (so web still maps it to 503/422)", async () => {
    const { right, close } = pair();
    const unavailable = await right.call("fail", ["unavailable"]).catch((e: unknown) => e);
    expect(unavailable).toBeInstanceOf(Unavailable);
    expect(unavailable).toMatchObject({ _tag: "Unavailable", service: "event-log", message: "disk full" });
    const invalid = await right.call("fail", ["validation"]).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(ValidationError);
    expect(invalid).toMatchObject({ _tag: "ValidationError", field: "payload.question", message: "must be a string" });
    const plain = await right.call("fail", ["plain"]).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(Error);
    expect(plain).toMatchObject({ message: "plain failure", code: "E_PLAIN" });
    close();
  });

  it("a method the other side does not serve is an error, not a hang", async () => {
    const { right, close } = pair();
    const missing = await (right as unknown as Rpc<Right, Record<string, (...a: unknown[]) => unknown>>).call("nope", []).catch((e: unknown) => e);
    expect(String((missing as Error).message)).toContain("no handler for nope");
    close();
  });
});
