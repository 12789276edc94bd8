import { describe, expect, it } from "vitest";
import { canonicalIso, isoOfMs, msOfIso } from "./iso-time.js";

/** What Date gives, or the error it throws. */
const viaDate = <T>(f: () => T): T | string => {
  try {
    return f();
  } catch (err) {
    return `${(err as Error).name}`;
  }
};

describe("canonical timestamps without a Date each", () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0, 0);
  // Times in few seconds (the cached path, hit again and again), times far apart (misses), and the edges.
  const times = [
    ...Array.from({ length: 3000 }, (_, i) => now + i * 0.7),
    ...Array.from({ length: 3000 }, (_, i) => now - i * 86_399_937.3),
    0, 0.9, 999, 1000, 1000.5, Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(2200, 11, 31, 23, 59, 59, 999),
    253_402_300_799_999, 253_402_300_800_000, 8.64e15, -1, -0.5, -86_400_001, NaN, Infinity, -Infinity, 8.64e15 + 1,
  ];

  it("isoOfMs formats every time as Date#toISOString does, and throws where it throws", () => {
    for (const ms of times) expect(viaDate(() => isoOfMs(ms)), String(ms)).toBe(viaDate(() => new Date(ms).toISOString()));
  });

  it("msOfIso reads every form as Date.parse does; canonicalIso normalises as new Date(s).toISOString() does", () => {
    const forms = times.filter(Number.isFinite).flatMap((ms) => {
      const s = viaDate(() => new Date(ms).toISOString());
      return s === "RangeError" ? [] : [s, s.replace("Z", "+00:00"), s.replace(".", ",").slice(0, 19) + "Z", s.slice(0, 19) + "Z"];
    });
    const odd = [
      "2026-02-30T00:00:00.000Z", "2026-02-29T12:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-11-26T24:00:00.000Z",
      "2026-11-26T12:00:00.00xZ", "2026-11-26T12:00:00.0000", "2026-11-26T12:00:00.000z", "2026-11-26 12:00:00.000Z",
      "2026-11-26T12:00:00.123+02:00", "2026-11-26T12:00:00.123456789Z", "+010000-01-01T00:00:00.000Z", "", "nonsense",
      "2026-11-26T12:00:00.1٣3Z", "\u0000".repeat(20) + "123Z", " ".repeat(20) + "000Z",
    ];
    for (const s of [...forms, ...odd]) {
      expect(msOfIso(s), s).toBe(Date.parse(s));
      expect(viaDate(() => canonicalIso(s)), s).toBe(viaDate(() => new Date(s).toISOString()));
    }
  });

  it("hands back a canonical string itself, and stays exact once every slot of its cache has been reused", () => {
    const s = isoOfMs(now + 123);
    expect(canonicalIso(s)).toBe(s);
    for (let i = 0; i < 10_000; i++) isoOfMs(now + i * 1000); // more seconds than the cache has slots
    for (let i = 0; i < 10_000; i += 997) expect(msOfIso(new Date(now + i * 1000 + 5).toISOString())).toBe(now + i * 1000 + 5);
  });
});
