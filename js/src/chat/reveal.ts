// What an approval shows must be what runs. Commands are shown through `reveal`: invisible, reordering and blank
// characters become visible `⟦U+XXXX⟧` markers and long blank runs are collapsed to a `⟦400 spaces⟧` marker, so
// `ls` + 400 spaces (or braille blanks, Hangul fillers, tag characters) + `; curl … | sh` cannot hide its tail. The
// kernel does the same for terminal prompts (hermes_notebook/inert.py, same rule); tests/fixtures/reveal_cases.json
// keeps the two in step.

import policy from "../../../hermes_notebook/link_policy.json";

// By Unicode category: controls (not \n, \t), format characters (bidi controls, zero-width and tag characters,
// BOM, soft hyphen), private use, surrogates, unassigned, line/paragraph separators and every space but U+0020.
const HIDDEN_CATEGORY = /[\p{Cc}\p{Cf}\p{Co}\p{Cs}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
// Combining marks: fine on a letter (accents), shown when on nothing, on a blank, or stacked `mark_run` high.
const COMBINING = /[\p{Mn}\p{Me}]/u;
// Named because no category rule catches them: blank letters and symbols (Hangul fillers are Lo, the braille blank
// is So) and marks that draw nothing even on a letter (grapheme joiner, Khmer inherent vowels, Mongolian and
// Unicode variation selectors). The same ranges are in hermes_notebook/inert.py.
const BLANK_RANGES: [number, number][] = [
  [0x034f, 0x034f], [0x115f, 0x1160], [0x17b4, 0x17b5], [0x180b, 0x180f], [0x2800, 0x2800], [0x3164, 0x3164],
  [0xfe00, 0xfe0f], [0xffa0, 0xffa0], [0xe0100, 0xe01ef],
];
const PLAIN = /[\x20-\x7e\n\t]+/y; // printable ASCII, newlines and tabs: the common case, taken whole
const WHITESPACE_RUN = new RegExp(`[ \\t]{${policy.whitespace_run},}`, "g");

/** Lines an approval card shows before "N more lines" (the rest is one click away). */
export const CARD_LINES: number = policy.card_lines;

function hex(ch: string): string {
  return (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

const SHOWN = 0;
const HIDDEN = 1;
const MARK = 2;
const kinds = new Map<string, number>(); // a text uses few distinct characters; this keeps long text fast

/** HIDDEN when `ch` draws nothing (or reorders what follows) wherever it stands, MARK for a combining mark. */
function kind(ch: string): number {
  let k = kinds.get(ch);
  if (k === undefined) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === " " || ch === "\n" || ch === "\t") k = SHOWN;
    else if (HIDDEN_CATEGORY.test(ch) || BLANK_RANGES.some(([lo, hi]) => lo <= code && code <= hi)) k = HIDDEN;
    else k = COMBINING.test(ch) ? MARK : SHOWN;
    if (kinds.size < 4096) kinds.set(ch, k);
  }
  return k;
}

/** The code point at UTF-16 index `i` as a string (a lone surrogate stays one unit, as in Python). */
function charAt(text: string, i: number): string {
  return String.fromCodePoint(text.codePointAt(i) ?? 0);
}

/** Each character as `⟦U+XXXX⟧`; a run of one character at least `whitespace_run` long as `⟦400 × U+2800⟧`. */
function markers(chars: string[]): string {
  let out = "";
  for (let i = 0; i < chars.length; ) {
    let j = i;
    while (j < chars.length && chars[j] === chars[i]) j += 1;
    const code = `U+${hex(chars[i]!)}`;
    out += j - i >= policy.whitespace_run ? `\u27e6${j - i} \u00d7 ${code}\u27e7` : `\u27e6${code}\u27e7`.repeat(j - i);
    i = j;
  }
  return out;
}

/** `text` with invisible or reordering characters shown and long blank runs marked (as `reveal` in inert.py). */
export function reveal(text: string): string {
  const src = text.replace(/\r\n/g, "\n");
  let out = "";
  let before = ""; // the character before the current run ("" at the start)
  for (let i = 0; i < src.length; ) {
    PLAIN.lastIndex = i;
    const plain = PLAIN.exec(src);
    if (plain !== null) {
      out += plain[0];
      i = PLAIN.lastIndex;
      before = src[i - 1]!;
      continue;
    }
    const first = charAt(src, i);
    const k = kind(first);
    let j = i + first.length;
    let last = first;
    while (j < src.length) {
      const ch = charAt(src, j);
      if (kind(ch) !== k) break;
      j += ch.length;
      last = ch;
    }
    const run = src.slice(i, j);
    if (k === HIDDEN) out += markers(Array.from(run));
    else if (k === MARK) {
      const onLetter = before !== "" && before !== " " && before !== "\n" && before !== "\t" && kind(before) !== HIDDEN;
      const chars = Array.from(run);
      out += onLetter && chars.length < policy.mark_run ? run : markers(chars);
    } else out += run;
    before = last;
    i = j;
  }
  return out.replace(WHITESPACE_RUN, (run) => {
    const spaces = run.split(" ").length - 1;
    const tabs = run.length - spaces;
    const parts = [spaces ? plural(spaces, "space") : "", tabs ? plural(tabs, "tab") : ""].filter(Boolean);
    return ` \u27e6${parts.join(" and ")}\u27e7 `;
  });
}

/** The first `limit` revealed lines and how many more there are. */
export function revealLines(text: string, limit: number = CARD_LINES): { lines: string[]; hidden: number } {
  const lines = reveal(text).split("\n");
  return { lines: lines.slice(0, limit), hidden: Math.max(0, lines.length - limit) };
}
