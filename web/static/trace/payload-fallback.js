// A span's input, output or metadata in the trace's panel, plainly: text as it is, anything else as indented JSON,
// folded when long (never cut: "Show all" unfolds it). The panel calls renderPayload(container, value, { kind }) and
// nothing else, so a richer renderer (messages by role, a JSON tree) takes this one's place by that one call.

const FOLD_CHARS = 1_500;
const FOLD_LINES = 24;

function foldPoint(text) {
  let lines = 0;
  for (let i = 0; i < text.length && i < FOLD_CHARS; i++) if (text[i] === "\n" && ++lines >= FOLD_LINES) return i;
  return text.length > FOLD_CHARS ? FOLD_CHARS : -1;
}

/** Renders `value` into `container` (emptied first). kind: "input", "output", "metadata", "event". */
export function renderPayload(container, value, { kind } = {}) {
  container.replaceChildren();
  if (value === null || value === undefined || (typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0)) {
    const none = document.createElement("p");
    none.className = "subtle small payload-none";
    none.textContent = kind === "input" ? "No input recorded." : kind === "output" ? "No output recorded." : "None.";
    container.append(none);
    return;
  }
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  const pre = document.createElement("pre");
  pre.className = `payload payload-${typeof value === "string" ? "text" : "json"}`;
  const cut = foldPoint(text);
  if (cut < 0) {
    pre.textContent = text;
    container.append(pre);
    return;
  }
  pre.textContent = `${text.slice(0, cut)}…`;
  const more = document.createElement("button");
  more.type = "button";
  more.className = "btn btn-ghost btn-sm payload-more";
  more.textContent = `Show all (${text.length.toLocaleString("en-US")} characters)`;
  more.addEventListener("click", () => {
    const folded = pre.textContent.length < text.length;
    pre.textContent = folded ? text : `${text.slice(0, cut)}…`;
    more.textContent = folded ? "Fold" : `Show all (${text.length.toLocaleString("en-US")} characters)`;
  });
  container.append(pre, more);
}
