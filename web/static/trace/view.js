// The span tree as a list that draws only the rows on screen: a spacer as tall as all rows, and a few row elements
// moved into place as the reader scrolls (one requestAnimationFrame per burst of scroll events). Row 0 is the run
// itself; the spans follow in tree order (model.js visible()). Texts are set with textContent: span names and ids
// are the client's, never markup.
import { count, duration, usd } from "../format.js";

const OVERSCAN = 8;
const INDENT_PX = 14;
/** Deeper levels are drawn at this depth (a parent chain may be thousands long). */
const MAX_INDENT = 24;

function el(tag, cls) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  return e;
}

/** A row: the tree cell (indented: caret, kind, name, score chips), then totals, the bar, the duration. */
function makeRow() {
  const row = el("div", "tv-row");
  row.setAttribute("role", "treeitem");
  const cell = el("span", "tv-cell");
  cell.append(el("span", "tv-caret"), el("span", "tv-kind"), el("span", "tv-name"), el("span", "tv-chips"));
  const bar = el("span", "tv-bar");
  bar.append(el("span", "tv-fill"));
  row.append(cell, el("span", "tv-facts"), bar, el("span", "tv-dur"));
  return row;
}

/** The row's parts, in the order fillRun and fillSpan set them. */
const parts = (row) => [...row.firstChild.children, ...[...row.children].slice(1)];

const chipText = (s) => `${s.name} ${s.value === true ? "✓" : s.value === false ? "✗" : typeof s.value === "number" ? (Number.isInteger(s.value) ? s.value : s.value.toFixed(2)) : String(s.value).slice(0, 20)}`;

export class TreeView {
  /**
   * model: TraceModel; run: () => the run's JSON (row 0); live: () => whether open spans still grow;
   * onActivate(pos): a row clicked (pos -1: the run); onToggle(pos): its caret clicked.
   */
  constructor(scroll, spacer, model, { run, live, onActivate, onToggle }) {
    Object.assign(this, { scroll, spacer, model, run, live, onActivate, onToggle });
    this.rows = new Int32Array(0);
    this.depths = new Int32Array(0);
    this.pool = [];
    this.cursor = 0; // the row the keyboard is on
    this.selected = null; // the span id shown in the panel ("" for the run), or null
    this.matches = new Set();
    /** Spans that came live, by id → when: their rows flash once. */
    this.fresh = new Map();
    this.kind = "";
    this.rowHeight = 28; // measured from a drawn row (the narrow layout's rows are taller): once, and on a resize
    this.measured = false;
    this.frame = 0;
    /** Bumped when what rows show changes; a row drawn at the same stamp for the same span is left as it is. */
    this.stamp = 0;
    scroll.addEventListener("scroll", () => this.schedule(), { passive: true });
    scroll.addEventListener("click", (e) => {
      const row = e.target.closest(".tv-row");
      if (!row) return;
      const n = Number(row.dataset.row);
      this.cursor = n;
      if (e.target.closest(".tv-caret")) this.onToggle(this.positionAt(n));
      else this.onActivate(this.positionAt(n));
    });
    new ResizeObserver(() => { this.measured = false; this.invalidate(); }).observe(scroll);
  }

  /** The span position of row n (-1 for the run's row). */
  positionAt(n) { return n === 0 ? -1 : this.rows[n - 1]; }
  get count() { return this.rows.length + 1; }
  rowOf(pos) {
    if (pos === -1) return 0;
    for (let n = 0; n < this.rows.length; n++) if (this.rows[n] === pos) return n + 1;
    return -1;
  }

  /** Takes the model's rows again (after spans came, or a fold), keeping the cursor on its span. */
  refresh() {
    const keep = this.positionAt(Math.min(this.cursor, this.count - 1));
    const runFolded = this.runFolded;
    const { rows, depths } = runFolded ? { rows: new Int32Array(0), depths: new Int32Array(0) } : this.model.visible(this.kind);
    this.rows = rows;
    this.depths = depths;
    const at = this.rowOf(keep);
    this.cursor = at >= 0 ? at : Math.min(this.cursor, this.count - 1);
    this.invalidate();
  }

