import { describe, expect, it } from "vitest";
import { loadConfig } from "./config.js";

describe("REDIS_PREFIX", () => {
  it("is `runwatch` unless set, and refuses what cannot be a key or channel prefix, naming the variable", () => {
    expect(loadConfig({}).redisPrefix).toBe("runwatch");
    expect(loadConfig({ REDIS_PREFIX: "staging-eu:rw" }).redisPrefix).toBe("staging-eu:rw");
    for (const bad of ["with space", "glob*", "x".repeat(65), "ü"]) {
      expect(() => loadConfig({ REDIS_PREFIX: bad })).toThrow(/^REDIS_PREFIX must be/);
    }
  });
});
