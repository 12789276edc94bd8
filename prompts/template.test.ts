import { describe, expect, it } from "vitest";
import { ValidationError } from "../core/errors.js";
import { compilePrompt, promptVariables } from "./template.js";
import { diffText } from "./diff.js";

describe("prompt templates", () => {
  it("names each variable once, in order, across a chat's messages", () => {
    expect(promptVariables("Hi {{name}}, {{ name }} and {{topic.sub-part}}; {{ 1bad }} {{not one}} {name}")).toEqual(["name", "topic.sub-part"]);
    expect(promptVariables([{ role: "system", content: "{{a}}" }, { role: "user", content: "{{b}} {{a}}" }])).toEqual(["a", "b"]);
  });

  it("fills variables, writing values that are not strings as JSON", () => {
    expect(compilePrompt("Q: {{q}} ({{ n }}, {{obj}})", { q: "why?", n: 3, obj: { a: [1] } })).toBe('Q: why? (3, {"a":[1]})');
    expect(compilePrompt([{ role: "user", content: "{{q}}" }], { q: "$& {{q}}" })).toEqual([{ role: "user", content: "$& {{q}}" }]);
  });

  it("names every missing variable", () => {
    let err: unknown;
    try {
      compilePrompt("{{a}} {{b}} {{c}}", { b: "x", c: undefined });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toMatchObject({ field: "variables.a", message: "missing variables: a, c" });
  });

  it("diffs lines and gives up on a diff past its bound", () => {
    expect(diffText("a\nb\n", "a\nc\n").parts).toEqual([{ op: "same", text: "a\n" }, { op: "remove", text: "b\n" }, { op: "add", text: "c\n" }]);
    const many = (p: string) => Array.from({ length: 5000 }, (_, i) => `${p}${i}\n`).join("");
    expect(diffText(many("x"), many("y"))).toEqual({ parts: null, too_large: true, changed: true });
  });
});
