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
import MarkdownIt from "markdown-it";

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

const md = new MarkdownIt({
  html: false,
  linkify: true,
  breaks: false,
  highlight: (code, lang) => {
    const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
    if (name && hljs.getLanguage(name)) {
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

let hookInstalled = false;

function purifier(): typeof DOMPurify {
  if (!hookInstalled) {
    // DOMPurify keeps a safe href but drops our target/rel on some paths; set them on every link.
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.tagName === "A") {
        if (node.hasAttribute("href")) {
          node.setAttribute("target", "_blank");
          node.setAttribute("rel", "noopener noreferrer");
        } else {
          node.removeAttribute("target");
        }
      }
    });
    hookInstalled = true;
  }
  return DOMPurify;
}

/** The second layer on its own: HTML string -> sanitized HTML string. */
export function sanitizeHtml(html: string): string {
  return purifier().sanitize(html, { ...PURIFY, RETURN_DOM_FRAGMENT: false, RETURN_TRUSTED_TYPE: false });
}

/** Markdown source -> sanitized HTML string. */
export function markdownToHtml(source: string): string {
  return sanitizeHtml(md.render(source));
}

/** Replace `target`'s content with the rendered markdown, with a copy button on each code block. */
export function renderMarkdownInto(target: HTMLElement, source: string): void {
  const fragment = purifier().sanitize(md.render(source), { ...PURIFY, RETURN_DOM_FRAGMENT: true });
  // DOMPurify parses into its own inert document; adopt the nodes before they go live.
  document.adoptNode(fragment);
  for (const pre of Array.from(fragment.querySelectorAll("pre"))) {
    const code = pre.querySelector("code");
    if (code === null) continue;
    const block = document.createElement("div");
    block.className = "hn-code";
    pre.replaceWith(block);
    block.append(copyButton(() => code.textContent ?? "", "Copy code"), pre);
  }
  target.replaceChildren(fragment);
}
