// Where a streamed message's rendered blocks go (incremental.ts decides what to render): finished top-level nodes
// in pages of PAGE_NODES (`div.hn-md-page`, layout-contained), the tail (the blocks still growing) at the end of the
// last page, where its blocks stay once finished. A node already where it belongs is not moved: a moved node is
// restyled and laid out from scratch. Owns: the pages, how full the last one is, the tail's nodes.

/**
 * Finished top-level nodes are grouped into pages of this many (`div.hn-md-page`, layout-contained), so
 * a change at the end lays out a few dozen pages and the last one, not thousands of blocks: without
 * them the browser's layout of a 1 MB message grows with its block count on every update.
 */
export const PAGE_NODES = 64;

/** From this many pages on, a message is long: its off-screen pages skip rendering (`.hn-md-long` in chat.css). */
export const LONG_PAGES = 4;

export interface MarkdownPages {
  /** The nodes after the finished blocks (always the last children of the last page). */
  readonly tail: readonly ChildNode[];
  /**
   * Show `finished` (now final, in order) after the finished blocks, and `tail` after them, at the end of the last
   * page. A block that finishes stays where it streamed (in the page it will belong to) unless that page is full.
   */
  place(finished: readonly ChildNode[], tail: readonly ChildNode[]): void;
  /** Empty the target: no pages, no tail. */
  clear(): void;
}

export function createPages(target: HTMLElement): MarkdownPages {
  let tailNodes: ChildNode[] = [];
  let page: HTMLElement | null = null;
  let pageNodes = 0;
  let pages = 0;

  const newPage = (): HTMLElement => {
    const created = document.createElement("div");
    created.className = "hn-md-page";
    target.append(created);
    if (++pages === LONG_PAGES) target.classList.add("hn-md-long");
    return created;
  };

  return {
    get tail() {
      return tailNodes;
    },
    place(finished, tail) {
      const keep = new Set([...finished, ...tail]);
      for (const node of tailNodes) if (!keep.has(node)) node.remove();
      const plan: { into: HTMLElement; nodes: ChildNode[] }[] = [];
      const slot = (into: HTMLElement): ChildNode[] => {
        if (plan[plan.length - 1]?.into !== into) plan.push({ into, nodes: [] });
        return plan[plan.length - 1]!.nodes;
      };
      for (const node of finished) {
        if (page === null || pageNodes >= PAGE_NODES) {
          page = newPage();
          pageNodes = 0;
        }
        slot(page).push(node);
        pageNodes += 1;
      }
      if (tail.length > 0) slot((page ??= newPage())).push(...tail);
      // Later pages first, so a node moving on to a new page has left the old one before the old one's end is checked.
      for (let k = plan.length - 1; k >= 0; k--) {
        const { into, nodes } = plan[k]!;
        let after: ChildNode | null = null;
        for (let i = nodes.length - 1; i >= 0; i--) {
          const node = nodes[i]!;
          if (node.parentNode !== into || node.nextSibling !== after) into.insertBefore(node, after);
          after = node;
        }
      }
      tailNodes = [...tail];
    },
    clear() {
      target.replaceChildren();
      tailNodes = [];
      page = null;
      pageNodes = 0;
      pages = 0;
      target.classList.remove("hn-md-long");
    },
  };
}
