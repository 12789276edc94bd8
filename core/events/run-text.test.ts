import { describe, expect, it } from "vitest";
import { cutText, previewText, RUN_PREVIEW_CHARS, RUN_TEXT_CHARS, searchText } from "./run-text.js";

describe("a run's input and output as text", () => {
  it("a string stays itself; a structured value is its compact JSON", () => {
    expect(previewText("What is the refund policy?", "input")).toBe("What is the refund policy?");
    expect(previewText({ q: "refund", n: 2 }, "input")).toBe('{"q":"refund","n":2}');
    expect(previewText(null, "input")).toBe("");
    expect(previewText(42, "output")).toBe("42");
  });

  it("a chat is its last user message (input) or last assistant message (output), in the shapes frameworks send", () => {
    const openai = [{ role: "system", content: "Be brief." }, { role: "user", content: "first" }, { role: "assistant", content: "ok" }, { role: "user", content: "second question" }];
    expect(previewText(openai, "input")).toBe("second question");
    expect(previewText(openai, "output")).toBe("ok");
    expect(previewText({ messages: openai }, "input")).toBe("second question");
    expect(previewText(JSON.stringify(openai), "input")).toBe("second question"); // as OTLP sends it: JSON text
    const parts = [{ role: "user", content: [{ type: "text", text: "look at" }, { type: "image_url", image_url: "…" }, { type: "text", text: "this" }] }];
    expect(previewText(parts, "input")).toBe("look at this");
    const langchain = { messages: [{ type: "human", content: "from langgraph" }, { type: "ai", content: "answer" }] };
    expect(previewText(langchain, "input")).toBe("from langgraph");
    expect(previewText(langchain, "output")).toBe("answer");
    const serialised = [[{ lc: 1, type: "constructor", id: ["langchain", "schema", "messages", "HumanMessage"], kwargs: { content: "serialised" } }]];
    expect(previewText(serialised, "input")).toBe("serialised");
    // No message of that role: the JSON.
    expect(previewText([{ role: "system", content: "x" }], "input")).toBe('[{"role":"system","content":"x"}]');
  });

  it(`a preview is at most ${RUN_PREVIEW_CHARS} characters, a cut one ending in "…", never half a character`, () => {
    const long = previewText("a".repeat(1000), "input");
    expect(long).toHaveLength(RUN_PREVIEW_CHARS);
    expect(long.endsWith("a…")).toBe(true);
    const emoji = previewText(`${"a".repeat(RUN_PREVIEW_CHARS - 2)}😀😀`, "input");
    expect(emoji.isWellFormed()).toBe(true);
    expect(emoji.length).toBeLessThanOrEqual(RUN_PREVIEW_CHARS);
    expect(cutText("ab😀", 3)).toBe("ab");
  });

  it(`search text: the chat's message first, then the whole value, lower-cased, at most ${RUN_TEXT_CHARS} characters`, () => {
    const chat = [{ role: "system", content: `S${"x".repeat(5000)}` }, { role: "user", content: "Where is my REFUND?" }];
    const text = searchText(chat, "input");
    expect(text.startsWith("where is my refund?\n[{")).toBe(true);
    expect(text).toHaveLength(RUN_TEXT_CHARS);
    expect(searchText("Plain TEXT", "output")).toBe("plain text");
    expect(searchText({ Answer: "Yes" }, "output")).toBe('{"answer":"yes"}');
    expect(searchText(undefined, "input")).toBe("");
  });
});