  /** Redraws every row in view (what they show changed: the selection, the matches, the run, the clock). */
  invalidate() {
    this.stamp++;
    this.draw();
  }

  /** The rows' height as the stylesheet draws them; whether it changed. Reading it lays the page out: not per frame. */
  measure() {
    const row = this.pool.find((r) => !r.hidden);
    const h = row ? row.getBoundingClientRect().height : 0;
    if (h <= 0) return false;
    this.measured = true;
    if (Math.abs(h - this.rowHeight) <= 0.5) return false;
    this.rowHeight = h;
    return true;
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  /**
   * Draws the rows in view. Row n is drawn by element n mod the pool's size, so a row keeps its element while it stays
   * in the window (a scroll moves only the rows that leave it, and a click on a row finds the element it aimed at).
   */
  draw() {
    const h = this.rowHeight;
    this.spacer.style.height = `${this.count * h}px`;
    const first = Math.max(0, Math.floor(this.scroll.scrollTop / h) - OVERSCAN);
    const last = Math.min(this.count, Math.ceil((this.scroll.scrollTop + this.scroll.clientHeight) / h) + OVERSCAN);
    if (this.pool.length < last - first) {
      while (this.pool.length < last - first + OVERSCAN) {
        const row = makeRow();
        this.pool.push(row);
        this.spacer.append(row);
      }
      // Rows move to other elements (n mod a new size): every one is drawn again.
      for (const row of this.pool) { row.dataset.row = ""; row.drawn = ""; }
    }
    let totals = null;
    let range = null;
    const size = this.pool.length;
    const used = new Uint8Array(size);
    const stamp = `${this.stamp}:${this.model.values}:${h}`;
    for (let n = first; n < last; n++) {
      const row = this.pool[n % size];
      used[n % size] = 1;
      const pos = n === 0 ? -1 : this.rows[n - 1];
      const key = `${n}:${pos}:${stamp}`;
      if (row.drawn !== key) {
        totals ??= this.model.totals();
        range ??= this.range();
        row.hidden = false;
        if (n === 0) this.fillRun(row, range);
        else this.fillSpan(row, pos, this.depths[n - 1] + 1, totals, range);
        row.dataset.row = String(n);
        row.style.transform = `translateY(${n * h}px)`;
        row.drawn = key;
      }
      const cursor = n === this.cursor;
      if (row.classList.contains("tv-cursor") !== cursor) row.classList.toggle("tv-cursor", cursor);
    }
    for (let k = 0; k < size; k++) {
      if (used[k] || this.pool[k].hidden) continue;
      this.pool[k].hidden = true;
      this.pool[k].dataset.row = "";
      this.pool[k].drawn = "";
    }
    if (!this.measured && this.measure()) this.invalidate();
  }

  /** The time the bars are drawn over: the spans' range, or until now while the run goes on. */
  range() {
    const r = this.model.range;
    const start = Number.isFinite(r.start) ? r.start : Date.now();
    const end = Math.max(Number.isFinite(r.end) ? r.end : start, this.live() ? Date.now() : start);
    return { start, total: Math.max(1, end - start) };
  }

  fillRun(row, range) {
    const run = this.run() ?? {};
    row.dataset.spanId = "";
    row.className = `tv-row tv-run tv-${run.status === "success" ? "ok" : run.status === "error" ? "error" : "running"}`;
    row.setAttribute("aria-level", "1");
    row.setAttribute("aria-expanded", String(!this.runFolded));
    row.setAttribute("aria-selected", String(this.selected === ""));
    row.style.setProperty("--depth", "0");
    const [caret, kind, name, chips, facts, bar, dur] = parts(row);
    caret.textContent = this.model.size ? (this.runFolded ? "▸" : "▾") : "";
    kind.textContent = "run";
    kind.className = "tv-kind kind-run";
    name.textContent = run.agent_name || "Run";
    name.title = run.sdk_run_id ?? "";
    chips.replaceChildren();
    facts.textContent = run.total_tokens ? `${count(run.total_tokens)} tok · ${usd(run.cost_usd)}` : "";
    const started = run.started_at ? Date.parse(run.started_at) : range.start;
    const len = run.ended_at ? Date.parse(run.ended_at) - started : null;
    this.bar(bar.firstChild, started - range.start, len, range.total);
    dur.textContent = run.duration_ms !== null && run.duration_ms !== undefined ? duration(run.duration_ms) : run.status === "running" || run.status === "waiting_for_input" ? "running…" : "";
  }

  fillSpan(row, pos, depth, totals, range) {
    const s = this.model.at(pos);
    const kids = this.model.hasKids(pos);
    const folded = kids && this.model.isFolded(pos);
    row.dataset.spanId = s.span_id;
    const came = this.fresh.get(s.span_id);
    if (came !== undefined && Date.now() - came > 2000) this.fresh.delete(s.span_id);
    row.className = `tv-row tv-${s.status} tv-k-${s.kind}${this.matches.has(pos) ? " tv-match" : ""}${this.selected === s.span_id ? " tv-selected" : ""}${came !== undefined && this.fresh.has(s.span_id) ? " tv-new" : ""}`;
    row.setAttribute("aria-level", String(depth + 1));
    if (kids) row.setAttribute("aria-expanded", String(!folded));
    else row.removeAttribute("aria-expanded");
    row.setAttribute("aria-selected", String(this.selected === s.span_id));
    row.style.setProperty("--depth", String(Math.min(depth, MAX_INDENT)));
    const [caret, kind, name, chips, facts, bar, dur] = parts(row);
    caret.textContent = kids ? (folded ? "▸" : "▾") : "";
    kind.textContent = s.kind;
    kind.className = `tv-kind kind-${s.kind}`;
    name.textContent = s.name || "(unnamed)";
    name.title = depth > MAX_INDENT ? `${s.name} (level ${depth})` : s.name;
    if (s.model) {
      const m = el("span", "tv-model");
      m.textContent = s.model;
      name.append(" ", m);
    }
    chips.replaceChildren(...(s.scores ?? []).slice(0, 3).map((c) => {
      const chip = el("span", `tv-chip${c.value === false ? " tv-chip-bad" : c.value === true ? " tv-chip-good" : ""}`);
      chip.textContent = chipText(c);
      return chip;
    }));
    const calls = totals.calls[pos];
    facts.textContent = calls ? `${count(totals.tokens[pos])} tok · ${usd(totals.cost[pos])}${kids ? ` · ${calls} call${calls === 1 ? "" : "s"}` : ""}` : "";
    this.bar(bar.firstChild, this.model.start[pos] - range.start, s.duration_ms, range.total);
    dur.textContent = s.status === "running" ? (this.live() ? "running…" : "no end") : duration(s.duration_ms);
  }

  bar(fill, at, len, total) {
    const left = Math.min(100, Math.max(0, (100 * at) / total));
    const width = len === null || len === undefined ? 100 - left : Math.max(0.4, Math.min(100 - left, (100 * len) / total));
    fill.style.left = `${left}%`;
    fill.style.width = `${width}%`;
  }

  /** Moves the cursor to row n and scrolls it into view (centred when far). */
  moveTo(n, { center = false } = {}) {
    this.cursor = Math.max(0, Math.min(this.count - 1, n));
    const h = this.rowHeight;
    const top = this.cursor * h;
    const view = this.scroll.clientHeight;
    if (center || top < this.scroll.scrollTop || top + h > this.scroll.scrollTop + view) {
      this.scroll.scrollTop = center ? top - view / 2 + h / 2 : top < this.scroll.scrollTop ? top : top + h - view;
    }
    this.draw();
  }
}
