// What an approval shows must be what runs. Commands are shown through `reveal`: control, bidi, zero-width
// and non-ASCII space characters become visible `⟦U+XXXX⟧` markers and long blank runs are collapsed to a
// `⟦400 spaces⟧` marker, so `ls` + 400 spaces + `; curl … | sh` cannot hide its tail. The kernel does the same
// for terminal prompts (hermes_notebook/inert.py); tests/fixtures/reveal_cases.json keeps the two in step.

import policy from "../../../hermes_notebook/link_policy.json";

// eslint-disable-next-line no-control-regex
const HIDDEN = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00a0\u00ad\u034f\u061c\u115f\u1160\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ufeff\ufff9-\ufffb]/g;
const WHITESPACE_RUN = new RegExp(`[ \\t]{${policy.whitespace_run},}`, "g");

/** Lines an approval card shows before "N more lines" (the rest is one click away). */
export const CARD_LINES: number = policy.card_lines;

function hex(ch: string): string {
  return (ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, "0");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** `text` with invisible or reordering characters shown and long blank runs marked. */
export function reveal(text: string): string {
  return text
    .replace(/\r\n/g, "\n")
    .replace(HIDDEN, (ch) => `\u27e6U+${hex(ch)}\u27e7`)
    .replace(WHITESPACE_RUN, (run) => {
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
