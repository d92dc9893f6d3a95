// The notebook extension's logic without JupyterLab: the line diff, the pending-change store over a fake notebook
// (Keep applies exactly, Discard changes nothing, several at once, the user editing meanwhile), the protocol's
// answers and checks, and the pending view (inert text, keyboard-reachable buttons).

import { describe, expect, it, vi } from "vitest";

import { lineDiff, splitLines } from "../src/notebook/diff";
import { MAX_PENDING, PendingChanges, type DocCell, type NotebookDoc } from "../src/notebook/pending";
import { parseShelved, SHELF_PREFIX, ShelfOwners, TabShelf } from "../src/notebook/shelf";
import { answer, checkedOutputs, outputKinds, requestFor, summarizeOutputs, type Host, type HostCell } from "../src/notebook/protocol";
import { CLICK_DELAY_MS } from "../src/click_guard";
import { pendingView } from "../src/notebook/view";
import { cellVersion } from "../src/notebook/versions";
import { renderCellChange } from "../src/chat/cell_change";
import { REVEAL_EVENT } from "../src/notebook/reveal";

class FakeDoc implements NotebookDoc {
  next = 100;
  constructor(public list: DocCell[]) {}
  cells(): DocCell[] {
    return this.list.map((c) => ({ ...c }));
  }
  insert(index: number, type: string, source: string): void {
    this.list.splice(index, 0, { id: `n${this.next++}`, type, source });
  }
  setSource(id: string, source: string): void {
    this.list = this.list.map((c) => (c.id === id ? { ...c, source } : c));
  }
  remove(id: string): void {
    this.list = this.list.filter((c) => c.id !== id);
  }
  snapshot(): string {
    return JSON.stringify(this.list);
  }
}

const notebook = (): FakeDoc =>
  new FakeDoc([
    { id: "a", type: "code", source: "import math\nx = math.pi" },
    { id: "m", type: "markdown", source: "# Title" },
    { id: "b", type: "code", source: "print(x)" },
  ]);

const proposal = (id: string, kind: "insert" | "edit" | "delete", index: number, source = "", cellType: string | null = null) => ({
  id,
  kind,
  index,
  source,
  cellType: kind === "insert" ? (cellType ?? "code") : null,
});

