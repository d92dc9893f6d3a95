// Tiny DOM helpers shared by the widgets. Text always goes in through textContent, never innerHTML:
// the only HTML this package ever parses is sanitized markdown output (see chat/markdown.ts).

type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | null | undefined | false;

/** Create an element; `true` sets a boolean attribute, `false`/`null`/`undefined` leave it out. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    el.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child);
  }
  return el;
}

/** Set or remove an attribute to mirror a value (avoids touching the DOM when nothing changed). */
export function setAttr(el: Element, name: string, value: string | null): void {
  if (value === null) {
    if (el.hasAttribute(name)) el.removeAttribute(name);
  } else if (el.getAttribute(name) !== value) {
    el.setAttribute(name, value);
  }
}

/** Set textContent only when it differs, so unchanged nodes are left alone. */
export function setText(el: Node, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** Copy text to the clipboard; resolves false where the Clipboard API is unavailable or refused. */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}

/** A "Copy" button that copies what `getText` returns and says whether it worked. */
export function copyButton(getText: () => string, label = "Copy"): HTMLButtonElement {
  const button = h("button", { type: "button", class: "hn-copy", "aria-label": label }, "Copy");
  button.addEventListener("click", () => {
    void copyText(getText()).then((ok) => {
      button.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(() => (button.textContent = "Copy"), 1500);
    });
  });
  return button;
}

/** The text a tool's arguments or result show as: strings as they are, anything else as indented JSON. */
export function displayText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

/** Run `callback` at the next animation frame (a 16 ms timer where there are none, e.g. jsdom); returns a cancel. */
export function animationFrame(callback: () => void): () => void {
  if (typeof requestAnimationFrame === "function") {
    const id = requestAnimationFrame(callback);
    return () => cancelAnimationFrame(id);
  }
  const id = setTimeout(callback, 16);
  return () => clearTimeout(id);
}
