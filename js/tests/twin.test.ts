import { afterEach, describe, expect, it } from "vitest";

import { HIDDEN_TWIN_CLASS, hideStaticTwin } from "../src/twin";

/** A JupyterLab output area: the live view's output, then its static twin output. */
function outputArea() {
  const area = document.createElement("div");
  area.className = "jp-OutputArea";
  const child = (inner: HTMLElement) => {
    const c = document.createElement("div");
    c.className = "jp-OutputArea-child";
    c.append(inner);
    area.append(c);
    return c;
  };
  const view = document.createElement("div");
  const viewChild = child(view);
  const twin = () => {
    const t = document.createElement("div");
    t.className = "hn-transcript";
    return child(t);
  };
  document.body.append(area);
  return { area, view, viewChild, twin };
}

const flushMutations = () => new Promise((resolve) => setTimeout(resolve, 0));
const now = (callback: () => void) => {
  callback();
  return () => undefined;
};

afterEach(() => document.body.replaceChildren());

describe("hiding the static twin", () => {
  it("hides the twin output once the view is live, never the view's own output or other outputs", () => {
    const { view, viewChild, twin, area } = outputArea();
    const first = twin();
    const other = document.createElement("div");
    area.append(other);
    const hider = hideStaticTwin(view, ".hn-transcript", now);
    expect(first.classList.contains(HIDDEN_TWIN_CLASS)).toBe(false); // not live yet: the copy stays
    hider.activate();
    expect(first.classList.contains(HIDDEN_TWIN_CLASS)).toBe(true);
    expect(viewChild.classList.contains(HIDDEN_TWIN_CLASS)).toBe(false);
    expect(other.classList.contains(HIDDEN_TWIN_CLASS)).toBe(false);
  });

  it("hides a twin output added or replaced later, and shows them again when the view goes", async () => {
    const { view, twin } = outputArea();
    const hider = hideStaticTwin(view, ".hn-transcript", now);
    hider.activate();
    const later = twin();
    await flushMutations();
    expect(later.classList.contains(HIDDEN_TWIN_CLASS)).toBe(true);
    hider.dispose();
    expect(later.classList.contains(HIDDEN_TWIN_CLASS)).toBe(false);
  });

  it("waits for a view not attached yet, and does nothing outside an output area", () => {
    const { area, twin } = outputArea();
    const first = twin();
    const view = document.createElement("div");
    const frames: (() => void)[] = [];
    const hider = hideStaticTwin(view, ".hn-transcript", (callback) => {
      frames.push(callback);
      return () => undefined;
    });
    hider.activate();
    expect(first.classList.contains(HIDDEN_TWIN_CLASS)).toBe(false);
    const holder = document.createElement("div");
    holder.append(view);
    area.prepend(holder);
    frames.shift()!();
    expect(first.classList.contains(HIDDEN_TWIN_CLASS)).toBe(true);

    const lone = document.createElement("div");
    document.body.append(lone);
    expect(() => hideStaticTwin(lone, ".hn-transcript", now).activate()).not.toThrow();
  });
});
