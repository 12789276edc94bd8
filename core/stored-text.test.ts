import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { refuseUnstorableText, unstorableTextAt } from "./stored-text.js";

describe("text Postgres cannot store", () => {
  it("names the first bad string or key by its place, spelled from the root", () => {
    expect(unstorableTextAt({ name: "ok", score_configs: [{ name: "a" }, { categories: ["fine", "b\ud800"] }] })).toBe("score_configs[1].categories[1]");
    expect(unstorableTextAt({ filter: { "agent\u0000name": "x" } })).toBe("filter.agent\ufffdname");
    expect(unstorableTextAt("a\u0000b")).toBe("body");
    expect(unstorableTextAt({ model: "\udc00" }, "config")).toBe("config.model");
    expect(unstorableTextAt(["\ud83d\ude00 a surrogate pair is fine", { n: 1, t: true, z: null }])).toBeUndefined();
  });

  it("walks a value nested far deeper than the call stack would allow", () => {
    let deep: unknown = "bottom\u0000";
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(unstorableTextAt(deep)).toMatch(/^(\[0\]){200000}$/);
  });

  it("refuses with a ValidationError naming the field", () => {
    let caught: unknown;
    try {
      refuseUnstorableText({ check: { value: "a\u0000" } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect(caught).toMatchObject({ field: "check.value", message: "check.value must not contain U+0000 (NUL) or a lone UTF-16 surrogate" });
    expect(() => refuseUnstorableText({ check: { value: "fine" } })).not.toThrow();
  });
});
