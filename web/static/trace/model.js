// The trace's spans in the browser: the skeletons the tree API sends (docs/API.md, "Trace"), placed under their
// parents (siblings in start order), and the rows a reader sees: the tree in order, folded subtrees left out, a kind
// filter applied. Spans come in pages and live updates in any order: a span whose parent has not come yet waits as a
// root and moves under its parent when that arrives, unless that would make a loop (as the server lays a tree out:
// web/runs/trace-skeleton.ts). No recursion anywhere: a parent chain may be thousands of spans long.

/** Index of the first element of `list` (indexes into `start`) whose start is after `t`: where a span starting at t goes. */
function upperBound(list, start, t) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (start[list[mid]] <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class TraceModel {
  constructor() {
    /** Position → span (the skeleton as sent, updated in place). */
    this.spans = [];
    this.index = new Map();
    this.start = [];
    this.parent = [];
    this.kids = [];
    this.roots = [];
    /** Parent id not seen yet → the positions of the spans waiting for it (listed as roots meanwhile). */
    this.waiting = new Map();
    /** Folded spans, by id (so a fold outlives a reload of the tree). */
    this.folded = new Set();
    this.kinds = new Set();
    this.range = { start: Infinity, end: -Infinity };
    /** Bumped when a span is added or moves (the order), when any changes (the totals), when the rows shown change. */
    this.structure = 0;
    this.values = 0;
    this.dirty = true;
  }

  /** Forgets every span (a reload of the tree), keeping what the reader folded. */
  clear() {
    const folded = this.folded;
    const structure = this.structure;
    Object.assign(this, new TraceModel());
    this.folded = folded;
    this.structure = structure + 1;
  }

  get size() { return this.spans.length; }
  at(i) { return this.spans[i]; }
  positionOf(id) { return this.index.get(id); }

  /** Adds or updates a span; what it did: "added", "changed" (in place), "moved" (another parent or start). */
  upsert(skel) {
    const t = Date.parse(skel.started_at);
    const i = this.index.get(skel.span_id);
    this.kinds.add(skel.kind);
    this.widen(t, skel.duration_ms);
    this.values++;
    if (i === undefined) {
      const n = this.spans.length;
      this.spans.push(skel);
      this.index.set(skel.span_id, n);
      this.start.push(Number.isFinite(t) ? t : 0);
      this.parent.push(-1);
      this.kids.push(undefined);
      this.place(n, skel.parent_span_id);
      this.adopt(n);
      this.structure++;
      this.dirty = true;
      return "added";
    }
    const was = this.spans[i];
    const moved = was.parent_span_id !== skel.parent_span_id || this.start[i] !== t;
    this.spans[i] = skel;
    if (!moved) return "changed";
    this.detach(i);
    this.start[i] = Number.isFinite(t) ? t : 0;
    this.place(i, skel.parent_span_id);
    this.structure++;
    this.dirty = true;
    return "moved";
  }

  widen(t, duration) {
    if (!Number.isFinite(t)) return;
    this.range.start = Math.min(this.range.start, t);
    this.range.end = Math.max(this.range.end, t + (duration ?? 0));
  }

  /** Whether position `a` is `b` or one of its ancestors. */
  isAncestor(a, b) {
    for (let p = b; p !== -1; p = this.parent[p]) if (p === a) return true;
    return false;
  }

  place(i, parentId) {
    const p = parentId === null || parentId === undefined ? undefined : this.index.get(parentId);
    if (p !== undefined && !this.isAncestor(i, p)) {
      this.parent[i] = p;
      const list = (this.kids[p] ??= []);
      list.splice(upperBound(list, this.start, this.start[i]), 0, i);
      return;
    }
    this.parent[i] = -1;
    this.roots.splice(upperBound(this.roots, this.start, this.start[i]), 0, i);
    if (p === undefined && parentId) {
      const w = this.waiting.get(parentId);
      if (w) w.push(i);
      else this.waiting.set(parentId, [i]);
    }
  }

  detach(i) {
    const p = this.parent[i];
    const list = p === -1 ? this.roots : this.kids[p];
    const at = list.indexOf(i);
    if (at >= 0) list.splice(at, 1);
    this.parent[i] = -1;
  }

  /** The spans that waited for span `n` as their parent move under it. */
  adopt(n) {
    const id = this.spans[n].span_id;
    const waiting = this.waiting.get(id);
    if (!waiting) return;
    this.waiting.delete(id);
    for (const c of waiting) {
      if (this.parent[c] !== -1 || this.spans[c].parent_span_id !== id) continue;
      this.detach(c);
      this.place(c, id);
    }
  }

  hasKids(i) { return (this.kids[i]?.length ?? 0) > 0; }
  isFolded(i) { return this.folded.has(this.spans[i].span_id); }
  setFolded(i, folded) {
    const id = this.spans[i].span_id;
    if (folded === this.folded.has(id)) return false;
    if (folded) this.folded.add(id);
    else this.folded.delete(id);
    this.dirty = true;
    return true;
  }

  /** Every span in tree order, whatever is folded: positions, and each span's place in that order. */
  order() {
    if (this._order && this._orderFor === this.structure) return this._order;
    const list = new Int32Array(this.spans.length);
    const rank = new Int32Array(this.spans.length);
    const depth = new Int32Array(this.spans.length);
    let n = 0;
    const stack = [];
    for (let r = this.roots.length - 1; r >= 0; r--) stack.push(this.roots[r]);
    while (stack.length) {
      const i = stack.pop();
      rank[i] = n;
      list[n++] = i;
      const kids = this.kids[i];
      if (kids) for (let k = kids.length - 1; k >= 0; k--) { depth[kids[k]] = depth[i] + 1; stack.push(kids[k]); }
    }
    this._order = { list: list.subarray(0, n), rank, depth };
    this._orderFor = this.structure;
    return this._order;
  }

  /**
   * The rows shown: positions in tree order, without the subtrees of folded spans; with `kind`, only spans of that
   * kind and their ancestors. Depths beside them.
   */
  visible(kind = "") {
    const { list, depth } = this.order();
    let keep;
    if (kind) {
      keep = new Uint8Array(this.spans.length);
      for (let i = 0; i < this.spans.length; i++) {
        if (this.spans[i].kind !== kind) continue;
        for (let p = i; p !== -1 && !keep[p]; p = this.parent[p]) keep[p] = 1;
      }
    }
    const rows = new Int32Array(list.length);
    const depths = new Int32Array(list.length);
    let n = 0;
    for (let k = 0; k < list.length; k++) {
      const i = list[k];
      if (keep && !keep[i]) continue;
      rows[n] = i;
      depths[n++] = depth[i];
      if (this.folded.size && this.hasKids(i) && this.folded.has(this.spans[i].span_id)) {
        // Skip the subtree: the next spans in tree order deeper than this one.
        const d = depth[i];
        while (k + 1 < list.length && depth[list[k + 1]] > d) k++;
      }
    }
    this.dirty = false;
    return { rows: rows.subarray(0, n), depths: depths.subarray(0, n) };
  }

  /** Each span's subtree totals (LLM calls, tokens, cost), summed from the leaves up. */
  totals() {
    if (this._totals && this._totalsFor === this.values + ":" + this.structure) return this._totals;
    const n = this.spans.length;
    const calls = new Float64Array(n);
    const tokens = new Float64Array(n);
    const cost = new Float64Array(n);
    const { list } = this.order();
    for (let k = list.length - 1; k >= 0; k--) {
      const i = list[k];
      const s = this.spans[i];
      if (s.kind === "llm" && s.status !== "running") {
        calls[i] += 1;
        tokens[i] += s.tokens ?? 0;
        cost[i] += s.cost_usd ?? 0;
      }
      const p = this.parent[i];
      if (p !== -1) { calls[p] += calls[i]; tokens[p] += tokens[i]; cost[p] += cost[i]; }
    }
    this._totals = { calls, tokens, cost };
    this._totalsFor = this.values + ":" + this.structure;
    return this._totals;
  }

  /** Unfolds every ancestor of position i; whether anything changed. */
  reveal(i) {
    let changed = false;
    for (let p = this.parent[i]; p !== -1; p = this.parent[p]) changed = this.setFolded(p, false) || changed;
    return changed;
  }

  /** Positions whose name holds `q` (case-insensitive), in tree order. */
  namesMatching(q) {
    const needle = q.toLowerCase();
    const out = [];
    for (let i = 0; i < this.spans.length; i++) if (this.spans[i].name.toLowerCase().includes(needle)) out.push(i);
    return this.inTreeOrder(out);
  }

  inTreeOrder(positions) {
    const { rank } = this.order();
    return positions.sort((a, b) => rank[a] - rank[b]);
  }
}
