import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { eventIdFor, hashApiKey, isApiKeyShape, newApiKey, runIdFor, uuidv7 } from "./ids.js";

describe("ids", () => {
  it("mints UUIDv7s that sort in minting order within one millisecond", () => {
    const ids = Array.from({ length: 5000 }, () => uuidv7(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("derives the same run id for the same user and sdk_run_id, and different ones otherwise", () => {
    expect(runIdFor(1, "abc")).toBe(runIdFor(1, "abc"));
    expect(runIdFor(1, "abc")).not.toBe(runIdFor(2, "abc"));
    expect(runIdFor(1, "abc")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("makes 32-byte hex keys and hashes them", () => {
    const k = newApiKey();
    expect(isApiKeyShape(k)).toBe(true);
    expect(k).toHaveLength(64);
    expect(hashApiKey(k)).not.toContain(k);
    expect(hashApiKey(k)).toBe(hashApiKey(k));
  });
});

describe("eventIdFor", () => {
  it("is the same for the same name and time, differs by name, and sorts by time", () => {
    const t = Date.UTC(2026, 10, 24, 9, 0, 0);
    expect(eventIdFor("otlp:a:b:end", t)).toBe(eventIdFor("otlp:a:b:end", t));
    expect(eventIdFor("otlp:a:b:end", t)).not.toBe(eventIdFor("otlp:a:c:end", t));
    const ids = [t + 5, t, t + 1000, 0].map((ms, i) => [eventIdFor(`n${i}`, ms), ms] as const);
    expect([...ids].sort((x, y) => (x[0] < y[0] ? -1 : 1)).map(([, ms]) => ms)).toEqual([0, t, t + 5, t + 1000]);
    expect(eventIdFor("x", t)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it("derives exactly the ids earlier versions stored, so a retry sent across an upgrade is still recognised", () => {
    // Values from the Buffer-based derivation these ids were first stored with.
    const trace = "0af7651916cd43dd8448eb211c80319c";
    expect(eventIdFor(`otlp:${trace}:b7ad6b7169203331:end`, 1764072000123.456)).toBe("019abae2-8a7b-7010-842a-aa9c5074fd0f");
    expect(eventIdFor(`otlp:${trace}:run:end`, 1764072001000, 1)).toBe("019abae2-8de8-7114-8805-b78558a9454e");
    expect(runIdFor(42, trace)).toBe("37576ba9-2d7b-50b6-bd4d-1714d0270f45");
    // Times outside 0..2^48 ms keep their old meaning: none and negative are 0, larger ones wrap.
    expect(eventIdFor("n", NaN).slice(0, 13)).toBe("00000000-0000");
    expect(eventIdFor("n", -5).slice(0, 13)).toBe("00000000-0000");
    expect(eventIdFor("n", 2 ** 48 + 1).slice(0, 13)).toBe("00000000-0001");
  });

  it("derives the ids the earlier string-built derivation did, for every digit, rank and time", () => {
    const before = (name: string, ms: number, rank = 0): string => {
      const h = createHash("sha1").update(`runwatch:event:${name}`).digest("hex");
      const t = Number.isFinite(ms) ? Math.max(0, Math.floor(ms)) % 2 ** 48 : 0;
      const v = (0x8 | (parseInt(h[16]!, 16) & 0x3)).toString(16);
      const x = `${t.toString(16).padStart(12, "0")}7${(rank & 0x0f).toString(16)}${h.slice(14, 16)}${v}${h.slice(17, 32)}`;
      return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
    };
    const t = Date.UTC(2026, 10, 26, 12, 0, 0);
    for (let i = 0; i < 5000; i++) {
      const name = `otlp:${i.toString(16).padStart(32, "0")}:${(i * 7919).toString(16).padStart(16, "0")}:end`;
      const ms = [t + i * 13.7, i, 2 ** 48 - 1 - i, -i, NaN][i % 5]!;
      expect(eventIdFor(name, ms, i % 17)).toBe(before(name, ms, i % 17));
    }
  });
});
