// Reads the run's tree into the model: its span skeletons a page at a time (the first page small, so the first
// screen comes soon), every page from the read the first came from (`at`), then — for a live run — what
// changed since that read's cursor (`since`, `n`). The server answers `reset` when its events up to the cursor are not
// what they were (an event stored late): the tree is then read again, keeping what the reader folded.
// run.njk preloads the first page at the address this asks for it (limit, then started): keep the two alike.
const FIRST_PAGE = 300;
const PAGE = 10_000;

export class TreeLoader {
  /** onPage({ run, total, loaded }) after each page; onRun(run) with each answer's run. */
  /** started: the run's version when the page started the tree's read (the first page asks for that read). */
  constructor({ base, runId, started, model, onPage, onRun }) {
    Object.assign(this, { base, runId, started, model, onPage, onRun });
    this.cursor = null;
    this.loading = null;
  }

  async get(params) {
    const url = new URL(`${this.base}/dashboard/${encodeURIComponent(this.runId)}/tree`, location.origin);
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) url.searchParams.set(k, String(v));
    const res = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
    if (body.run) this.onRun(body.run);
    return body;
  }

  /** Reads the whole tree, page after page. */
  load() {
    this.loading = (async () => {
      let after;
      let limit = FIRST_PAGE;
      let at;
      let loaded = 0;
      for (;;) {
        const page = await this.get({ limit, after, at, started: loaded === 0 ? this.started : undefined });
        if (loaded === 0) {
          this.model.clear();
          this.cursor = { since: page.cursor, n: page.n };
          at = page.cursor;
        }
        for (const s of page.spans) this.model.upsert(s);
        loaded += page.spans.length;
        this.onPage({ run: page.run, total: page.total, loaded, done: !page.next_after });
        if (!page.next_after) break;
        after = page.next_after;
        limit = PAGE;
      }
    })();
    return this.loading;
  }

  /** What changed since the cursor, into the model: the ids of the spans that changed; null when the tree was read again. */
  async changes() {
    await this.loading;
    if (!this.cursor) return [];
    const body = await this.get(this.cursor);
    if (body.reset) {
      this.started = undefined;
      await this.load();
      return null;
    }
    this.cursor = { since: body.cursor, n: body.n };
    for (const s of body.spans) this.model.upsert(s);
    return body.spans.map((s) => s.span_id);
  }
}
