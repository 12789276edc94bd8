// Search in the trace: span names at once, in the browser (every name is in the model), and the text of the spans'
// payloads a moment later from the server (/dashboard/:run/search), which reads them where they are stored. Matches
// are kept in tree order; next and previous unfold the match's ancestors, scroll it into view and open it.

const NAMES_DELAY_MS = 120;
const TEXT_DELAY_MS = 350;

export class TraceSearch {
  /** goTo(pos) shows match pos (-1: the run); changed() after the matches change. */
  constructor({ input, count, base, runId, model, goTo, changed }) {
    Object.assign(this, { input, count, base, runId, model, goTo, changed });
    this.query = "";
    this.names = [];
    this.text = [];
    this.textRun = false;
    this.textMore = false;
    this.matches = [];
    this.at = -1;
    this.timers = [];
    input.addEventListener("input", () => this.schedule());
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); this.step(e.shiftKey ? -1 : 1); }
    });
  }

  schedule() {
    for (const t of this.timers) clearTimeout(t);
    const q = this.input.value.trim();
    this.timers = [setTimeout(() => this.findNames(q), NAMES_DELAY_MS)];
    if (q.length >= 2) this.timers.push(setTimeout(() => this.findText(q), TEXT_DELAY_MS));
  }

  findNames(q) {
    if (q !== this.query) { this.text = []; this.textRun = false; this.textMore = false; this.at = -1; }
    this.query = q;
    this.names = q ? this.model.namesMatching(q) : [];
    this.merge();
  }

  async findText(q) {
    const url = new URL(`${this.base}/dashboard/${encodeURIComponent(this.runId)}/search`, location.origin);
    url.searchParams.set("q", q);
    url.searchParams.set("limit", "1000");
    try {
      const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
      if (!res.ok || this.input.value.trim() !== q) return;
      const body = await res.json();
      this.text = body.spans.map((id) => this.model.positionOf(id)).filter((p) => p !== undefined);
      this.textRun = body.run;
      this.textMore = body.more;
      this.merge();
    } catch (err) {
      console.warn("trace search failed", err);
    }
  }

  /** The matches again (spans came, or the text search answered), keeping the current one. */
  merge() {
    const current = this.matches[this.at];
    const all = this.model.inTreeOrder([...new Set([...this.names, ...this.text])]);
    this.matches = this.textRun ? [-1, ...all] : all;
    const kept = current === undefined ? -1 : this.matches.indexOf(current);
    this.at = kept;
    this.show();
    this.changed(new Set(this.matches));
  }

  show() {
    const n = this.matches.length;
    this.count.textContent = !this.query ? "" : n === 0 ? "no match" : `${this.at >= 0 ? this.at + 1 : 0} of ${n}${this.textMore ? "+" : ""}`;
  }

  step(dir) {
    if (!this.matches.length) return;
    this.at = this.at < 0 ? (dir > 0 ? 0 : this.matches.length - 1) : (this.at + dir + this.matches.length) % this.matches.length;
    this.show();
    this.goTo(this.matches[this.at]);
  }

  clear() {
    this.input.value = "";
    this.schedule();
  }
}
