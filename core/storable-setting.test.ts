import { describe, expect, it } from "vitest";
import { ValidationError } from "./errors.js";
import { MAX_DEPTH } from "./events/storable.js";
import { refuseUnstorableSetting, settingProblem } from "./storable-setting.js";

const placeOf = (value: unknown, root?: string) => settingProblem(value, root)?.place;

describe("what a setting may hold", () => {
  it("names the first bad string or key by its place, spelled from the root", () => {
    expect(placeOf({ name: "ok", score_configs: [{ name: "a" }, { categories: ["fine", "b\ud800"] }] })).toBe("score_configs[1].categories[1]");
    expect(placeOf({ filter: { "agent\u0000name": "x" } })).toBe("filter.agent\ufffdname");
    expect(placeOf("a\u0000b")).toBe("body");
    expect(placeOf({ model: "\udc00" }, "config")).toBe("config.model");
    expect(settingProblem(["\ud83d\ude00 a surrogate pair is fine", { n: 1, t: true, z: null }])).toBeUndefined();
  });

  it("refuses nesting past the events' depth, walking far deeper than the call stack would allow", () => {
    const nested = (levels: number) => {
      let v: unknown = "bottom";
      for (let i = 0; i < levels; i++) v = [v];
      return v;
    };
    // The value itself is level 1: MAX_DEPTH - 1 containers fit.
    expect(settingProblem(nested(MAX_DEPTH - 1))).toBeUndefined();
    expect(settingProblem(nested(MAX_DEPTH))).toEqual({ place: "[0]".repeat(MAX_DEPTH - 1), message: `${"[0]".repeat(MAX_DEPTH - 1)} nests deeper than ${MAX_DEPTH} levels` });
    // 200,000 levels: JSON.stringify would overflow the stack; the walk stops at the first level too deep.
    expect(placeOf({ config: nested(200_000) })).toBe(`config${"[0]".repeat(MAX_DEPTH - 2)}`);
  });

  it("refuses with a ValidationError naming the field", () => {
    let caught: unknown;
    try {
      refuseUnstorableSetting({ check: { value: "a\u0000" } });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ValidationError);
    expect(caught).toMatchObject({ field: "check.value", message: "check.value must not contain U+0000 (NUL) or a lone UTF-16 surrogate" });
    expect(() => refuseUnstorableSetting({ check: { value: "fine" } })).not.toThrow();
  });
});
