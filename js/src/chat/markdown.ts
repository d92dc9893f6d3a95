// Markdown -> sanitized DOM for model output, which is untrusted.
//
// Two layers, so one mistake can't run content:
// 1. markdown-it with `html: false` (raw HTML becomes text) and a link validator that accepts only
//    the schemes of hermes_notebook/link_policy.json (http, https, mailto; the kernel's render.py reads the
//    same file); images are never loaded: each becomes a link naming its host, so a prompt-injected model
//    cannot send data out in an image URL;
// 2. DOMPurify over the rendered HTML (no scripts, event handlers, frames, forms or styles; only
//    http(s)/mailto URIs), in case a markdown-it rule or plugin ever emits something unexpected.
// Copy buttons are added after sanitizing, as real DOM with listeners, never as parsed HTML.

import DOMPurify, { type Config } from "dompurify";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import diff from "highlight.js/lib/languages/diff";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import plaintext from "highlight.js/lib/languages/plaintext";
import python from "highlight.js/lib/languages/python";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt, { type Env, type Token } from "markdown-it";

import policy from "../../../hermes_notebook/link_policy.json";
import { copyButton } from "../dom";

// A handful of common languages keeps the bundle small (all of highlight.js is ~1 MB minified;
// these eleven are ~50 KB). Unknown fences are shown escaped, without colours.
const LANGUAGES = { bash, diff, javascript, json, markdown, plaintext, python, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(["sh", "shell", "zsh", "console"], { languageName: "bash" });
hljs.registerAliases(["py", "python3", "ipython"], { languageName: "python" });
hljs.registerAliases(["js", "jsx", "mjs"], { languageName: "javascript" });
hljs.registerAliases(["ts", "tsx"], { languageName: "typescript" });
hljs.registerAliases(["html", "svg"], { languageName: "xml" });
hljs.registerAliases(["yml"], { languageName: "yaml" });
hljs.registerAliases(["text", "txt"], { languageName: "plaintext" });

const schemes = (list: string[]): RegExp => new RegExp(`^(?:${list.join("|")}):`, "i");
const SAFE_URL = schemes(policy.link_schemes);
const SAFE_IMAGE_URL = schemes(policy.image_schemes);
// eslint-disable-next-line no-control-regex
const URL_NOISE = /[\u0000-\u0020\u007f-\u009f]/g;

/** Is this a link target content may use? (http, https, mailto; nothing relative or scripted) */
export function isSafeUrl(url: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  // eslint-disable-next-line no-control-regex
  return SAFE_URL.test(url.replace(URL_NOISE, ""));
}

/** The host an image would be fetched from, or null when the image may not even be offered as a link. */
export function imageHost(src: string): string | null {
  if (!SAFE_IMAGE_URL.test(src.replace(URL_NOISE, ""))) return null;
  try {
    return new URL(src.trim()).hostname || "unknown host";
  } catch {
    return null;
  }
}

/**
 * Longer code blocks are shown without colours: highlighting 200 KB takes the main thread for about a
 * second, and nobody reads a block that long by its colours.
 */
export const HIGHLIGHT_MAX_CHARS = 50_000;

/** Will a fence with this info string and content be highlighted (once finished)? */
function highlightable(info: string, code: string): boolean {
  const name = info.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  return code.length <= HIGHLIGHT_MAX_CHARS && name !== "" && hljs.getLanguage(name) !== undefined;
}

/** While set, fences are left unhighlighted (a fence still streaming is highlighted once, when it closes). */
let deferHighlight = false;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => {
    if (deferHighlight || !highlightable(lang, code)) return "";
    const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    {
      return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
    }
    return ""; // markdown-it escapes it
  },
});
md.validateLink = isSafeUrl;

const defaultLinkOpen =
  md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet("target", "_blank");
  token.attrSet("rel", "noopener noreferrer");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

// An image is a link "[image: alt from host]"; nothing is fetched until the user clicks it.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx]!;
  const src = String(token.attrGet("src") ?? "");
  const alt = (token.children ?? []).map((child) => child.content).join("");
  const label = alt ? `image: ${alt}` : "image";
  const host = imageHost(src);
  const esc = md.utils.escapeHtml;
  if (host === null) return `<span class="hn-image-blocked">[${esc(label)}, not shown]</span>`;
  return `<a class="hn-image-link" href="${esc(src.trim())}">[${esc(label)} from ${esc(host)}]</a>`;
};

