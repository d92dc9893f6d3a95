// The pending-change views' cost (bench_pending_changes.py bundles this with esbuild and runs it in Chromium):
// `proposals` proposals spread over two notebooks, each rendered on arrival (the diff, the reveal, the lookalike
// marks, the view, attached to the page and laid out) and then kept (Keep applies it). Sets window.benchResult:
// per-proposal render and keep times in ms.

import { PendingChanges } from "../js/src/notebook/pending";
import { pendingView } from "../js/src/notebook/view";

class Doc {
  list: { id: string; type: string; source: string }[];
  next = 0;
  constructor(cells: number) {
    this.list = Array.from({ length: cells }, (_, i) => ({ id: `cell-${i}`, type: "code", source: body(i, 30) }));
  }
  cells() {
    return this.list.map((c) => ({ ...c }));
  }
  insert(index: number, type: string, source: string) {
    this.list.splice(index, 0, { id: `new-${this.next++}`, type, source });
  }
  setSource(id: string, source: string) {
    const cell = this.list.find((c) => c.id === id);
    if (cell) cell.source = source;
  }
  remove(id: string) {
    this.list = this.list.filter((c) => c.id !== id);
  }
}

function body(seed: number, lines: number): string {
  return Array.from({ length: lines }, (_, i) => `value_${seed}_${i} = compute(${i}, "${"x".repeat(i % 40)}")`).join("\n");
}

const params = new URLSearchParams(location.hash.slice(1));
const proposals = Number(params.get("proposals") ?? 50);
const rounds = Number(params.get("rounds") ?? 5);
const render: number[] = [];
const keep: number[] = [];
for (let round = 0; round < rounds; round++) {
  const notebooks = [new Doc(60), new Doc(60)].map((doc) => {
    const host = document.body.appendChild(document.createElement("div"));
    return { doc, store: new PendingChanges(doc), host, views: new Map<string, HTMLElement>() };
  });
  const show = (nb: (typeof notebooks)[number], id: string) => {
    const change = nb.store.get(id)!;
    const el = pendingView(change, nb.store.diff(change), nb.store.stale(change), { keep() {}, discard() {} });
    nb.views.get(id)?.remove();
    nb.views.set(id, el);
    nb.host.append(el);
    void el.offsetHeight; // laid out, as the page shows it
  };
  for (let i = 0; i < proposals; i++) {
    const nb = notebooks[i % 2]!;
    const id = `c${round}-${i}`;
    const kind = i % 3 === 0 ? "insert" : "edit";
    const t0 = performance.now();
    const result = nb.store.propose({ id, kind, index: 2 + Math.floor(i / 2), source: body(i + 1000, 30) + "\u202e" + " ".repeat(300), cellType: kind === "insert" ? "code" : null });
    if (!result.ok) throw new Error(result.error);
    show(nb, id);
    render.push(performance.now() - t0);
  }
  for (const nb of notebooks) {
    for (const change of nb.store.all()) {
      const t0 = performance.now();
      nb.store.keep(change.id);
      nb.views.get(change.id)?.remove();
      void nb.host.offsetHeight;
      keep.push(performance.now() - t0);
    }
  }
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))]!;
Object.assign(window, { benchResult: {
  proposals, rounds,
  render_ms: { p50: pct(render, 50), p95: pct(render, 95), max: Math.max(...render) },
  keep_ms: { p50: pct(keep, 50), p95: pct(keep, 95), max: Math.max(...keep) },
} });
