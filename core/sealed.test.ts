import { describe, expect, it } from "vitest";
import { SealBroken, sealerFor } from "./sealed.js";

describe("sealed secrets", () => {
  const secret = "a".repeat(40);
  it("opens what it sealed, and seals the same text differently each time", () => {
    const s = sealerFor(secret, "provider keys");
    const a = s.seal("sk-live-123");
    expect(a).not.toContain("sk-live");
    expect(s.seal("sk-live-123")).not.toBe(a);
    expect(s.open(a)).toBe("sk-live-123");
  });
  it("refuses a value sealed under another secret or purpose, or changed", () => {
    const sealed = sealerFor(secret, "provider keys").seal("sk-live-123");
    expect(() => sealerFor("b".repeat(40), "provider keys").open(sealed)).toThrow(SealBroken);
    expect(() => sealerFor(secret, "other").open(sealed)).toThrow(SealBroken);
    // One character of the ciphertext changed (a character of the tag or body: every bit of it is data).
    const at = sealed.length - 2;
    const flipped = sealed.slice(0, at) + (sealed[at] === "A" ? "B" : "A") + sealed.slice(at + 1);
    expect(() => sealerFor(secret, "provider keys").open(flipped)).toThrow(SealBroken);
    expect(() => sealerFor(secret, "provider keys").open("plain text")).toThrow(SealBroken);
  });
});