const PURIFY: Config = {
  ALLOWED_URI_REGEXP: SAFE_URL,
  ADD_ATTR: ["target"],
  FORBID_TAGS: [
    "style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed",
    "img", "picture", "source", "video", "audio", "svg", "math", "link", "meta", "base",
  ],
  FORBID_ATTR: ["style", "srcset", "background", "poster", "ping"],
};

/** DOMPurify keeps a safe href but drops our target/rel on some paths; set them on every link. */
function linkHook(node: Element): void {
  if (node.tagName === "A") {
    if (node.hasAttribute("href")) {
      node.setAttribute("target", "_blank");
      node.setAttribute("rel", "noopener noreferrer");
    } else {
      node.removeAttribute("target");
    }
  }
}

let hookInstalled = false;

function purifier(): typeof DOMPurify {
  if (!hookInstalled) {
    DOMPurify.addHook("afterSanitizeAttributes", linkHook);
    hookInstalled = true;
  }
  return DOMPurify;
}

/**
 * What the live view renders with, per streamed batch: its own DOMPurify instance with the config set once (parsing
 * a config per call cost ~0.1 ms a batch). It parses into its own inert document, so nothing runs or loads before
 * it has cleaned the tree. (Sanitizing in place a tree parsed in a reused inert document was slower: adopting
 * those nodes cost more than the parse it saved.)
 */
let live: typeof DOMPurify | null = null;

function livePurifier(): typeof DOMPurify {
  if (live === null) {
    live = DOMPurify(window);
    live.setConfig({ ...PURIFY, RETURN_DOM_FRAGMENT: true });
    live.addHook("afterSanitizeAttributes", linkHook);
  }
  return live;
}

/** The second layer on its own: HTML string -> sanitized HTML string. */
export function sanitizeHtml(html: string): string {
  return purifier().sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: false, RETURN_TRUSTED_TYPE: false });
}

/** Markdown source -> sanitized HTML string. */
export function markdownToHtml(source: string): string {
  return sanitizeHtml(md.render(source));
}

/** Sanitized, live DOM nodes for rendered markdown HTML, with a copy button on each code block. */
function htmlToNodes(html: string): DocumentFragment {
  const fragment = livePurifier().sanitize(html) as unknown as DocumentFragment; // RETURN_DOM_FRAGMENT is set
  // DOMPurify parses into its own inert document; adopt the nodes before they go live.
  document.adoptNode(fragment);
  for (const pre of Array.from(fragment.querySelectorAll("pre"))) {
    const code = pre.querySelector("code");
    if (code === null) continue;
    if (code.children.length === 0 && (code.textContent ?? "").length > OPEN_FENCE_CHUNK_CHARS) {
      // Long plain code is laid out in chunks of lines, the same as while it streamed.
      const text = code.textContent ?? "";
      code.replaceChildren();
      appendToFence({ code, chunk: newChunk(code), chunkChars: 0 }, text);
    }
    const block = codeBlock(code);
    pre.replaceWith(block);
    block.append(pre);
  }
  return fragment;
}

/** The wrapper of a code block, holding its copy button; the caller appends the <pre>. */
function codeBlock(code: HTMLElement): HTMLElement {
  const block = document.createElement("div");
  block.className = "hn-code";
  block.append(copyButton(() => code.textContent ?? "", "Copy code"));
  return block;
}

/**
 * Replace `target`'s content with the rendered markdown, with a copy button on each code block, in one
 * piece (no pages; the incremental renderer's DOM equals this with its `div.hn-md-page`s unwrapped).
 */
export function renderMarkdownInto(target: HTMLElement, source: string): void {
  target.replaceChildren(htmlToNodes(md.render(source)));
}

// ---- incremental rendering of a growing (streamed) text ------------------------------------------
//
// A streamed message only ever grows at its end, so everything but its last blocks is final: the
// renderer keeps the DOM nodes of finished top-level blocks and, per update, parses and re-renders
// only the text after them (the "tail"). A block is finished once a later block starts after a blank
// line on a complete line (nothing appended afterwards can merge into or re-interpret it), or when it
// is a fence whose closing line is complete. A fence still open at the end is shown unhighlighted and
// grows by appending text (its content is only ever extended), in chunks of lines so the browser lays
// out only the last chunk; it is highlighted once, when its closing line arrives. Reference-style link
// definitions are the one construct that reaches backwards: a new one triggers a full re-render.
// Every block goes through the same markdown-it (html: false, safe links) + DOMPurify path.

