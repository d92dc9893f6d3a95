// Update live DOM to equal freshly rendered DOM, touching only what differs.
//
// A streamed markdown tail is re-rendered per batch, but between two batches it mostly changes by a few
// characters at its end. Swapping in the new nodes makes the browser restyle and lay out every one of them
// (a growing table or list relaid from scratch, ~1 ms a batch); morphing keeps the nodes that are the same
// and changes text in place, so only the text that grew is laid out again.
//
// Safety: the fresh nodes are already sanitized. A live element is kept only when its tag and every
// attribute equal the fresh one's, and text is copied as text, so the result is node-for-node the fresh DOM.
// Blocks that carry listeners (the code block with its copy button) are kept only when wholly equal.

/** Elements kept only when equal as a whole: their listeners close over their own descendants. */
const ATOMIC_CLASS = "hn-code";

/**
 * Make `current` (live nodes, in order) show what `next` (detached, freshly rendered) shows. Returns the
 * nodes to show, in order: each is a node of `current`, morphed, or one of `next`. The caller places them.
 */
export function morphNodes(current: readonly ChildNode[], next: readonly ChildNode[]): ChildNode[] {
  return next.map((fresh, i) => {
    const live = current[i];
    return live !== undefined && morphInto(live, fresh) ? live : fresh;
  });
}

/** Make `live` equal `fresh` if it can be done in place; false when `live` must be replaced. */
function morphInto(live: ChildNode, fresh: ChildNode): boolean {
  if (live.nodeType !== fresh.nodeType || live.nodeName !== fresh.nodeName) return false;
  if (live.nodeType === Node.TEXT_NODE || live.nodeType === Node.COMMENT_NODE) {
    const text = live as CharacterData;
    const data = (fresh as CharacterData).data;
    if (text.data !== data) text.data = data;
    return true;
  }
  if (live.nodeType !== Node.ELEMENT_NODE) return live.isEqualNode(fresh);
  const element = live as Element;
  const other = fresh as Element;
  if (!sameAttributes(element, other)) return false;
  if (element.classList.contains(ATOMIC_CLASS)) return element.isEqualNode(other);
  morphChildren(element, other);
  return true;
}

function sameAttributes(a: Element, b: Element): boolean {
  if (a.attributes.length !== b.attributes.length) return false;
  for (const attribute of Array.from(a.attributes)) {
    if (b.getAttributeNS(attribute.namespaceURI, attribute.localName) !== attribute.value) return false;
  }
  return true;
}

function morphChildren(live: Element, fresh: Element): void {
  const liveChildren = Array.from(live.childNodes);
  const freshChildren = Array.from(fresh.childNodes);
  freshChildren.forEach((child, i) => {
    const old = liveChildren[i];
    if (old === undefined) live.append(child);
    else if (!morphInto(old, child)) live.replaceChild(child, old);
  });
  for (const extra of liveChildren.slice(freshChildren.length)) extra.remove();
}
