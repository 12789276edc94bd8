// A span's input or output, shown the way a person reads it (docs/DASHBOARD.md, "Messages"): chat messages as a
// conversation by role — text, tool calls with their arguments, tool results, reasoning, placeholders for media —
// whatever format they came in (message-formats.js); any other JSON as a collapsible tree; text as text. Every view
// has a copy button and a raw toggle. Data reaches the page only as text nodes (never as HTML): a hostile string in a
// message renders as the string it is.
//
//   renderPayload(container, value, { kind })   kind: "input" | "output" | "metadata" | "event" (a role-less list
//                                               of blocks is the user's in an input, the assistant's otherwise);
//                                               returns the root element
//   renderMessages(container, messages)         messages already in the model (normalizeMessages)
import { splitMessages } from "./message-formats.js";
import { copyText, el, foldedText, jsonTree, rawText } from "./json-tree.js";
import { parseJsonText } from "./message-parts.js";

/** The module's stylesheet, linked once per page (a stylesheet from this origin is what the app's CSP allows). */
export function ensureStyles(href = new URL("./messages.css", import.meta.url).href) {
  if ([...document.querySelectorAll("link[rel=stylesheet]")].some((l) => l.href === href)) return;
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  document.head.append(link);
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

const ROLE_LABELS = { system: "System", user: "User", assistant: "Assistant", tool: "Tool" };
const roleLabel = (role) => ROLE_LABELS[role] ?? (role ? role[0].toUpperCase() + role.slice(1) : "Message");

const bytes = (n) => (n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`);

/** Structured values up to this much JSON text show as that text; larger ones as a tree. */
const INLINE_JSON_CHARS = 600;

/** A structured value inline: small ones as indented JSON (tool arguments mostly), larger ones as a tree. */
function valueView(v, openDepth = 3) {
  if (typeof v === "string") return foldedText(v, "rw-text");
  if (v === null || typeof v !== "object") return el("code", "rw-scalar", rawText(v));
  const text = rawText(v);
  return text.length <= INLINE_JSON_CHARS ? el("pre", "rw-args", text) : jsonTree(v, { openDepth });
}

function toolCallView(p) {
  const box = el("div", "rw-part rw-tool-call");
  const head = el("div", "rw-tool-head");
  head.append(el("span", "rw-tool-tag", "Tool call"), el("span", "rw-tool-name", p.name));
  if (p.id) head.append(el("code", "rw-tool-id", p.id));
  box.append(head, valueView(p.arguments));
  return box;
}

function toolResultView(p) {
  const box = el("div", `rw-part rw-tool-result${p.is_error ? " is-error" : ""}`);
  const head = el("div", "rw-tool-head");
  head.append(el("span", "rw-tool-tag", p.is_error ? "Tool error" : "Tool result"));
  if (p.name) head.append(el("span", "rw-tool-name", p.name));
  if (p.id) head.append(el("code", "rw-tool-id", p.id));
  box.append(head);
  if (p.content.length === 0) box.append(el("p", "rw-empty", "(empty)"));
  for (const part of p.content) box.append(partView(part));
  return box;
}

function reasoningView(p) {
  const box = el("div", "rw-part rw-reasoning");
  box.append(el("div", "rw-reasoning-head", p.redacted ? "Reasoning (encrypted)" : "Reasoning"));
  if (p.text) box.append(foldedText(p.text, "rw-text"));
  return box;
}

function mediaView(p) {
  const box = el("div", "rw-part rw-media");
  box.dataset.modality = p.modality;
  box.append(el("span", "rw-media-kind", p.modality));
  for (const fact of [p.mime, p.size !== undefined ? bytes(p.size) : undefined, p.name]) if (fact) box.append(el("span", "rw-media-fact", fact));
  if (p.url) box.append(el("span", "rw-media-url", p.url)); // as text: the page loads nothing a payload names
  return box;
}

function partView(p) {
  switch (p.type) {
    case "text": return foldedText(p.text, `rw-part rw-text${p.refusal ? " is-refusal" : ""}`);
    case "tool_call": return toolCallView(p);
    case "tool_result": return toolResultView(p);
    case "reasoning": return reasoningView(p);
    case "media": return mediaView(p);
    default: {
      const box = el("div", "rw-part rw-part-json");
      box.append(valueView(p.value, 2));
      return box;
    }
  }
}

/** Messages in the model as a conversation: one block per message, its role on top. */
export function renderMessages(container, messages) {
  ensureStyles();
  const list = el("ol", "rw-msgs");
  for (const m of messages) {
    const item = el("li", "rw-msg");
    item.dataset.role = m.role;
    const head = el("div", "rw-msg-head");
    head.append(el("span", "rw-role", roleLabel(m.role)));
    if (m.name) head.append(el("span", "rw-msg-name", m.name));
    item.append(head);
    if (m.parts.length === 0) item.append(el("p", "rw-empty", "(no content)"));
    const [only] = m.parts;
    if (m.role === "tool" && m.parts.length === 1 && only.type === "tool_result") {
      // A tool's message is its result: the tool's name and call id go in the message's head, no box inside.
      if (only.name) head.append(el("span", "rw-tool-name", only.name));
      if (only.id) head.append(el("code", "rw-tool-id", only.id));
      if (only.is_error) head.append(el("span", "rw-tool-tag rw-error-tag", "error"));
      if (only.content.length === 0) item.append(el("p", "rw-empty", "(empty)"));
      for (const part of only.content) item.append(partView(part));
    } else for (const p of m.parts) item.append(partView(p));
    list.append(item);
  }
  container.append(list);
  return list;
}

/** The toolbar: a button per view (the current one pressed) and Copy. */
function toolbar(views, current, show, raw) {
  const bar = el("div", "rw-payload-bar");
  const group = el("div", "rw-views");
  group.setAttribute("role", "group");
  group.setAttribute("aria-label", "View");
  for (const [name, label] of views) {
    const b = el("button", "rw-view-btn", label);
    b.type = "button";
    b.dataset.view = name;
    b.setAttribute("aria-pressed", String(name === current));
    b.addEventListener("click", () => {
      for (const o of group.children) o.setAttribute("aria-pressed", String(o === b));
      show(name);
    });
    group.append(b);
  }
  const copy = el("button", "rw-copy", "Copy");
  copy.type = "button";
  copy.addEventListener("click", async () => {
    const ok = await copyText(raw());
    copy.textContent = ok ? "Copied" : "Copy failed";
    setTimeout(() => (copy.textContent = "Copy"), 1500);
  });
  if (views.length > 1) bar.append(group);
  bar.append(copy);
  return bar;
}

/**
 * Renders `value` (a span's input or output, any JSON, or text — JSON text is read as the value it encodes) into
 * `container`, replacing what it held. Views: "messages" when it holds messages, "tree" for other objects and
 * arrays, "raw" always.
 */
export function renderPayload(container, value, { kind = "output" } = {}) {
  ensureStyles();
  container.replaceChildren();
  const root = el("div", "rw-payload");
  root.dataset.kind = kind;
  container.append(root);
  if (value === undefined || value === null || value === "" || (isPlainObject(value) && Object.keys(value).length === 0)) {
    root.append(el("p", "rw-empty", kind === "input" ? "No input recorded." : kind === "output" ? "No output recorded." : "None."));
    return root;
  }
  const parsed = typeof value === "string" ? parseJsonText(value) ?? value : value;
  const split = splitMessages(parsed, { defaultRole: kind === "input" ? "user" : "assistant" });
  const structured = parsed !== null && typeof parsed === "object";
  const views = [];
  if (split) views.push(["messages", "Messages"]);
  if (structured) views.push(["tree", "JSON"]);
  views.push(["raw", "Raw"]);
  const body = el("div", "rw-payload-body");
  const raw = () => (typeof value === "string" ? value : rawText(value));
  const show = (view) => {
    root.dataset.view = view;
    body.replaceChildren();
    if (view === "messages") {
      if (split.cut) body.append(el("p", "rw-cut-note", `Cut short where it was stored (${raw().length.toLocaleString("en-US")} characters kept): the messages are those it holds, the last one perhaps in part. Raw shows it as stored.`));
      renderMessages(body, split.messages);
      if (split.rest) {
        const more = el("details", "rw-rest");
        more.append(el("summary", null, `Other fields (${Object.keys(split.rest).length})`), jsonTree(split.rest, { openDepth: 1 }));
        body.append(more);
      }
    } else if (view === "tree") body.append(jsonTree(parsed));
    else if (structured || typeof value !== "string") body.append(el("pre", "rw-raw", raw()));
    else body.append(foldedText(value, "rw-text rw-plain"));
  };
  root.append(toolbar(views, views[0][0], show, raw), body);
  show(views[0][0]);
  return root;
}