/**
 * Finished top-level nodes are grouped into pages of this many (`div.hn-md-page`, layout-contained), so
 * a change at the end lays out a few dozen pages and the last one, not thousands of blocks: without
 * them the browser's layout of a 1 MB message grows with its block count on every update.
 */
export const PAGE_NODES = 64;

/** From this many pages on, a message is long: its off-screen pages skip rendering (`.hn-md-long` in chat.css). */
export const LONG_PAGES = 4;

/** Characters of an open fence per DOM chunk (a chunk ends at the first line end past this many). */
export const OPEN_FENCE_CHUNK_CHARS = 4096;

/** Can this line close (or be) a fence? Cheap pre-check before re-parsing an open fence. */
const FENCE_LINE = /(?:^|\n)[ \t]{0,3}(?:`{3,}|~{3,})/;
const BLANK_LINE = /^[ \t]*$/;

interface Group {
  /** token range [from, to) of one top-level block */
  from: number;
  to: number;
  /** source line range [start, end) within the parsed text */
  start: number;
  end: number;
}

interface OpenFence {
  /** absolute offset of the fence's content (the line after the opener) in the source */
  contentStart: number;
  info: string;
  /** characters of content shown so far */
  shown: number;
  code: HTMLElement;
  chunk: HTMLElement;
  chunkChars: number;
  nodes: ChildNode[];
}


/** Top-level blocks of a token stream. */
function groups(tokens: readonly Token[]): Group[] {
  const out: Group[] = [];
  let i = 0;
  while (i < tokens.length) {
    const first = tokens[i]!;
    let j = i;
    if (first.nesting === 1) {
      let depth = 0;
      for (; j < tokens.length; j++) {
        depth += tokens[j]!.nesting;
        if (depth === 0) break;
      }
    }
    const map = first.map ?? [0, 0];
    out.push({ from: i, to: j + 1, start: map[0], end: map[1] });
    i = j + 1;
  }
  return out;
}

/** Offsets of each line start in `text` (line n starts at starts[n]; one past the end is text.length + 1). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  return starts;
}

/** A fence's DOM while it streams: unhighlighted text in line chunks, inert (textContent only). */
function openFenceNodes(info: string, content: string): { nodes: ChildNode[]; fence: Omit<OpenFence, "contentStart" | "shown" | "nodes"> } {
  const code = document.createElement("code");
  const lang = md.utils.unescapeAll(info).trim().split(/(\s+)/g)[0] ?? ""; // as markdown-it's fence rule
  if (lang) code.className = `language-${lang}`;
  const pre = document.createElement("pre");
  pre.append(code);
  const fence = { info, code, chunk: newChunk(code), chunkChars: 0 };
  appendToFence(fence, content);
  const block = codeBlock(code);
  block.append(pre);
  return { nodes: [block, document.createTextNode("\n")], fence };
}

function newChunk(code: HTMLElement): HTMLElement {
  const chunk = document.createElement("span");
  chunk.className = "hn-code-chunk";
  code.append(chunk);
  return chunk;
}

/** Append text to an open fence, starting a new chunk after a line end once a chunk is full. */
function appendToFence(fence: { code: HTMLElement; chunk: HTMLElement; chunkChars: number }, text: string): void {
  let rest = text;
  while (rest.length > 0) {
    const room = OPEN_FENCE_CHUNK_CHARS - fence.chunkChars;
    const cut = room <= 0 ? rest.indexOf("\n") : rest.indexOf("\n", room - 1);
    const piece = cut < 0 ? rest : rest.slice(0, cut + 1);
    const last = fence.chunk.lastChild;
    if (last !== null && last.nodeType === Node.TEXT_NODE) (last as Text).appendData(piece);
    else fence.chunk.append(piece);
    fence.chunkChars += piece.length;
    rest = rest.slice(piece.length);
    if (cut >= 0) {
      fence.chunk = newChunk(fence.code);
      fence.chunkChars = 0;
    }
  }
}

export interface MarkdownStats {
  /** full re-renders (a reset, a change that isn't an append, a reference definition) */
  full: number;
  /** tail re-renders (markdown-it parses of the text after the finished blocks) */
  tail: number;
  /** updates served by appending to an open fence, without parsing */
  fenceAppends: number;
}

export interface IncrementalMarkdown {
  /**
   * Show `source` (normally the previous source plus appended text). `final`: the text is complete,
   * so every block is rendered as finished (fences highlighted). `appended`: the caller knows `source` is the
   * previous source plus this text, so the renderer never reads the rest (see `update` below).
   */
  update(source: string, final?: boolean, appended?: string): void;
  readonly stats: MarkdownStats;
}

/**
 * Render a growing markdown text into `target`, re-rendering only what the new text can change.
 * After each update the DOM equals a one-shot `renderMarkdownStreaming` of the same text (and, once
 * final, a plain `renderMarkdownInto`).
 */
export function createIncrementalMarkdown(target: HTMLElement): IncrementalMarkdown {
  let source = "";
  let final = false;
  /** source[0:stable] is rendered into finished blocks, which are final */
  let stable = 0;
  /** source.slice(stable), kept as it grows: what the next tail render parses */
  let tailText = "";
  /** where the source's last line starts, and that line (an open fence grows from it) */
  let lineStart = 0;
  let lastLine = "";
  /** the raw source ended in "\r" (a "\n" appended next would join it: markdown-it reads "\r\n" as one line end) */
  let endsWithCR = false;
  /** nodes after the finished blocks (always the last children of `target`) */
  let tailNodes: ChildNode[] = [];
  let fence: OpenFence | null = null;
  /** a reference definition was seen: it can change links anywhere, so always render it all */
  let wholeText = false;
  const stats: MarkdownStats = { full: 0, tail: 0, fenceAppends: 0 };

  let page: HTMLElement | null = null;
  let pageNodes = 0;
  let pages = 0;

  const reset = (): void => {
    target.replaceChildren();
    source = "";
    stable = 0;
    tailText = "";
    tailNodes = [];
    fence = null;
    page = null;
    pageNodes = 0;
    pages = 0;
    target.classList.remove("hn-md-long");
    stats.full += 1;
  };

  /** Add finished nodes, in order, to the pages (before the tail). */
  const appendFinished = (nodes: readonly ChildNode[]): void => {
    for (const node of nodes) {
      if (page === null || pageNodes >= PAGE_NODES) {
        page = document.createElement("div");
        page.className = "hn-md-page";
        target.insertBefore(page, tailNodes[0] ?? null);
        pageNodes = 0;
        if (++pages === LONG_PAGES) target.classList.add("hn-md-long");
      }
      page.append(node);
      pageNodes += 1;
    }
  };

  /** Make `nodes` the tail; nodes already in place (an open fence, always last) are not moved. */
  const replaceTail = (nodes: readonly ChildNode[]): void => {
    const keep = new Set(nodes);
    for (const node of tailNodes) if (!keep.has(node)) node.remove();
    const firstKept = nodes.find((n) => n.parentNode === target) ?? null;
    for (const node of nodes) if (node.parentNode !== target) target.insertBefore(node, firstKept);
    tailNodes = [...nodes];
  };

  /** Fast path: `appended` only extends an open fence's content, with no line that could close it. */
  const extendOpenFence = (appended: string): boolean => {
    // Everything here is relative to the source's last line: the fence content before it is on screen already.
    if (fence === null || appended === "" || fence.contentStart + fence.shown < lineStart) return false;
    const fresh = lastLine + appended;
    if (FENCE_LINE.test(fresh)) return false;
    const newLine = fresh.lastIndexOf("\n") + 1;
    const visible =
      lineStart + newLine > fence.contentStart && HELD_BACK.test(fresh.slice(newLine)) ? lineStart + newLine : lineStart + fresh.length;
    appendToFence(fence, fresh.slice(fence.contentStart + fence.shown - lineStart, visible - lineStart));
    fence.shown = visible - fence.contentStart;
    stats.fenceAppends += 1;
    return true;
  };

  /** `source` grew by `appended`: follow its last line without reading the rest. */
  const grow = (appended: string): void => {
    const newLine = appended.lastIndexOf("\n") + 1;
    if (newLine > 0) {
      lineStart = source.length + newLine;
      lastLine = appended.slice(newLine);
    } else {
      lastLine += appended;
    }
    source += appended;
  };

  /** `source` was replaced as a whole (the slow path). */
  const replaceSource = (next: string): void => {
    source = next;
    lineStart = next.lastIndexOf("\n") + 1;
    lastLine = next.slice(lineStart);
    tailText = next.slice(stable);
  };

  /**
   * Render `tail` (the text after the finished blocks; `text` is the whole of it), keeping what `previousTail`
   * (the tail rendered before) already shows.
   */
  const renderTail = (text: string, tail: string, previousTail: string): void => {
    const env: Env = {};
    stats.tail += 1;
    const tokens = md.parse(tail, env);
    if (Object.keys(env.references ?? {}).length > 0 && !wholeText) {
      wholeText = true;
      if (stable > 0) {
        reset();
        renderTail(text, text, "");
        return;
      }
    }
    const blocks = groups(tokens);
    const starts = lineStarts(tail);
    const complete = (line: number): boolean => line + 1 < starts.length;
    // How many leading blocks are finished (see the comment above OPEN_FENCE_CHUNK_CHARS).
    let done = final ? blocks.length : 0;
    for (let i = blocks.length - 1; i >= 0 && done === 0 && !wholeText; i--) {
      const block = blocks[i]!;
      const token = tokens[block.from]!;
      if (token.type === "fence" && fenceClosed(tail, starts, block, token) && complete(block.end - 1)) {
        done = i + 1;
      } else if (i > 0 && complete(block.start) && BLANK_LINE.test(lineText(tail, starts, block.start - 1))) {
        done = i;
      }
    }
    const end = done < blocks.length ? starts[blocks[done]!.start]! : tail.length;
    // A fence still open at the end (its opener line complete) is shown by appending (see OpenFence).
    const last = blocks[blocks.length - 1];
    const lastToken = last === undefined ? undefined : tokens[last.from]!;
    // (Also a closed fence whose closing line isn't complete yet, when it won't be highlighted: its
    // streamed DOM is then kept as it is when it seals.)
    const open =
      last !== undefined &&
      lastToken !== undefined &&
      done < blocks.length &&
      lastToken.type === "fence" &&
      complete(last.start) &&
      /^[`~]{3}/.test(tail.slice(starts[last.start]!, starts[last.start]! + 3)) && // unindented: content is raw
      (!fenceClosed(tail, starts, last, lastToken) || !highlightable(lastToken.info, lastToken.content))
        ? last
        : undefined;
    const previous = fence;
    fence = null;

    const render = (from: number, to: number): ChildNode[] =>
      from >= to
        ? []
        : Array.from(htmlToNodes(md.renderer.render(tokens.slice(blocks[from]!.from, blocks[to - 1]!.to), md.options, env)).childNodes);
    if (done > 0) {
      // The fence that streamed open, now sealed and not highlighted, keeps its nodes.
      const kept =
        previous === null
          ? -1
          : blocks.slice(0, done).findIndex((b) => {
              const token = tokens[b.from]!;
              return (
                token.type === "fence" &&
                stable + (starts[b.start + 1] ?? -1) === previous.contentStart &&
                token.content.length > OPEN_FENCE_CHUNK_CHARS && // rendered the same way, chunked (htmlToNodes)
                !highlightable(token.info, token.content) &&
                token.content.startsWith(shownOf(previous, previousTail))
              );
            });
      if (kept < 0 || previous === null) {
        appendFinished(render(0, done));
      } else {
        appendToFence(previous, tokens[blocks[kept]!.from]!.content.slice(previous.shown));
        tailNodes = tailNodes.filter((n) => !previous.nodes.includes(n));
        appendFinished([...render(0, kept), ...previous.nodes, ...render(kept + 1, done)]);
      }
    }
    const live = blocks.slice(done, open === undefined ? blocks.length : blocks.length - 1);
    const nodes: ChildNode[] = [];
    if (live.length > 0) {
      deferHighlight = true; // a fence closed but not sealed yet is highlighted once, when it seals
      try {
        const html = md.renderer.render(tokens.slice(live[0]!.from, live[live.length - 1]!.to), md.options, env);
        nodes.push(...Array.from(htmlToNodes(html).childNodes));
      } finally {
        deferHighlight = false;
      }
    }
    if (open !== undefined) {
      const token = tokens[open.from]!;
      const contentStart = stable + starts[open.start + 1]!;
      const content = withoutHeldBack(token.content);
      const reuse =
        previous !== null &&
        previous.contentStart === contentStart &&
        previous.info === token.info &&
        content.startsWith(shownOf(previous, previousTail));
      if (reuse) {
        appendToFence(previous, content.slice(previous.shown));
        previous.shown = content.length;
        fence = previous;
      } else {
        const built = openFenceNodes(token.info, content);
        fence = { ...built.fence, contentStart, shown: content.length, nodes: built.nodes };
      }
      nodes.push(...fence.nodes);
    }
    replaceTail(nodes);
    stable += end;
    tailText = tail.slice(end);
  };

  /** The fence content `previous` shows, read from the tail it was rendered in (the old `stable` is its origin). */
  const shownOf = (previous: OpenFence, previousTail: string): string =>
    previousTail.slice(previous.contentStart - stable, previous.contentStart - stable + previous.shown);

  // A streamed text is a rope of small appends: any scan of the whole of it (a comparison, a search, a slice)
  // makes the engine copy it flat, a cost that grows with the text on every batch. With `appended` the renderer
  // touches only the tail after its finished blocks and the source's last line.
  const update = (raw: string, isFinal = false, appended?: string): void => {
    if (appended !== undefined && !/[\r\0]/.test(appended) && !(endsWithCR && appended.startsWith("\n"))) {
      if (appended === "" && isFinal === final) return;
      endsWithCR = false;
      if (!isFinal && !final && !wholeText && extendOpenFence(appended)) {
        tailText += appended;
        grow(appended);
        return;
      }
      if (!wholeText && !(final && !isFinal)) {
        final = isFinal;
        const previousTail = tailText;
        renderTail(source + appended, previousTail + appended, previousTail);
        grow(appended);
        return;
      }
    }
    endsWithCR = raw.endsWith("\r");
    // markdown-it's own normalization, done here so offsets agree with its line maps
    const next = raw.includes("\r") || raw.includes("\0") ? raw.replace(/\r\n?/g, "\n").replace(/\0/g, "\uFFFD") : raw;
    if (next === source && isFinal === final) return;
    if (!isFinal && !final && !wholeText && next.length > source.length && next.startsWith(source)
        && extendOpenFence(next.slice(source.length))) {
      replaceSource(next);
      return;
    }
    const kept = source.slice(0, stable);
    if (wholeText || (final && !isFinal) || !next.startsWith(kept)) {
      // Trailing whitespace trimmed off after the last finished block changes nothing rendered.
      const trimmed = !wholeText && tailNodes.length === 0 && kept.startsWith(next) && BLANK_TAIL.test(kept.slice(next.length));
      if (trimmed) {
        stable = next.length;
        final = isFinal;
        replaceSource(next);
        return;
      }
      reset();
    }
    final = isFinal;
    renderTail(next, next.slice(stable), tailText);
    replaceSource(next);
  };

  return { update, stats };
}

