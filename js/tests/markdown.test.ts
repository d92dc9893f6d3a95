import hljs from "highlight.js/lib/core";
import { describe, expect, it, vi } from "vitest";

import { createIncrementalMarkdown, LONG_PAGES, PAGE_NODES, renderMarkdownStreaming } from "../src/chat/incremental";
import { HIGHLIGHT_MAX_CHARS, OPEN_FENCE_CHUNK_CHARS, renderMarkdownInto } from "../src/chat/markdown";

// Documents with every kind of block boundary a stream can be cut at: inside and right after fences
// (backtick and tilde, with and without a language, closing line split), lists (tight, loose,
// ordered, nested, "2" becoming "2."), tables, setext headings, block quotes, paragraphs interrupted
// by headings/fences, indented code, thematic breaks, links, and raw HTML (inert text).
const DOCS: Record<string, string> = {
  mixed: [
    "# Title",
    "",
    "Intro with **bold**, `code` and a link https://example.com and [x](https://a.example).",
    "Second line of the paragraph.",
    "## Sub",
    "- one",
    "- two",
    "",
    "- three (loose now)",
    "",
    "1. a",
    "",
    "2. b",
    "   continued",
    "",
    "```python",
    "def f(x):",
    "    return x * 2  # ``` not a close",
    "```",
    "after fence",
    "",
    "| a | b |",
    "|---|:-:|",
    "| 1 | 2 |",
    "| 3 | 4 |",
    "",
    "Setext",
    "======",
    "",
    "> quote",
    "lazy",
    "",
    "    indented code",
    "",
    "    more code",
    "",
    "***",
    "",
    "~~~",
    "tilde fence <script>alert(1)</script>",
    "~~~~",
    "",
    "para\n# heading interrupts",
    "<b>raw html</b> stays text",
    "",
    "end",
  ].join("\n"),
  openEnd: "Text\n\n```js\nconst a = 1;\nconst b = `x`;\n``",
  nested: "- item\n\n  ```py\n  x = 1\n  ```\n- next\n  - deeper\n\n    para in deeper\n\nout",
  tightThenLoose: "* a\n* b\n\n* c\n\ntext\n\n1) x\n2) y\n\n3\n\nz",
};

/** The incremental DOM with its pages (div.hn-md-page) unwrapped: what a plain full render gives. */
function flat(el: HTMLElement): string {
  const copy = el.cloneNode(true) as HTMLElement;
  for (const page of Array.from(copy.querySelectorAll(".hn-md-page"))) page.replaceWith(...Array.from(page.childNodes));
  return copy.innerHTML;
}

/** Stream `doc` in chunks (`appended`: tell the renderer what each update added, as the chat view does). */
function streamed(doc: string, sizes: (i: number) => number, appended = false): HTMLElement[] {
  const target = document.createElement("div");
  const renderer = createIncrementalMarkdown(target);
  const reference = document.createElement("div");
  const mismatches: string[] = [];
  for (let end = 0, i = 0; end < doc.length; i++) {
    const start = end;
    end = Math.min(doc.length, end + sizes(i));
    const text = doc.slice(0, end);
    renderer.update(text, false, appended && i > 0 ? doc.slice(start, end) : undefined);
    renderMarkdownStreaming(reference, text);
    if (target.innerHTML !== reference.innerHTML) mismatches.push(JSON.stringify(text.slice(-30)));
  }
  expect(mismatches.slice(0, 3)).toEqual([]);
  renderer.update(doc, true);
  const full = document.createElement("div");
  renderMarkdownInto(full, doc);
  expect(flat(target)).toBe(full.innerHTML);
  return [target, full];
}

