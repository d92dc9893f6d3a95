// The same notebook in two tabs: a duplicated tab copies sessionStorage (the shelf of pending changes with it), and
// must not offer a second Keep for a change the first tab still shows; a reload, or the first tab closed, takes the
// changes back as before.

import { describe, expect, it } from "vitest";

import { PendingChanges, type DocCell, type NotebookDoc } from "../src/notebook/pending";
import { SHELF_PREFIX, TabShelf } from "../src/notebook/shelf";
import { ChannelLocks, LOCK_PREFIX, type TabLocks } from "../src/notebook/tab_claim";

class Doc implements NotebookDoc {
  constructor(public list: DocCell[] = [{ id: "a", type: "code", source: "x = 1" }]) {}
  cells(): DocCell[] {
    return this.list.map((c) => ({ ...c }));
  }
  insert(index: number, type: string, source: string): void {
    this.list.splice(index, 0, { id: `n${this.list.length}`, type, source });
  }
  setSource(id: string, source: string): void {
    this.list = this.list.map((c) => (c.id === id ? { ...c, source } : c));
  }
  remove(id: string): void {
    this.list = this.list.filter((c) => c.id !== id);
  }
}

/** The browser's lock manager: which page holds each name (a page's locks go when it closes). */
class Browser {
  readonly holders = new Map<string, string>();
  page(id: string): TabLocks & { close(): void } {
    const holders = this.holders;
    return {
      async hold(name: string): Promise<boolean> {
        const holder = holders.get(name);
        if (holder !== undefined && holder !== id) return false;
        holders.set(name, id);
        return true;
      },
      close() {
        for (const [name, holder] of [...holders]) if (holder === id) holders.delete(name);
      },
    };
  }
}

class Storage {
  constructor(readonly items = new Map<string, string>()) {}
  getItem = (key: string) => this.items.get(key) ?? null;
  setItem = (key: string, value: string) => void this.items.set(key, value);
  removeItem = (key: string) => void this.items.delete(key);
  /** What a duplicated tab starts with: a copy. */
  copy(): Storage {
    return new Storage(new Map(this.items));
  }
}

/** A page opening the notebook in a tab with `storage`: its shelf claimed, then restored (as labextension.ts). */
async function open(locks: TabLocks, storage: Storage, doc = new Doc()) {
  const shelf = new TabShelf(() => "work/a.ipynb", storage);
  await shelf.claim(locks, 10);
  const store = new PendingChanges(doc, shelf);
  return { store, restored: store.restore(), doc };
}

const insert = (id: string, source: string) => ({ id, kind: "insert" as const, index: 0, source, cellType: "code" });

describe("the same notebook in two tabs", () => {
  it("a duplicated tab takes back none of the first tab's pending changes, so no change has two Keeps", async () => {
    const browser = new Browser();
    const tab = new Storage();
    const first = await open(browser.page("p1"), tab);
    first.store.propose(insert("c1", "y = 2"));
    first.store.propose(insert("c2", "z = 3"));
    const holder = JSON.parse(tab.items.get(`${SHELF_PREFIX}work/a.ipynb`)!).holder;
    expect(browser.holders.get(LOCK_PREFIX + holder)).toBe("p1");

    const copy = tab.copy(); // Duplicate tab: sessionStorage copied, the first tab still open
    const duplicate = await open(browser.page("p2"), copy);
    expect(duplicate.restored).toBe(0);
    expect(duplicate.store.all()).toEqual([]);
    expect(copy.items.size).toBe(0); // the copy is dropped: a later reload of the duplicate finds nothing either
    // The duplicate's own proposals go under its own holder; the first tab's shelf is untouched.
    duplicate.store.propose(insert("d1", "w = 4"));
    const own = JSON.parse(copy.items.get(`${SHELF_PREFIX}work/a.ipynb`)!).holder;
    expect(own).not.toBe(holder);
    expect(browser.holders.get(LOCK_PREFIX + own)).toBe("p2");
    expect(first.store.all().map((c) => c.id)).toEqual(["c1", "c2"]);

    // Keep in the first tab applies c1 once; the duplicate never had it to Keep again.
    expect(first.store.keep("c1").ok).toBe(true);
    expect(first.doc.list.filter((c) => c.source === "y = 2")).toHaveLength(1);
    expect(duplicate.store.keep("c1")).toEqual({ ok: false, error: "no pending change c1" });
  });

  it("a reload, a notebook reopened in the same page, or the first tab closed takes the changes back", async () => {
    const browser = new Browser();
    const tab = new Storage();
    const page = browser.page("p1");
    const first = await open(page, tab);
    first.store.propose(insert("c1", "y = 2"));
    const copy = tab.copy();
    expect((await open(page, tab)).restored).toBe(1); // closed and opened again in the same page
    page.close(); // reloaded: the old page's locks are gone
    const reloaded = await open(browser.page("p1b"), tab);
    expect(reloaded.restored).toBe(1);
    expect(reloaded.store.all().map((c) => c.id)).toEqual(["c1"]);
    // A copy made before, opened after its holder closed for good, takes the changes back (only one tab has them).
    browser.page("p1b").close();
    expect((await open(browser.page("p3"), copy)).restored).toBe(1);
    // Without locks (no Web Locks, no BroadcastChannel), a page takes its shelf back as before.
    const shelf = new TabShelf(() => "work/a.ipynb", tab);
    await shelf.claim(null);
    expect(new PendingChanges(new Doc(), shelf).restore()).toBe(1);
  });

  it("without Web Locks, tabs ask each other over a BroadcastChannel: a held name is refused, a free one taken", async () => {
    const name = `test-${Math.random()}`;
    const [one, two] = [new BroadcastChannel(name), new BroadcastChannel(name)];
    try {
      const first = new ChannelLocks(one);
      const second = new ChannelLocks(two);
      expect(await first.hold("shelf-1", 0)).toBe(true);
      expect(await first.hold("shelf-1", 50)).toBe(true); // this page holds it already
      expect(await second.hold("shelf-1", 50)).toBe(false); // the other tab answered
      expect(await second.hold("shelf-2", 50)).toBe(true); // nobody holds it
      expect(await first.hold("shelf-2", 50)).toBe(false);
    } finally {
      one.close();
      two.close();
    }
  });
});