const BLANK_TAIL = /^\s*$/;

/**
 * An open fence's last, incomplete line that isn't shown yet: whitespace only (markdown-it drops it
 * too) or fence characters only (it may become the closing line).
 */
const HELD_BACK = /^(?:[ \t]*|[ \t]{0,3}[`~]+[ \t]*)$/;

function withoutHeldBack(content: string): string {
  const lastLine = content.lastIndexOf("\n") + 1;
  return lastLine < content.length && HELD_BACK.test(content.slice(lastLine)) ? content.slice(0, lastLine) : content;
}

function lineText(text: string, starts: readonly number[], line: number): string {
  const from = starts[line] ?? text.length;
  const to = line + 1 < starts.length ? starts[line + 1]! - 1 : text.length;
  return text.slice(from, to);
}

/** Has this fence block a closing line (rather than running to the end of the text)? */
function fenceClosed(text: string, starts: readonly number[], block: Group, token: Token): boolean {
  if (block.end - block.start < 2) return false;
  const closing = lineText(text, starts, block.end - 1).trim();
  const char = token.markup[0]!;
  return closing.length >= token.markup.length && [...closing].every((c) => c === char);
}

/**
 * One-shot render with the streaming presentation: a fence still open (or not yet sealed) at the end
 * is left unhighlighted, the open one in line chunks, as the incremental renderer shows them. With
 * `final`, the same as `renderMarkdownInto`.
 */
export function renderMarkdownStreaming(target: HTMLElement, source: string, final = false): void {
  target.replaceChildren();
  createIncrementalMarkdown(target).update(source, final);
}
