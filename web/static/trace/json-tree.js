// Any JSON value as a collapsible tree (native <details>, so it folds by keyboard too), and long text folded behind
// "Show more" — the whole text is in the page, never cut. Values only ever reach the page as text nodes.

/** Text longer than this (or than FOLD_LINES lines) starts folded. */
const FOLD_CHARS = 1200;
const FOLD_LINES = 14;
/** Children of one object or array rendered at a time; more behind a button (a 100,000-item array stays usable). */
const CHILDREN_PAGE = 200;

/** `tag` with a class and text: the one way this module and its users build elements from data. */
export function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

const lineCount = (s) => {
  let n = 1;
  for (let i = s.indexOf("\n"); i !== -1 && n <= FOLD_LINES; i = s.indexOf("\n", i + 1)) n++;
  return n;
};

/** A block of text, folded when long, with a button that unfolds it (and folds it again). */
export function foldedText(text, className = "") {
  const box = el("div", `rw-fold ${className}`.trim());
  const body = el("div", "rw-fold-body", text);
  box.append(body);
  if (text.length <= FOLD_CHARS && lineCount(text) <= FOLD_LINES) return box;
  box.classList.add("is-folded");
  const more = el("button", "rw-fold-toggle", `Show more · ${text.length.toLocaleString("en-US")} characters`);
  more.type = "button";
  more.setAttribute("aria-expanded", "false");
  more.addEventListener("click", () => {
    const folded = box.classList.toggle("is-folded");
    more.textContent = folded ? `Show more · ${text.length.toLocaleString("en-US")} characters` : "Show less";
    more.setAttribute("aria-expanded", String(!folded));
  });
  box.append(more);
  return box;
}

const isContainer = (v) => v !== null && typeof v === "object";
const sizeLabel = (v) => (Array.isArray(v) ? `[${v.length} item${v.length === 1 ? "" : "s"}]` : `{${Object.keys(v).length} key${Object.keys(v).length === 1 ? "" : "s"}}`);

/** A leaf: strings quoted (long or multi-line ones as folded text), numbers, booleans and null by type. */
function leaf(v) {
  if (typeof v === "string") {
    if (v.length > 160 || v.includes("\n")) return foldedText(v, "rw-j-str rw-j-long");
    return el("span", "rw-j-str", JSON.stringify(v));
  }
  if (v === null) return el("span", "rw-j-null", "null");
  return el("span", typeof v === "number" ? "rw-j-num" : typeof v === "boolean" ? "rw-j-bool" : "rw-j-other", String(v));
}

/** The children of an object or array, CHILDREN_PAGE at a time. */
function fillChildren(list, value, depth, openDepth) {
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  let shown = 0;
  const more = el("li", "rw-j-more");
  const button = el("button", "rw-fold-toggle");
  button.type = "button";
  more.append(button);
  const page = () => {
    const end = Math.min(entries.length, shown + CHILDREN_PAGE);
    const frag = document.createDocumentFragment();
    for (; shown < end; shown++) frag.append(node(entries[shown][0], entries[shown][1], depth + 1, openDepth));
    list.insertBefore(frag, more.parentNode ? more : null);
    if (shown < entries.length) {
      button.textContent = `Show ${Math.min(CHILDREN_PAGE, entries.length - shown)} more of ${(entries.length - shown).toLocaleString("en-US")}`;
      if (!more.parentNode) list.append(more);
    } else more.remove();
  };
  button.addEventListener("click", page);
  page();
}

/** One key and its value: a container folds (its children built when first opened), a leaf shows inline. */
function node(key, value, depth, openDepth) {
  const item = el("li", "rw-j-item");
  const keyEl = key === null ? null : el("span", typeof key === "number" ? "rw-j-index" : "rw-j-key", typeof key === "number" ? key : JSON.stringify(key));
  if (!isContainer(value) || (Array.isArray(value) ? value.length === 0 : Object.keys(value).length === 0)) {
    if (keyEl) item.append(keyEl, el("span", "rw-j-colon", ": "));
    item.append(isContainer(value) ? el("span", "rw-j-empty", Array.isArray(value) ? "[]" : "{}") : leaf(value));
    return item;
  }
  const details = el("details", "rw-j-node");
  const summary = el("summary");
  if (keyEl) summary.append(keyEl, el("span", "rw-j-colon", ": "));
  summary.append(el("span", "rw-j-size", sizeLabel(value)));
  const list = el("ul", "rw-j-children");
  details.append(summary, list);
  let filled = false;
  // A node the reader opens shows its children open too (one level more than the tree opened by itself).
  const fill = (below) => {
    if (filled) return;
    filled = true;
    fillChildren(list, value, depth, below);
  };
  details.addEventListener("toggle", () => details.open && fill(Math.max(openDepth, depth + 2)));
  if (depth < openDepth) {
    details.open = true;
    fill(openDepth);
  }
  item.append(details);
  return item;
}

/** `value` as a tree, its first `openDepth` levels open. */
export function jsonTree(value, { openDepth = 2 } = {}) {
  const root = el("ul", "rw-json");
  root.append(node(null, value, 0, openDepth));
  return root;
}

/** JSON text of a value for the raw view and the copy button (text as it is). */
export function rawText(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Copies text: the Clipboard API where the page may use it, else a selection copied the older way. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = el("textarea", "rw-copy-area");
    area.value = text;
    area.setAttribute("readonly", "");
    document.body.append(area);
    area.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}
