// Markdown -> sanitized DOM for model output, which is untrusted.
//
// Two layers, so one mistake can't run content:
// 1. markdown-it with `html: false` (raw HTML becomes text) and a link validator that accepts only
//    http(s) and mailto targets;
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

const SAFE_URL = /^(?:https?:|mailto:)/i;

/** Is this a link target content may use? (http, https, mailto; nothing relative or scripted) */
export function isSafeUrl(url: string): boolean {
  // Browsers ignore control characters and whitespace inside a scheme ("java\tscript:").
  // eslint-disable-next-line no-control-regex
  return SAFE_URL.test(url.replace(/[\u0000-\u0020\u007f-\u009f]/g, ""));
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

const PURIFY: Config = {
  ALLOWED_URI_REGEXP: SAFE_URL,
  ADD_ATTR: ["target"],
  FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
  FORBID_ATTR: ["style"],
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
