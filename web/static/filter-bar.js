// The runs filter bar (#q, docs/EXPLORER.md): completes the token under the caret — a field's name, then its values
// as the project has them (GET {base}/runs/filter-values: agents, tags, metadata keys and values, models,
// environments, releases, end users, score names) — in a listbox under the box. Arrow keys move, Enter or Tab take
// a suggestion, Escape closes; Enter without one submits the filter.
const input = document.getElementById("q");
const list = document.getElementById("filter-suggestions");
const base = document.body.dataset.base ?? "";

/** What typing a field's name offers: the token it starts, and whether values follow from the server. */
const FIELD_STARTS = {
  status: "status:", agent: "agent:", model: "model:", env: "env:", release: "release:", tag: "tag:", meta: "meta.",
  score: "score.", user: "user:", session: "session:", id: "id:", version: "version:", cost: "cost>", tokens: "tokens>",
  duration: "duration>", has: "has:error", is: "is:", since: "since:", from: "from:", to: "to:",
};
const VALUE_FIELDS = new Set(["status", "agent", "model", "env", "release", "tag", "user"]);
const STATIC_VALUES = { since: ["15m", "1h", "24h", "7d", "30d"], is: ["experiment", "judge"], has: ["error"] };
const BARE = /^[^\s"\\,:<>=!*-][^\s"\\,:<>=!]*$/;
const quote = (s) => (BARE.test(s) ? s : `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`);

let items = [];
let active = -1;
let request = 0;
let timer = null;

/** The token that ends at the caret: its start and text (quotes count as part of a token). */
function tokenAtCaret() {
  const end = input.selectionStart ?? input.value.length;
  let start = end;
  let inQuote = false;
  for (let i = 0; i < end; i++) if (input.value[i] === '"' && input.value[i - 1] !== "\\") inQuote = !inQuote;
  while (start > 0) {
    const c = input.value[start - 1];
    if (c === '"' && input.value[start - 2] !== "\\") inQuote = !inQuote;
    if (/\s/.test(c) && !inQuote) break;
    start--;
  }
  return { start, end, text: input.value.slice(start, end) };
}

function show(next) {
  items = next.slice(0, 12);
  active = -1;
  list.replaceChildren(...items.map((s, i) => {
    const li = document.createElement("li");
    li.id = `filter-suggestion-${i}`;
    li.setAttribute("role", "option");
    li.textContent = s.label ?? s.text;
    if (s.hint) li.append(Object.assign(document.createElement("span"), { className: "hint", textContent: s.hint }));
    li.addEventListener("mousedown", (e) => { e.preventDefault(); take(i); });
    return li;
  }));
  list.hidden = items.length === 0;
  input.setAttribute("aria-expanded", String(items.length > 0));
  input.removeAttribute("aria-activedescendant");
}

function highlight(i) {
  active = (i + items.length) % items.length;
  list.querySelectorAll("li").forEach((li, j) => li.setAttribute("aria-selected", String(j === active)));
  input.setAttribute("aria-activedescendant", `filter-suggestion-${active}`);
}

function take(i) {
  const s = items[i];
  if (!s) return;
  const t = tokenAtCaret();
  const open = /[:.>]$/.test(s.text);
  const rest = input.value.slice(t.end);
  const text = s.text + (open || rest.startsWith(" ") ? "" : " ");
  input.value = input.value.slice(0, t.start) + text + rest;
  const caret = t.start + text.length;
  input.setSelectionRange(caret, caret);
  show([]);
  input.focus();
  if (open) suggest();
}

async function values(field, prefix) {
  const url = `${base}/runs/filter-values?field=${encodeURIComponent(field)}&prefix=${encodeURIComponent(prefix)}`;
  const res = await fetch(url, { credentials: "same-origin", headers: { accept: "application/json" } });
  return res.ok ? (await res.json()).values : [];
}

/** Suggestions for the token under the caret. */
async function suggest() {
  const mine = ++request;
  const { text } = tokenAtCaret();
  const neg = text.startsWith("-") ? "-" : "";
  const body = text.slice(neg.length);
  let next = [];
  const field = /^([a-z]+)(?::|!=)(.*)$/i.exec(body);
  const dotted = /^(meta|score)\.([^:<>=!]*)$/i.exec(body);
  const metaValue = /^meta\.([^:<>=!]+)(?::|!=)(.*)$/i.exec(body);
  if (metaValue) {
    const [, key, prefix] = metaValue;
    next = (await values(`meta.${key}`, prefix.replace(/^"/, ""))).map((v) => ({ text: `${neg}meta.${quote(key)}:${quote(v)}` }));
  } else if (dotted) {
    const [, kind, prefix] = dotted;
    const names = await values(kind.toLowerCase() === "meta" ? "meta" : "score", prefix.replace(/^"/, ""));
    next = names.map((n) => (kind.toLowerCase() === "meta" ? { text: `${neg}meta.${quote(n)}:`, hint: "metadata key" } : { text: `${neg}score.${quote(n)}>`, label: `score.${n}`, hint: "score" }));
  } else if (field && (VALUE_FIELDS.has(field[1].toLowerCase()) || STATIC_VALUES[field[1].toLowerCase()])) {
    const name = field[1].toLowerCase();
    const prefix = field[2].split(",").pop().replace(/^"/, "");
    const head = body.slice(0, body.length - field[2].length) + field[2].slice(0, field[2].length - field[2].split(",").pop().length);
    const found = STATIC_VALUES[name] ? STATIC_VALUES[name].filter((v) => v.startsWith(prefix)) : await values(name, prefix);
    next = found.map((v) => ({ text: `${neg}${head}${quote(v)}` }));
  } else if (/^[a-z]*$/i.test(body) && (body.length > 0 || text === "")) {
    next = Object.entries(FIELD_STARTS).filter(([name]) => name.startsWith(body.toLowerCase()) && name !== body.toLowerCase()).map(([, start]) => ({ text: neg + start }));
    if (text === "") next = next.slice(0, 8);
  }
  if (mine === request && document.activeElement === input) show(next);
}

function schedule() {
  clearTimeout(timer);
  timer = setTimeout(() => suggest().catch(() => show([])), 120);
}

if (input && list) {
  input.addEventListener("input", schedule);
  input.addEventListener("focus", schedule);
  input.addEventListener("click", schedule);
  input.addEventListener("blur", () => setTimeout(() => show([]), 100));
  input.addEventListener("keydown", (e) => {
    if (list.hidden) return;
    if (e.key === "ArrowDown") { e.preventDefault(); highlight(active + 1); }
    else if (e.key === "ArrowUp") { e.preventDefault(); highlight(active - 1); }
    else if ((e.key === "Enter" || e.key === "Tab") && active >= 0) { e.preventDefault(); take(active); }
    else if (e.key === "Escape") { e.preventDefault(); show([]); }
  });
}
