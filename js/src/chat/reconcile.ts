// Keyed list reconciliation by object identity: create views for new ids, update views whose item
// object changed (the reducer replaces only touched objects), drop views for ids that went away, and
// fix the order with the fewest moves (none in the common append-only case).

export interface ItemView<T> {
  readonly el: HTMLElement;
  update(item: T): void;
}

export function reconcile<T extends { id: string }, V extends ItemView<T>>(
  container: HTMLElement,
  items: readonly T[],
  views: Map<string, { view: V; item: T }>,
  create: (item: T) => V,
  /** the container's children before this node are not ours (e.g. a "show earlier" control) */
  after: ChildNode | null = null,
): void {
  const seen = new Set<string>();
  let cursor: ChildNode | null = after === null ? container.firstChild : after.nextSibling;
  for (const item of items) {
    seen.add(item.id);
    let entry = views.get(item.id);
    if (entry === undefined) {
      entry = { view: create(item), item };
      views.set(item.id, entry);
    } else if (entry.item !== item) {
      entry.item = item;
      entry.view.update(item);
    }
    const el = entry.view.el;
    if (cursor === el) cursor = el.nextSibling;
    else container.insertBefore(el, cursor);
  }
  for (const [id, entry] of views) {
    if (!seen.has(id)) {
      entry.view.el.remove();
      views.delete(id);
    }
  }
}
