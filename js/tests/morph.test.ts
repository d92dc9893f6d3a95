import { describe, expect, it } from "vitest";

import { morphNodes } from "../src/chat/morph";

function nodes(html: string): ChildNode[] {
  const template = document.createElement("template");
  template.innerHTML = html;
  return Array.from(template.content.childNodes);
}

function shown(html: string): { host: HTMLElement; live: ChildNode[] } {
  const host = document.createElement("div");
  host.innerHTML = html;
  return { host, live: Array.from(host.childNodes) };
}

describe("morphNodes", () => {
  it("keeps equal elements and grows their text in place", () => {
    const { live } = shown("<p>Hello <strong>wor</strong></p>\n");
    const paragraph = live[0] as HTMLElement;
    const text = paragraph.firstChild!;
    const out = morphNodes(live, nodes("<p>Hello <strong>world</strong> again</p>\n<p>next</p>"));
    expect(out[0]).toBe(paragraph);
    expect(paragraph.firstChild).toBe(text);
    expect(paragraph.outerHTML).toBe("<p>Hello <strong>world</strong> again</p>");
    expect((out[2] as HTMLElement).outerHTML).toBe("<p>next</p>");
  });

  it("replaces an element whose tag or any attribute differs, never edits attributes", () => {
    const { live } = shown('<a href="https://a.example" target="_blank">x</a><ol start="2"><li>a</li></ol>');
    const fresh = nodes('<a href="https://b.example" target="_blank">x</a><ul><li>a</li></ul>');
    const out = morphNodes(live, fresh);
    expect(out[0]).toBe(fresh[0]);
    expect(out[1]).toBe(fresh[1]);
    expect((live[0] as HTMLElement).getAttribute("href")).toBe("https://a.example");
  });

  it("replaces a child element that differs and drops children the fresh node lacks", () => {
    const { live } = shown("<blockquote><p>a</p><p>b</p><p>c</p></blockquote>");
    const quote = live[0] as HTMLElement;
    const out = morphNodes(live, nodes("<blockquote><p>a</p><pre>b</pre></blockquote>"));
    expect(out[0]).toBe(quote);
    expect(quote.innerHTML).toBe("<p>a</p><pre>b</pre>");
  });

  it("keeps a code block (its copy button closes over its code) only when wholly equal", () => {
    const block = '<div class="hn-code"><button>Copy</button><pre><code class="language-py">x = 1\n</code></pre></div>';
    const { live } = shown(block);
    expect(morphNodes(live, nodes(block))[0]).toBe(live[0]);
    const grown = nodes(block.replace("x = 1", "x = 12"));
    const out = morphNodes(live, grown);
    expect(out[0]).toBe(grown[0]);
    expect((live[0] as HTMLElement).textContent).toContain("x = 1\n");
  });

  it("returns the fresh nodes when nothing was shown", () => {
    const fresh = nodes("<p>a</p>\n");
    expect(morphNodes([], fresh)).toEqual(fresh);
  });
});