describe("incremental markdown", () => {
  for (const [name, doc] of Object.entries(DOCS)) {
    it(`equals a full render at every character of ${name}`, () => {
      streamed(doc, () => 1);
    }, 120_000);
    it(`equals a full render for uneven chunks of ${name}`, () => {
      const sizes = [3, 17, 1, 40, 7, 2, 64, 5];
      streamed(doc, (i) => sizes[i % sizes.length]!);
    });
    it(`equals a full render when told only what was appended, for ${name}`, () => {
      const sizes = [3, 17, 1, 40, 7, 2, 64, 5];
      streamed(doc, (i) => sizes[i % sizes.length]!, true);
      streamed(doc, () => 1, true);
    }, 120_000);
  }

  it("told only what was appended, reads line ends split across updates and long fences like a full render", () => {
    for (const doc of ["a\r\nb\r\n\r\n```js\r\nx\r\n```\r\nend\r", "p\0q\r\r\nr"]) {
      for (const size of [1, 2, 5]) streamed(doc, () => size, true);
    }
    // Past OPEN_FENCE_CHUNK_CHARS, so the open fence grows by appending chunks (the renderer's fast path).
    const fence = "```\n" + Array.from({ length: 400 }, (_, i) => `line ${i} of code`).join("\n") + "\n```\n\nafter";
    for (const size of [97, 333]) streamed(`intro\n\n${fence}\n\n${fence}`, () => size, true);
  }, 120_000);

  it("re-parses only the tail: finished blocks keep their DOM nodes", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    renderer.update("# Head\n\nfirst paragraph\n\nsecond\n");
    // finished: the heading and the first paragraph (a later block starts on a complete line)
    const heading = target.querySelector("h1")!;
    const first = target.querySelector("p")!;
    expect(first.textContent).toBe("first paragraph");
    let text = "# Head\n\nfirst paragraph\n\nsecond\n";
    for (let i = 0; i < 50; i++) {
      text += ` word${i}`;
      if (i % 10 === 9) text += "\n\nnext paragraph";
      renderer.update(text);
    }
    expect(target.querySelector("h1")).toBe(heading);
    expect(target.querySelector("p")).toBe(first);
    expect(target.contains(heading) && target.contains(first)).toBe(true);
    // Only the tail was parsed each time, never the whole text again.
    expect(renderer.stats.full).toBe(0);
  });

  it("colours a fence once, when the page is idle after its closing line arrives, and keeps that node after", () => {
    const spy = vi.spyOn(hljs, "highlight");
    const target = document.createElement("div");
    const idle: (() => void)[] = [];
    const renderer = createIncrementalMarkdown(target, { idle: (work: () => void) => idle.push(work) });
    const doc = "Here:\n\n```python\n" + "x = 1\n".repeat(2000) + "```\n\nAfter the code, more words.";
    for (let end = 1; end <= doc.length; end += 7) renderer.update(doc.slice(0, end));
    renderer.update(doc);
    // Closed: shown plain in the batch that closed it (no colouring there), and the colouring is queued once.
    expect(spy).not.toHaveBeenCalled();
    expect(idle).toHaveLength(1);
    const code = target.querySelector("code.language-python")!;
    expect(code.querySelector(".hljs-number")).toBeNull();
    expect(code.textContent).toBe("x = 1\n".repeat(2000));
    idle.shift()!();
    expect(spy).toHaveBeenCalledTimes(1);
    expect(target.querySelector("code.language-python")).toBe(code);
    expect(code.querySelector(".hljs-number")).not.toBeNull();
    renderer.update(doc + " And more.");
    renderer.update(doc + " And more.", true);
    expect(target.querySelector("code.language-python")).toBe(code);
    expect(spy).toHaveBeenCalledTimes(1);
    expect(idle).toHaveLength(0);
    // While open, the fence grew by appending, without parsing the text again.
    expect(renderer.stats.fenceAppends).toBeGreaterThan(1500);
  });

  it("colours the fences still waiting for an idle page at once when the text turns final", () => {
    const target = document.createElement("div");
    const idle: (() => void)[] = [];
    const renderer = createIncrementalMarkdown(target, { idle: (work: () => void) => idle.push(work) });
    const doc = "```js\nlet a = 1;\n```\n\n```python\nx = 2\n```\n\nend";
    for (let end = 1; end <= doc.length; end++) renderer.update(doc.slice(0, end));
    expect(target.querySelectorAll(".hljs-number")).toHaveLength(0);
    renderer.update(doc, true);
    expect(target.querySelectorAll(".hljs-number")).toHaveLength(2);
    const full = document.createElement("div");
    renderMarkdownInto(full, doc);
    expect(flat(target)).toBe(full.innerHTML);
    for (const work of idle.splice(0)) work(); // a late idle callback changes nothing
    expect(flat(target)).toBe(full.innerHTML);
  });

  it("keeps a block's nodes when it finishes: the streamed paragraph, table or list is the finished one", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    const table = "| a | b |\n|---|---|\n| 1 | two |\n| 3 | four |";
    renderer.update(table);
    const streamed = target.querySelector("table")!;
    const cell = target.querySelector("td")!;
    renderer.update(table + "\n\nNext paragraph");
    expect(renderer.stats.tail).toBe(2);
    expect(target.querySelector("table")).toBe(streamed);
    expect(target.querySelector("td")).toBe(cell);
    const paragraph = target.querySelector("p")!;
    renderer.update(table + "\n\nNext paragraph grows\n\n- and a list");
    expect(target.querySelector("p")).toBe(paragraph);
    expect(paragraph.textContent).toBe("Next paragraph grows");
    const one = document.createElement("div");
    renderMarkdownStreaming(one, table + "\n\nNext paragraph grows\n\n- and a list");
    expect(target.innerHTML).toBe(one.innerHTML);
  });

  it("shows an open fence as inert text in chunks of lines, appending to the last chunk", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    let text = "```js\n";
    renderer.update(text);
    const code = target.querySelector("code")!;
    for (let i = 0; i < 1000; i++) {
      text += `let v${i} = "<img src=x onerror=alert(1)>";\n`;
      renderer.update(text);
    }
    expect(target.querySelector("code")).toBe(code);
    expect(code.textContent).toBe(text.slice("```js\n".length));
    expect(code.querySelector("img")).toBeNull();
    const chunks = code.querySelectorAll(".hn-code-chunk");
    expect(chunks.length).toBeGreaterThan(text.length / OPEN_FENCE_CHUNK_CHARS - 1);
    for (const chunk of Array.from(chunks).slice(0, -1)) {
      expect(chunk.textContent!.length).toBeGreaterThanOrEqual(OPEN_FENCE_CHUNK_CHARS);
      expect(chunk.textContent!.endsWith("\n")).toBe(true);
    }
  });

  it("keeps a long plain fence's streamed chunks when it closes, equal to a full render", () => {
    const spy = vi.spyOn(hljs, "highlight");
    const body = "row = [1, 2, 3]  # ``not a close``\n".repeat(Math.ceil((HIGHLIGHT_MAX_CHARS + 100) / 34));
    const doc = `Intro\n\n\`\`\`python\n${body}\`\`\`\n\nafter`;
    const sizes = [700, 3, 1, 2, 911];
    const [target] = streamed(doc, (i) => sizes[i % sizes.length]!);
    expect(spy).not.toHaveBeenCalled(); // too long to colour
    const target2 = document.createElement("div");
    const renderer = createIncrementalMarkdown(target2);
    const opener = doc.indexOf("```python\n") + 10;
    renderer.update(doc.slice(0, opener + 5000));
    const code = target2.querySelector("code")!;
    const firstChunk = code.firstChild!;
    for (let end = opener + 5000; end <= doc.length; end += 1000) renderer.update(doc.slice(0, end));
    renderer.update(doc, true);
    expect(target2.querySelector("code")).toBe(code);
    expect(code.firstChild).toBe(firstChunk);
    expect(target2.innerHTML).toBe(target!.innerHTML);
  });

  it("groups finished blocks into pages of PAGE_NODES nodes, the tail at the end of the last page", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    let text = "";
    for (let i = 0; i < 200; i++) {
      text += `paragraph ${i}\n\n`;
      renderer.update(text);
      // Only a long message's off-screen pages skip rendering (each such page costs an intersection check a frame).
      const pagesNow = target.querySelectorAll(":scope > .hn-md-page").length;
      expect(target.classList.contains("hn-md-long")).toBe(pagesNow >= LONG_PAGES);
    }
    const pages = Array.from(target.querySelectorAll(":scope > .hn-md-page"));
    expect(pages.length).toBe(Math.ceil((199 * 2) / PAGE_NODES));
    for (const p of pages.slice(0, -1)) expect(p.childNodes.length).toBe(PAGE_NODES);
    // The tail (the last paragraph, not finished yet) streams where it will stay once finished.
    expect(target.lastElementChild).toBe(pages[pages.length - 1]);
    expect(pages[pages.length - 1]!.lastElementChild!.textContent).toBe("paragraph 199");
    const one = document.createElement("div");
    renderMarkdownStreaming(one, text);
    expect(one.innerHTML).toBe(target.innerHTML);
  }, 60_000);

  it("sanitizes every block it renders incrementally", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    const doc =
      "[a](javascript:alert(1))\n\n<img src=x onerror=alert(1)>\n\n[b](https://ok.example) [c](mailto:x@y.example) [d](ftp://x)\n\nend";
    for (let end = 1; end <= doc.length; end++) renderer.update(doc.slice(0, end));
    const hrefs = Array.from(target.querySelectorAll("a")).map((a) => a.getAttribute("href"));
    expect(hrefs).toEqual(["https://ok.example", "mailto:x@y.example"]);
    expect(target.querySelector("img")).toBeNull();
    expect(target.querySelector("[onerror]")).toBeNull();
  });

  it("renders everything again when a reference definition appears, and stays correct", () => {
    const doc = "See [the docs][d].\n\nMore text.\n\n[d]: https://docs.example\n\nTail.";
    const [target] = streamed(doc, () => 2);
    expect(target!.querySelector("a")!.getAttribute("href")).toBe("https://docs.example");
  });

  it("starts over when the text is replaced rather than extended, and keeps finished blocks on a trim", () => {
    const target = document.createElement("div");
    const renderer = createIncrementalMarkdown(target);
    renderer.update("alpha\n\nbeta");
    renderer.update("gamma");
    expect(target.textContent!.trim()).toBe("gamma");
    renderer.update("gamma\n\n```\ncode\n```\n");
    const block = target.querySelector(".hn-code")!;
    renderer.update("gamma\n\n```\ncode\n```", true); // the end-of-turn trim
    expect(target.querySelector(".hn-code")).toBe(block);
    const full = document.createElement("div");
    renderMarkdownInto(full, "gamma\n\n```\ncode\n```");
    expect(flat(target)).toBe(full.innerHTML);
  });
});
