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

/** The language a fence's info string names (its first word), as markdown-it's class and hljs read it; "" if none. */
function languageOf(info: string): string {
  return info.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
}

/** Will a fence with this info string and content be highlighted (once finished)? */
export function highlightable(info: string, code: string): boolean {
  const name = languageOf(info);
  return code.length <= HIGHLIGHT_MAX_CHARS && name !== "" && hljs.getLanguage(name) !== undefined;
}

/** hljs's HTML for a fence's content: its text escaped, in spans (sanitized by whoever parses it). */
function colouredHtml(code: string, info: string): string {
  return hljs.highlight(code, { language: languageOf(info), ignoreIllegals: true }).value;
}

/** The language a rendered, still plain fence will be coloured in, or null when it is shown plain for good. */
export function fenceLanguage(code: HTMLElement): string | null {
  const name = /(?:^|\s)language-(\S+)/.exec(code.className)?.[1];
  return name !== undefined && highlightable(name, code.textContent ?? "") ? name : null;
}

/**
 * Colour a fence rendered plain, in its `fenceLanguage`: the same spans, sanitized the same way, as when rendered
 * coloured at once.
 */
export function colourFence(code: HTMLElement, language: string): void {
  const fragment = livePurifier().sanitize(colouredHtml(code.textContent ?? "", language)) as unknown as DocumentFragment;
  code.replaceChildren(document.adoptNode(fragment)); // RETURN_DOM_FRAGMENT is set; adopted before it goes live
}

/** While set, fences are left unhighlighted (a fence still streaming is highlighted once, when it closes). */
let deferHighlight = false;

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  // "" leaves the fence to markdown-it, which escapes it
  highlight: (code, lang) => (deferHighlight || !highlightable(lang, code) ? "" : colouredHtml(code, lang)),
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

/** markdown-it's tokens for `source`; `env` collects its reference definitions. */
export function parseMarkdown(source: string, env: Env): Token[] {
  return md.parse(source, env);
}

/**
 * Sanitized, live nodes for a run of top-level block tokens (from `parseMarkdown`). `plainFences`: fences are left
 * uncoloured (`colourFence` colours one later).
 */
export function renderTokens(tokens: Token[], env: Env, plainFences = false): ChildNode[] {
  deferHighlight = plainFences;
  try {
    return Array.from(htmlToNodes(md.renderer.render(tokens, md.options, env)).childNodes);
  } finally {
    deferHighlight = false;
  }
}

// ---- code blocks while they stream ------------------------------------------------------------------

/** Characters of an open fence per DOM chunk (a chunk ends at the first line end past this many). */
export const OPEN_FENCE_CHUNK_CHARS = 4096;

/** What text is appended to in a streaming fence: its <code> and the current chunk of lines. */
export interface FenceChunks {
  info: string;
  code: HTMLElement;
  chunk: HTMLElement;
  chunkChars: number;
}

/** A fence's DOM while it streams: unhighlighted text in line chunks, inert (textContent only). */
export function openFenceNodes(info: string, content: string): { nodes: ChildNode[]; fence: FenceChunks } {
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
export function appendToFence(fence: Omit<FenceChunks, "info">, text: string): void {
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
