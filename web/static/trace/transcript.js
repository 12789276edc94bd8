// A session's turn as a conversation (web/static/session.js): what the user said in this turn and what the agent
// answered, out of the run's input and output in whatever format they came (message-formats.js). An input or output
// that carries the whole conversation so far (chat history, LangGraph state) shows only this turn's part, the whole
// value one click away.
import { normalizeMessages } from "./message-formats.js";
import { el } from "./json-tree.js";
import { renderMessages, renderPayload } from "./messages.js";

const lastIndex = (list, test) => {
  for (let i = list.length - 1; i >= 0; i--) if (test(list[i])) return i;
  return -1;
};

/**
 * The messages of one side of a turn: for the input, the user's messages after the agent's last one (the history
 * before them and the system prompt left out); for the output, everything after the last user message (the agent's
 * tool calls and answer). `trimmed` says whether anything was left out. null when the value holds no messages; a
 * plain text, or an object of one text field ({message: "…"}), is one message of the side's role.
 */
export function turnMessages(value, side) {
  const role = side === "input" ? "user" : "assistant";
  const only = value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1 ? Object.values(value)[0] : undefined;
  const messages = normalizeMessages(value, { defaultRole: role });
  if (!messages) {
    const text = typeof value === "string" ? value : typeof only === "string" ? only : undefined;
    return text === undefined ? null : { messages: [{ role, parts: [{ type: "text", text }] }], trimmed: typeof value !== "string" };
  }
  let shown;
  if (side === "input") {
    const from = lastIndex(messages, (m) => m.role !== "user" && m.role !== "system") + 1;
    shown = messages.slice(from).filter((m) => m.role === "user");
  } else {
    shown = messages.slice(lastIndex(messages, (m) => m.role === "user") + 1);
  }
  if (shown.length === 0) shown = messages;
  return { messages: shown, trimmed: shown.length !== messages.length };
}

/** Renders one side of a turn into `container`; the whole value behind "Full input/output" when only part shows. */
export function renderTurnSide(container, value, side) {
  container.replaceChildren();
  const turn = turnMessages(value, side);
  if (!turn) {
    renderPayload(container, value, { kind: side });
    return;
  }
  renderMessages(container, turn.messages);
  if (!turn.trimmed) return;
  const full = el("details", "turn-full");
  full.append(el("summary", null, side === "input" ? "Full input" : "Full output"));
  const body = el("div");
  full.append(body);
  full.addEventListener("toggle", () => full.open && !body.firstChild && renderPayload(body, value, { kind: side }));
  container.append(full);
}
