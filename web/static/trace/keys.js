// The trace's keyboard: ↑/↓ (or k/j) move through the rows, ← folds a span (or goes to its parent), → unfolds it
// (or goes to its first child), Enter opens the row in the panel, Home/End go to the ends, Esc closes the panel;
// `/` anywhere on the page (outside a text field) goes to the search box, and Esc there clears it.

const typing = (t) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));

/**
 * view: TreeView; model: TraceModel; open(pos): shows row pos (-1: the run); close(); toggle(pos, folded): folds or
 * unfolds; search: the search box; clearSearch().
 */
export function bindKeys({ view, model, open, close, toggle, search, clearSearch }) {
  const tree = view.scroll;
  tree.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const n = view.cursor;
    const pos = view.positionAt(n);
    const kids = pos === -1 ? model.size > 0 : model.hasKids(pos);
    const folded = pos === -1 ? view.runFolded : kids && model.isFolded(pos);
    switch (e.key) {
      case "ArrowDown": case "j": view.moveTo(n + 1); break;
      case "ArrowUp": case "k": view.moveTo(n - 1); break;
      case "Home": view.moveTo(0); break;
      case "End": view.moveTo(view.count - 1); break;
      case "PageDown": view.moveTo(n + Math.floor(tree.clientHeight / view.rowHeight)); break;
      case "PageUp": view.moveTo(n - Math.floor(tree.clientHeight / view.rowHeight)); break;
      case "ArrowRight": case "l":
        if (kids && folded) toggle(pos, false);
        else if (kids) view.moveTo(n + 1);
        break;
      case "ArrowLeft": case "h":
        if (kids && !folded) toggle(pos, true);
        else if (pos !== -1) {
          const parent = model.parent[pos];
          view.moveTo(parent === -1 ? 0 : view.rowOf(parent));
        }
        break;
      case "Enter": case " ": open(pos); break;
      case "Escape": close(); break;
      default: return;
    }
    e.preventDefault();
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && !typing(e.target) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      search.focus();
      search.select();
    } else if (e.key === "Escape" && e.target === search) {
      clearSearch();
      tree.focus();
    } else if (e.key === "Escape" && !typing(e.target) && e.target !== tree) {
      close();
    }
  });
}
