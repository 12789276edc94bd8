// "Open in playground" on an LLM span (web/runs/views/_span_actions.njk's form; docs/PROMPTS.md, Playground): the
// span's input messages in the trace view's one message model (message-formats.js) become a draft's chat messages —
// their text, as the playground runs system, developer, user and assistant messages — posted with the span's model
// and provider to the named prompt's playground (its recorded prompt name when it has one).
import { splitMessages } from "./message-formats.js";

const ROLES = new Set(["system", "developer", "user", "assistant"]);

/** The span's input as `[{role, content}]`, or null when it holds no text to run. */
export function draftMessages(input) {
  if (input === null || input === undefined) return null;
  const found = splitMessages(input, { defaultRole: "user" });
  if (!found) {
    const text = typeof input === "string" ? input : null;
    return text && text.trim() ? { messages: [{ role: "user", content: text }], cut: false } : null;
  }
  const messages = [];
  for (const m of found.messages) {
    if (!ROLES.has(m.role)) continue; // a tool result needs the call it answers: the playground runs none
    const content = m.parts.filter((p) => p.type === "text").map((p) => p.text).join("\n");
    if (content.trim()) messages.push({ role: m.role, content });
  }
  return messages.length ? { messages, cut: Boolean(found.cut) } : null;
}

/** Fills the form in `box` for `span`, or removes it where the span is not an LLM call with messages. */
export function fillPlaygroundForm(box, { span, input, metadata }) {
  const form = box.querySelector("form.span-playground");
  if (!form) return;
  const draft = span.kind === "llm" ? draftMessages(input) : null;
  if (!draft) {
    form.remove();
    return;
  }
  form.elements.messages.value = JSON.stringify(draft.messages);
  form.elements.model.value = span.model ?? "";
  form.elements.provider.value = span.provider ?? "";
  const recorded = typeof metadata?.prompt_name === "string" ? metadata.prompt_name : "";
  if (recorded) form.elements.name.value = recorded;
  if (recorded && Number.isInteger(metadata?.prompt_version)) form.elements.version.value = String(metadata.prompt_version);
  if (draft.cut) form.querySelector(".span-playground-cut")?.removeAttribute("hidden");
  form.addEventListener("submit", (e) => {
    const name = form.elements.name.value.trim();
    if (!name) {
      e.preventDefault();
      form.elements.name.setAttribute("aria-invalid", "true");
      form.elements.name.focus();
      return;
    }
    form.action = `${form.dataset.base}/prompts/${encodeURIComponent(name)}/playground/draft`;
  });
}