describe("lineDiff", () => {
  it("lists added and removed lines and counts them", () => {
    const diff = lineDiff("a\nb\nc", "a\nB\nc\nd");
    expect(diff.rows).toEqual([
      { kind: "same", text: "a" },
      { kind: "del", text: "b" },
      { kind: "add", text: "B" },
      { kind: "same", text: "c" },
      { kind: "add", text: "d" },
    ]);
    expect([diff.added, diff.removed]).toEqual([2, 1]);
  });

  it("folds long unchanged stretches around the change into a count", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i}`).join("\n");
    const after = before.replace("line 10", "LINE 10");
    const kinds = lineDiff(before, after).rows.map((r) => (r.kind === "skip" ? `skip ${r.count}` : r.kind));
    expect(kinds).toEqual(["skip 7", "same", "same", "same", "del", "add", "same", "same", "same", "skip 6"]);
  });

  it("treats an empty source as no lines and ignores one trailing newline", () => {
    expect(splitLines("")).toEqual([]);
    expect(splitLines("a\n")).toEqual(["a"]);
    expect(lineDiff("", "x = 1\n").rows).toEqual([{ kind: "add", text: "x = 1" }]);
  });
});

describe("PendingChanges", () => {
  it("changes nothing until Keep, then applies exactly the proposal", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    const before = doc.snapshot();
    expect(store.propose(proposal("c1", "insert", 1, "y = 2\nprint(y)")).ok).toBe(true);
    expect(store.propose(proposal("c2", "edit", 2, "print(x * 2)")).ok).toBe(true);
    expect(store.propose(proposal("c3", "delete", 1)).ok).toBe(true);
    expect(doc.snapshot()).toBe(before);
    expect(store.all().map((c) => [c.id, store.indexOf(c)])).toEqual([["c1", 1], ["c2", 2], ["c3", 1]]);

    expect(store.keep("c1").ok).toBe(true);
    expect(doc.list.map((c) => c.source)).toEqual(["import math\nx = math.pi", "y = 2\nprint(y)", "# Title", "print(x)"]);
    expect(store.keep("c2").ok).toBe(true); // by cell id: the insertion above moved it to index 3
    expect(doc.list[3]).toEqual({ id: "b", type: "code", source: "print(x * 2)" });
    expect(store.keep("c3").ok).toBe(true);
    expect(doc.list.map((c) => c.id)).toEqual(["a", "n100", "b"]);
    expect(store.all()).toEqual([]);
  });

  it("Discard leaves the cells exactly as they were", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    const before = doc.snapshot();
    store.propose(proposal("c1", "insert", 3, "new"));
    store.propose(proposal("c2", "edit", 0, "import math"));
    store.propose(proposal("c3", "delete", 2));
    for (const id of ["c2", "c1", "c3"]) expect(store.discard(id)).toBe(true);
    expect(doc.snapshot()).toBe(before);
    expect(store.discard("c1")).toBe(false);
  });

  it("follows the user's edits: a diff from the cell as it is now, stale when it changed, dropped when it is gone", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    store.propose(proposal("c1", "edit", 2, "print(x * 2)"));
    store.propose(proposal("c2", "insert", 1, "z = 0"));
    const edit = store.get("c1")!;
    expect(store.stale(edit)).toBe(false);
    doc.setSource("b", "print(x)\nprint('typed')");
    expect(store.stale(edit)).toBe(true);
    expect(store.diff(edit).rows.filter((r) => r.kind === "del").map((r) => r.text)).toEqual(["print(x)", "print('typed')"]);
    expect(store.keep("c1").ok).toBe(true);
    expect(doc.list[2]!.source).toBe("print(x * 2)"); // Keep applies the proposal as shown

    doc.remove("m"); // the insertion's place is gone: it moves to the end
    store.propose(proposal("c3", "delete", 0));
    doc.remove("a");
    const heard = vi.fn();
    store.onChange(heard);
    store.sync();
    expect(heard).toHaveBeenCalledOnce();
    expect(store.all().map((c) => [c.id, store.indexOf(c)])).toEqual([["c2", 1]]);
  });

  it("replaces an edit or deletion already waiting on the same cell, and refuses bad places", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    store.propose(proposal("c1", "edit", 0, "first"));
    store.propose(proposal("c2", "delete", 0));
    expect(store.all().map((c) => c.id)).toEqual(["c2"]);
    expect(store.propose(proposal("c3", "edit", 3, "x"))).toEqual({
      ok: false,
      error: "there is no cell 3; the notebook has 3 cells",
    });
    expect(store.propose(proposal("c4", "insert", 4, "x")).ok).toBe(false);
    expect(store.propose(proposal("c2", "insert", 0, "x"))).toEqual({ ok: false, error: "change c2 is already pending" });
    for (let i = 0; i < MAX_PENDING - 1; i++) store.propose(proposal(`i${i}`, "insert", 0, "x"));
    expect(store.propose(proposal("over", "insert", 0, "x")).ok).toBe(false);
  });

  it("refuses an edit that changes nothing (no +0 −0 card to decide)", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    const same = store.propose(proposal("c1", "edit", 0, doc.cells()[0]!.source));
    expect(same).toEqual({ ok: false, error: "cell 0 already has exactly this source: nothing to change" });
    expect(store.all()).toEqual([]);
  });
});

/** A tab's sessionStorage: a map, which can be made to refuse writes as a full storage does. */
class FakeStorage {
  items = new Map<string, string>();
  full = false;
  getItem(key: string): string | null {
    return this.items.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    if (this.full) throw new DOMException("quota", "QuotaExceededError");
    this.items.set(key, value);
  }
  removeItem(key: string): void {
    this.items.delete(key);
  }
}

describe("pending changes outlive a page reload (TabShelf)", () => {
  const setup = (path = "work/a.ipynb") => {
    const storage = new FakeStorage();
    let name = path;
    const shelf = new TabShelf(() => name, storage);
    return { storage, shelf, rename: (to: string) => (name = to) };
  };

  it("a reloaded page's store finds the same changes, with the same diffs, and Keep still applies them", () => {
    const doc = notebook();
    const { storage, shelf } = setup();
    const before = new PendingChanges(doc, shelf);
    expect(before.restore()).toBe(0); // a page's store opens its shelf once the cells are loaded
    before.propose(proposal("c1", "insert", 1, "y = 2\nprint(y)"));
    before.propose(proposal("c2", "edit", 2, "print(x * 2)"));
    before.propose(proposal("c3", "delete", 0));
    expect([...storage.items.keys()]).toEqual([`${SHELF_PREFIX}work/a.ipynb`]);

    const after = new PendingChanges(doc, shelf); // the reloaded page
    const heard = vi.fn();
    after.onChange(heard);
    expect(after.restore()).toBe(3);
    expect(heard).toHaveBeenCalledOnce();
    expect(after.all()).toEqual(before.all());
    for (const change of after.all()) expect(after.diff(change)).toEqual(before.diff(before.get(change.id)!));
    const untouched = doc.snapshot();
    expect(after.discard("c3")).toBe(true);
    expect(doc.snapshot()).toBe(untouched);
    expect(after.keep("c2").ok).toBe(true);
    expect(doc.list[2]).toEqual({ id: "b", type: "code", source: "print(x * 2)" });
    const again = new PendingChanges(doc, shelf);
    again.propose(proposal("c7", "insert", 0, "proposed while the page loads"));
    expect(storage.items.get(`${SHELF_PREFIX}work/a.ipynb`)).toContain('"c1"'); // not saved over before restore
    expect(again.restore()).toBe(1); // only c1 still waits, beside c7
    expect(again.all().map((c) => c.id)).toEqual(["c7", "c1"]);
    expect(again.discard("c7") && again.keep("c1").ok).toBe(true);
    expect(storage.items.size).toBe(0); // nothing waits: nothing kept in the tab
  });

  it("takes back only what still fits the reloaded notebook, and keeps a change that arrived first", () => {
    const { storage, shelf } = setup();
    const doc = notebook();
    const before = new PendingChanges(doc, shelf);
    before.restore();
    before.propose(proposal("c1", "edit", 0, "gone"));
    before.propose(proposal("c2", "insert", 1, "before the markdown"));
    before.propose(proposal("c3", "insert", 3, "at the end"));
    before.propose(proposal("c4", "edit", 2, "print(x * 2)"));
    before.propose(proposal("c5", "delete", 1));
    // The reloaded notebook lost cells a and m (say they were never saved) and a new edit of b came first.
    const reloaded = new FakeDoc([{ id: "b", type: "code", source: "print(x)" }]);
    const after = new PendingChanges(reloaded, shelf);
    after.propose(proposal("c9", "edit", 0, "print('newer')"));
    expect(after.restore()).toBe(1);
    expect(after.all().map((c) => [c.id, after.indexOf(c)])).toEqual([["c9", 0], ["c3", 1]]);
    expect(reloaded.snapshot()).toBe(JSON.stringify([{ id: "b", type: "code", source: "print(x)" }]));
    expect(parseShelved(JSON.parse(storage.items.get(`${SHELF_PREFIX}work/a.ipynb`)!)).changes.map((c) => c.id)).toEqual(["c9", "c3"]);
  });

  it("drops what is not a pending change, and works on when the storage is unreadable, full or missing", () => {
    const { storage, shelf } = setup();
    const good = { id: "c1", kind: "edit", cellType: "code", cellId: "a", base: "import math\nx = math.pi", source: "x = 1" };
    const key = `${SHELF_PREFIX}work/a.ipynb`;
    storage.items.set(key, JSON.stringify({ cells: ["a"], changes: [
      good,
      { ...good, id: "c2", kind: "run" }, // not a change kind
      { ...good, id: "c3", cellType: "script" },
      { ...good, id: "c4", cellId: null }, // an edit must name its cell
      { ...good, id: "x".repeat(101) },
      { ...good, id: "c6", source: 42 },
      { ...good, id: "c7", source: "s".repeat(20_001) },
      "c8",
      null,
    ] }));
    const store = new PendingChanges(notebook(), shelf);
    expect(store.restore()).toBe(1);
    expect(store.all().map((c) => c.id)).toEqual(["c1"]);

    storage.items.set(key, "{not json");
    expect(new PendingChanges(notebook(), shelf).restore()).toBe(0);
    storage.items.set(key, JSON.stringify([good])); // an array without the notebook's cell ids: not taken back
    expect(new PendingChanges(notebook(), shelf).restore()).toBe(0);

    storage.full = true; // the changes still wait in the page; they just do not outlive it
    const full = new PendingChanges(notebook(), shelf);
    expect(full.restore()).toBe(0);
    expect(full.propose(proposal("c5", "insert", 0, "x")).ok).toBe(true);
    expect(full.keep("c5").ok).toBe(true);

    const none = new PendingChanges(notebook(), new TabShelf(() => "b.ipynb", null));
    expect(none.propose(proposal("c6", "insert", 0, "x")).ok).toBe(true);
    expect(none.restore()).toBe(0);
    expect(none.all().map((c) => c.id)).toEqual(["c6"]);
  });

  it("with two views of one notebook, only the first keeps the shelf: a kept change does not come back", () => {
    const { storage } = setup();
    const owners = new ShelfOwners();
    const doc = notebook();
    const open = (view: object) =>
      new PendingChanges(doc, owners.claim("a.ipynb", view) ? new TabShelf(() => "a.ipynb", storage) : null);
    const [first, second] = [{}, {}];
    const a = open(first);
    const b = open(second); // JupyterLab's New View on the same notebook
    a.restore();
    b.restore();
    a.propose(proposal("c1", "insert", 0, "from the first view"));
    b.propose(proposal("c2", "insert", 0, "from the second view"));
    expect(a.keep("c1").ok).toBe(true);
    b.discard("c2");
    b.propose(proposal("c3", "edit", 0, "only in the second view"));
    // Reloaded: the views come back in the same order; c1 was kept and c3 lived only in the second view.
    const again = new ShelfOwners();
    const reopened = new PendingChanges(doc, again.claim("a.ipynb", first) ? new TabShelf(() => "a.ipynb", storage) : null);
    expect(reopened.restore()).toBe(0);
    expect(again.claim("a.ipynb", second)).toBe(false);
    owners.release("a.ipynb", second); // not the keeper: nothing changes
    expect(owners.claim("a.ipynb", {})).toBe(false);
    owners.moved("a.ipynb", "b.ipynb", first);
    expect(owners.claim("a.ipynb", second)).toBe(true);
    owners.release("b.ipynb", first);
    expect(owners.claim("b.ipynb", {})).toBe(true);
  });

  it("keeps each notebook's changes under its own path, and follows a rename", () => {
    const { storage, shelf, rename } = setup("a.ipynb");
    const doc = notebook();
    const store = new PendingChanges(doc, shelf);
    store.restore();
    store.propose(proposal("c1", "insert", 0, "x"));
    const other = new PendingChanges(notebook(), new TabShelf(() => "b.ipynb", storage));
    expect(other.restore()).toBe(0);
    rename("renamed.ipynb");
    shelf.forget("a.ipynb");
    store.persist();
    expect([...storage.items.keys()]).toEqual([`${SHELF_PREFIX}renamed.ipynb`]);
    expect(new PendingChanges(doc, shelf).restore()).toBe(1);
  });
});

function host(doc: FakeDoc, run = vi.fn()): Host {
  const store = new PendingChanges(doc);
  const cells = (): HostCell[] =>
    doc.cells().map((c) => ({
      ...c,
      execution_count: c.type === "code" ? 1 : null,
      outputs: c.id === "a" ? [{ output_type: "execute_result", data: { "text/plain": "3.14" } }] : [],
    }));
  return { store, path: () => "nb.ipynb", cells, run, setOutputs: vi.fn(), restartAndRunAll: vi.fn() };
}

describe("protocol", () => {
  it("takes only requests addressed to this page", () => {
    expect(requestFor({ type: "request", id: "r1", to: "me", op: "outline" }, "me")).toEqual({ id: "r1", op: "outline", fields: {} });
    expect(requestFor({ type: "request", id: "r1", to: "other", op: "outline" }, "me")).toBeNull();
    expect(requestFor({ type: "request", to: "me", op: "outline" }, "me")).toBeNull();
    expect(requestFor("junk", "me")).toBeNull();
  });

  it("answers an outline with bounded sources, line counts, output kinds and pending changes", async () => {
    const doc = notebook();
    doc.list[0] = { ...doc.list[0]!, source: "x".repeat(5000) };
    const h = host(doc);
    await answer({ id: "r1", op: "propose", fields: { change: { id: "c1", kind: "insert", index: 1, source: "y" } } }, h);
    const reply = (await answer({ id: "r2", op: "outline", fields: {} }, h)) as Record<string, any>;
    expect(reply.ok).toBe(true);
    expect(reply.path).toBe("nb.ipynb");
    expect(reply.cells[0].source).toHaveLength(1000);
    expect(reply.cells[0].outputs).toEqual(["execute_result text/plain"]);
    expect(reply.cells[1]).toEqual({
      id: "m", type: "markdown", source: "# Title", version: cellVersion("# Title"), lines: 1, execution_count: null, outputs: [],
    });
    expect(reply.cells[0].version).toBe(cellVersion("x".repeat(5000))); // of the whole source, not the 1,000 sent
    expect(reply.pending).toEqual([{ id: "c1", kind: "insert", index: 1 }]);
  });

  it("checks a proposal's shape and reports the diff's size", async () => {
    const h = host(notebook());
    const propose = (change: unknown) => answer({ id: "r", op: "propose", fields: { change } }, h);
    expect(await propose({ id: "c1", kind: "edit", index: 2, source: "print(x)\nprint(2)" })).toEqual({
      ok: true,
      added: 1,
      removed: 0,
      cell_type: "code",
      path: "nb.ipynb",
      replaced: false,
      cell: "b",
      version: cellVersion("print(x)"),
    });
    expect((await propose({ id: "c2", kind: "rename", index: 0 })).ok).toBe(false);
    expect((await propose({ id: "c3", kind: "edit", index: 0 })).ok).toBe(false); // no source
    expect((await propose({ id: "c4", kind: "insert", index: 0, source: "x", cell_type: "html" })).ok).toBe(false);
    expect((await propose({ id: "c5", kind: "insert", index: 0, source: "x".repeat(100_001) })).ok).toBe(false);
    expect(await answer({ id: "r", op: "format_disk", fields: {} }, h)).toMatchObject({ ok: false });
    expect(h.store.all().map((c) => c.id)).toEqual(["c1"]);
  });

  it("runs a cell only when its source is still what the user approved", async () => {
    const run = vi.fn(async () => ({ execution_count: 7, outputs: [{ output_type: "stream", name: "stdout", text: ["3.1", "4\n"] }] }));
    const doc = notebook();
    const h = host(doc, run);
    const cell = (await answer({ id: "r1", op: "cell", fields: { index: 2 } }, h)) as Record<string, any>;
    expect(cell.cell).toEqual({ id: "b", type: "code", source: "print(x)", execution_count: 1 });
    doc.setSource("b", "print(x); import os");
    expect(await answer({ id: "r2", op: "run", fields: { cell: "b", source: "print(x)" } }, h)).toEqual({
      ok: false,
      error: "the cell changed after the user approved it, so it was not run",
    });
    expect(run).not.toHaveBeenCalled();
    expect(await answer({ id: "r3", op: "run", fields: { cell: "m", source: "# Title" } }, h)).toMatchObject({ ok: false });
    expect(await answer({ id: "r4", op: "run", fields: { cell: "b", source: "print(x); import os" } }, h)).toEqual({
      ok: true,
      execution_count: 7,
      outputs: [{ output_type: "stream", name: "stdout", text: "3.14\n" }],
    });
  });

  it("names outputs by kind and keeps only bounded text of them", () => {
    const outputs = [
      { output_type: "stream", name: "stderr", text: "warn" },
      { output_type: "error", ename: "ValueError", evalue: "bad", traceback: ["..."] },
      { output_type: "display_data", data: { "image/png": "AAAA", "text/plain": "<Figure>" } },
    ];
    expect(outputKinds(outputs)).toEqual(["stream stderr", "error ValueError", "display_data image/png, text/plain"]);
    const summary = summarizeOutputs([...outputs, { output_type: "execute_result", data: { "text/plain": "y".repeat(5000) } }]);
    expect(summary[2]).toEqual({ output_type: "display_data", mimes: ["image/png", "text/plain"], text: "<Figure>" });
    expect(String(summary[3]!.text)).toHaveLength(4001);
    expect(JSON.stringify(summary)).not.toContain("AAAA"); // image data stays in the notebook
    const coloured = { output_type: "error", ename: "NameError", evalue: "x", traceback: ["\x1b[31mNameError\x1b[0m: x", 3] };
    expect(summarizeOutputs([coloured])[0]).toEqual({ ...coloured, traceback: ["NameError: x"] }); // the agent reads text
  });

  it("restarts and runs all only when the kernel asks, answering before the restart", async () => {
    const h = host(notebook());
    expect(h.restartAndRunAll).not.toHaveBeenCalled();
    expect(await answer({ id: "r1", op: "restart_run_all", fields: {} }, h)).toEqual({ ok: true });
    expect(h.restartAndRunAll).toHaveBeenCalledTimes(1);
  });
});

describe("pendingView", () => {
  it("shows the model's text as text, says what it proposes, and has Keep and Discard buttons", () => {
    const store = new PendingChanges(notebook());
    const evil = '<img src=x onerror="window.__pwned=1">';
    const result = store.propose(proposal("c1", "insert", 0, `print(1)\n${evil}`, "markdown"));
    if (!result.ok) throw new Error(result.error);
    const keep = vi.fn();
    const discard = vi.fn();
    const el = pendingView(result.change, store.diff(result.change), false, { keep, discard }, -CLICK_DELAY_MS);
    document.body.append(el);
    expect(el.getAttribute("role")).toBe("region");
    expect(el.getAttribute("aria-label")).toBe("Hermes proposes a new markdown cell here");
    expect(el.hasAttribute("data-lm-suppress-shortcuts")).toBe(true);
    expect(el.querySelector("img")).toBeNull();
    expect([...el.querySelectorAll(".hn-pending-text")].map((n) => n.textContent)).toEqual(["print(1)", evil]);
    expect(el.querySelector(".hn-pending-stats")!.textContent).toBe("+2 −0");
    const buttons = [...el.querySelectorAll("button")];
    expect(buttons.map((b) => b.textContent)).toEqual(["Keep", "Discard"]);
    expect(buttons.every((b) => b.type === "button" && b.tabIndex === 0)).toBe(true);
    buttons[0]!.click();
    buttons[1]!.click();
    expect([keep.mock.calls.length, discard.mock.calls.length]).toEqual([1, 1]);
    el.remove();
  });

  it("warns when the user changed the cell after the proposal", () => {
    const doc = notebook();
    const store = new PendingChanges(doc);
    const result = store.propose(proposal("c1", "edit", 2, "print(2)"));
    if (!result.ok) throw new Error(result.error);
    doc.setSource("b", "print(3)");
    const el = pendingView(result.change, store.diff(result.change), store.stale(result.change), { keep() {}, discard() {} });
    expect(el.querySelector(".hn-pending-note")!.textContent).toContain("Keep replaces it");
    expect(el.getAttribute("aria-label")).toBe("Hermes proposes an edit of this cell");
  });
});

describe("the chat's cell change link", () => {
  it("names the change and asks the notebook to show it; says so when no notebook did", () => {
    const slot = document.createElement("div");
    renderCellChange(slot, { id: "c4", kind: "edit", index: 3, cell_type: "code" });
    expect(slot.hidden).toBe(false);
    expect(slot.querySelector(".hn-cell-change-label")!.textContent).toBe("Proposed an edit of cell 3, waiting for you:");
    const shown: string[] = [];
    const listener = (event: Event) => {
      shown.push((event as CustomEvent<{ change: string }>).detail.change);
      event.preventDefault(); // a notebook showed it
    };
    window.addEventListener(REVEAL_EVENT, listener);
    const button = slot.querySelector("button")!;
    button.click();
    expect(shown).toEqual(["c4"]);
    expect(slot.querySelector(".hn-cell-change-note")!.textContent).toBe("");
    window.removeEventListener(REVEAL_EVENT, listener);
    button.click(); // nobody listening: not pending any more, or no extension
    expect(slot.querySelector(".hn-cell-change-note")!.textContent).toContain("Not pending any more");
    renderCellChange(slot, undefined);
    expect(slot.hidden).toBe(true);
    expect(slot.childElementCount).toBe(0);
  });
});

describe("outputs the kernel ran for a cell (under a waiting %hermes cell)", () => {
  it("writes checked outputs into the cell only while its source is what ran", async () => {
    const h = host(notebook());
    const png = "iVBORw0KGgo=";
    const outputs = [
      { output_type: "stream", name: "stdout", text: "half 21\n" },
      { output_type: "display_data", data: { "image/png": png, "text/html": "<img src=x onerror=alert(1)>" }, metadata: {} },
      { output_type: "display_data", data: { "image/png": "not base64 <script>" } },
      { output_type: "execute_result", data: { "text/plain": "42", "application/javascript": "alert(1)" }, execution_count: 3 },
      { output_type: "error", ename: "ValueError", evalue: "bad", traceback: ["line 1", 7] },
      { output_type: "update_display_data", data: { "text/plain": "x" } },
    ];
    expect(await answer({ id: "r", op: "outputs", fields: { cell: "b", source: "print(x)", outputs } }, h)).toEqual({ ok: true });
    expect(h.setOutputs).toHaveBeenCalledWith("b", [
      { output_type: "stream", name: "stdout", text: "half 21\n" },
      { output_type: "display_data", data: { "image/png": png }, metadata: {} },
      { output_type: "execute_result", data: { "text/plain": "42" }, metadata: {}, execution_count: null },
      { output_type: "error", ename: "ValueError", evalue: "bad", traceback: ["line 1"] },
    ]);
    const changed = await answer({ id: "r", op: "outputs", fields: { cell: "b", source: "print(y)", outputs } }, h);
    expect(changed).toMatchObject({ ok: false, error: "the cell changed after it ran, so its outputs were not written" });
    expect(h.setOutputs).toHaveBeenCalledTimes(1);
    expect(checkedOutputs([{ output_type: "stream", name: "evil", text: 5 }])).toEqual([{ output_type: "stream", name: "stdout", text: "" }]);
  });
});
