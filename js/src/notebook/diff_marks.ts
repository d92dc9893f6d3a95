// What a diff line shows must be what Keep writes (as a Run card shows what runs): every line goes through the Run
// card's `reveal` (bidi controls, zero-width characters and long blank runs become visible markers), a changed line
// that looks the same as the line it replaces is marked, and remote images a proposed markdown cell would load when
// rendered are named on the diff, by host.

import { reveal } from "../chat/reveal";
import type { DiffRow } from "./diff";

export interface ShownRow extends DiffRow {
  /** the line as shown: hidden characters and long blank runs revealed */
  shown: string;
  /** an added line whose visible text equals the removed line it replaces */
  lookalike: boolean;
}

// Characters that draw nothing: Unicode controls, format characters, separators other than the space.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\u2800\u3164\u115f\u1160\uffa0\ufe00-\ufe0f]/gu;
// A few letters that look like Latin ones (Cyrillic and Greek), enough for the usual lookalike swaps.
const LOOKALIKES: Record<string, string> = {
  "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ј": "j", "ѕ": "s",
  "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
  "ο": "o", "α": "a", "ν": "v", "Ο": "O", "Α": "A", "Β": "B", "Ε": "E", "Ι": "I", "Κ": "K", "Ν": "N", "Τ": "T",
};
const LOOKALIKE = new RegExp(`[${Object.keys(LOOKALIKES).join("")}]`, "gu");

/** How a line looks on screen: without what draws nothing, lookalike letters as the Latin ones, spaces folded. */
export function visibleText(line: string): string {
  return line
    .normalize("NFKC")
    .replace(INVISIBLE, "")
    .replace(LOOKALIKE, (ch) => LOOKALIKES[ch] ?? ch)
    .replace(/\s+/gu, " ")
    .trim();
}

/** The rows as shown: each revealed; an added line paired with a removed one (in order, within one change) marked
 * when the two differ but look the same. */
export function shownRows(rows: readonly DiffRow[]): ShownRow[] {
  const out: ShownRow[] = rows.map((row) => ({ ...row, shown: row.kind === "skip" ? "" : reveal(row.text), lookalike: false }));
  for (let i = 0; i < out.length; ) {
    if (out[i]!.kind !== "del") {
      i += 1;
      continue;
    }
    let d = i;
    while (d < out.length && out[d]!.kind === "del") d += 1;
    let a = d;
    while (a < out.length && out[a]!.kind === "add") a += 1;
    for (let k = 0; k < Math.min(d - i, a - d); k++) {
      const removed = out[i + k]!;
      const added = out[d + k]!;
      added.lookalike = removed.text !== added.text && visibleText(removed.text) === visibleText(added.text);
    }
    i = a;
  }
  return out;
}

const MARKDOWN_IMAGE = /!\[[^\]]*\]\(\s*<?\s*((?:https?:)?\/\/[^\s)>]+)/giu;
const HTML_SOURCE = /<(?:img|image|source|video|audio|iframe|embed|object|input)\b[^>]*?\b(?:src|srcset|data|poster|href)\s*=\s*["']?\s*((?:https?:)?\/\/[^\s"'>,]+)/giu;
const REFERENCE = /^\s{0,3}\[[^\]]+\]:\s*<?\s*((?:https?:)?\/\/[^\s>]+)/gimu;
const CSS_URL = /url\(\s*["']?\s*((?:https?:)?\/\/[^\s"')]+)/giu;

/** The hosts of remote images (and other remote media) a markdown cell's source would load when rendered. */
export function remoteImageHosts(source: string): string[] {
  const urls: string[] = [];
  for (const pattern of [MARKDOWN_IMAGE, HTML_SOURCE, CSS_URL]) {
    for (const match of source.matchAll(pattern)) urls.push(match[1]!);
  }
  if (/!\[[^\]]*\]\s*\[/u.test(source)) for (const match of source.matchAll(REFERENCE)) urls.push(match[1]!);
  const hosts = new Set<string>();
  for (const url of urls) {
    try {
      hosts.add(new URL(url.startsWith("//") ? `https:${url}` : url).host || url.slice(0, 80));
    } catch {
      hosts.add(url.slice(0, 80));
    }
  }
  return [...hosts].slice(0, 10);
}
