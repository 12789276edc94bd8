// A layered (Sugiyama-style) layout of an agent graph, top to bottom: loops broken by reversing the edges that close
// them (drawn back up the side), layers by longest path from the run, each layer ordered by the barycentre of its
// neighbours to cut crossings, then coordinates and edge paths. Pure (no DOM), for graphs of up to a few hundred
// nodes (web/runs/agent-graph.ts caps them).

export const NODE_H = 44;
const LAYER_GAP = 64;
const NODE_GAP = 28;
const MARGIN = 24;
/** Room on the right for loops drawn back up the side. */
const BACK_LANE = 28;
const CHAR_W = 7.2;

/** A box wide enough for its lines of text (clamped: a longer name is shortened, whole in its tooltip). */
export const nodeWidth = (...lines) => Math.round(Math.min(240, Math.max(112, ...lines.map((l) => l.length * CHAR_W + 24))));
export const shortLabel = (name, max = 28) => (name.length > max ? `${name.slice(0, max - 1)}…` : name);

/** The edges that close a loop (found by a depth-first walk from the run, then from any node not yet reached). */
function backEdges(ids, out) {
  const state = new Map(); // 1: on the walk's stack, 2: done
  const back = new Set();
  const visit = (start) => {
    const stack = [[start, 0]];
    state.set(start, 1);
    while (stack.length) {
      const top = stack[stack.length - 1];
      const next = (out.get(top[0]) ?? [])[top[1]++];
      if (next === undefined) {
        state.set(top[0], 2);
        stack.pop();
        continue;
      }
      if (next.to === next.from) continue;
      const s = state.get(next.to);
      if (s === 1) back.add(next);
      else if (s === undefined) {
        state.set(next.to, 1);
        stack.push([next.to, 0]);
      }
    }
  };
  for (const id of ids) if (!state.has(id)) visit(id);
  return back;
}

/** Layer of each node: the longest path to it from a node nothing leads to, over the edges that are not back edges. */
function layers(ids, forward) {
  const indegree = new Map(ids.map((id) => [id, 0]));
  for (const e of forward) indegree.set(e.to, indegree.get(e.to) + 1);
  const layer = new Map(ids.map((id) => [id, 0]));
  const queue = ids.filter((id) => indegree.get(id) === 0);
  const outOf = new Map();
  for (const e of forward) (outOf.get(e.from) ?? outOf.set(e.from, []).get(e.from)).push(e.to);
  while (queue.length) {
    const id = queue.shift();
    for (const to of outOf.get(id) ?? []) {
      layer.set(to, Math.max(layer.get(to), layer.get(id) + 1));
      indegree.set(to, indegree.get(to) - 1);
      if (indegree.get(to) === 0) queue.push(to);
    }
  }
  return layer;
}

/** Orders each layer by the mean position of its neighbours in the layer above, then below, a few times. */
function order(rows, forward) {
  const up = new Map();
  const down = new Map();
  for (const e of forward) {
    (up.get(e.to) ?? up.set(e.to, []).get(e.to)).push(e.from);
    (down.get(e.from) ?? down.set(e.from, []).get(e.from)).push(e.to);
  }
  const pos = new Map();
  const place = () => rows.forEach((row) => row.forEach((id, i) => pos.set(id, i)));
  place();
  const sweep = (row, neighbours) => {
    const key = new Map(row.map((id, i) => {
      const ns = (neighbours.get(id) ?? []).filter((n) => pos.has(n));
      return [id, ns.length ? ns.reduce((a, n) => a + pos.get(n), 0) / ns.length : i];
    }));
    row.sort((a, b) => key.get(a) - key.get(b));
    row.forEach((id, i) => pos.set(id, i));
  };
  for (let pass = 0; pass < 4; pass++) {
    for (let r = 1; r < rows.length; r++) sweep(rows[r], up);
    for (let r = rows.length - 2; r >= 0; r--) sweep(rows[r], down);
  }
  place();
}

/**
 * Where each node goes and how each edge is drawn: {width, height, nodes: [{id, x, y, w, h}], edges: [{…edge, d, lx,
 * ly, back}]}. `widthOf(node)` sizes a node's box (default: by its name).
 */
export function layoutGraph(graph, { widthOf = (n) => nodeWidth(shortLabel(n.name)) } = {}) {
  const ids = graph.nodes.map((n) => n.id);
  const known = new Set(ids);
  const edges = graph.edges.filter((e) => known.has(e.from) && known.has(e.to));
  const out = new Map();
  for (const e of edges) (out.get(e.from) ?? out.set(e.from, []).get(e.from)).push(e);
  const back = backEdges(ids, out);
  const forward = edges.filter((e) => !back.has(e) && e.from !== e.to);
  const layer = layers(ids, forward);
  const rows = [];
  for (const id of ids) (rows[layer.get(id)] ??= []).push(id);
  for (let r = 0; r < rows.length; r++) rows[r] ??= [];
  order(rows, forward);

  const width = new Map(graph.nodes.map((n) => [n.id, widthOf(n)]));
  const rowWidth = (row) => row.reduce((a, id) => a + width.get(id), 0) + NODE_GAP * Math.max(0, row.length - 1);
  const inner = Math.max(0, ...rows.map(rowWidth));
  const box = new Map();
  rows.forEach((row, r) => {
    let x = MARGIN + (inner - rowWidth(row)) / 2;
    for (const id of row) {
      box.set(id, { id, x, y: MARGIN + r * (NODE_H + LAYER_GAP), w: width.get(id), h: NODE_H });
      x += width.get(id) + NODE_GAP;
    }
  });
  const totalW = inner + MARGIN * 2 + BACK_LANE;
  const totalH = MARGIN * 2 + rows.length * NODE_H + Math.max(0, rows.length - 1) * LAYER_GAP;

  // Edges between the same two nodes both ways are drawn apart (one left of centre, one right).
  const paired = new Set(edges.filter((e) => edges.some((o) => o.from === e.to && o.to === e.from && o !== e)).map((e) => e));
  const drawn = edges.map((e) => {
    const a = box.get(e.from);
    const b = box.get(e.to);
    if (e.from === e.to) { // a node calling or handing to itself: a loop on its right
      const x = a.x + a.w;
      const y = a.y + a.h / 2;
      return { ...e, back: true, d: `M ${x} ${y - 8} C ${x + 34} ${y - 26}, ${x + 34} ${y + 26}, ${x} ${y + 8}`, lx: x + 30, ly: y };
    }
    if (back.has(e) || layer.get(e.to) <= layer.get(e.from)) { // back up the right side
      const sx = a.x + a.w;
      const sy = a.y + a.h / 2;
      const tx = b.x + b.w;
      const ty = b.y + b.h / 2;
      const bend = Math.max(sx, tx) + 36 + Math.abs(sy - ty) / 8;
      return { ...e, back: true, d: `M ${sx} ${sy} C ${bend} ${sy}, ${bend} ${ty}, ${tx} ${ty}`, lx: bend - 8, ly: (sy + ty) / 2 };
    }
    const shift = paired.has(e) ? -Math.min(16, a.w / 5) : 0;
    const sx = a.x + a.w / 2 + shift;
    const sy = a.y + a.h;
    const tx = b.x + b.w / 2 + shift;
    const ty = b.y;
    const my = (sy + ty) / 2;
    return { ...e, back: false, d: `M ${sx} ${sy} C ${sx} ${my}, ${tx} ${my}, ${tx} ${ty}`, lx: (sx + tx) / 2, ly: my };
  });
  return { width: Math.ceil(totalW), height: Math.ceil(totalH), nodes: [...box.values()], edges: drawn };
}
