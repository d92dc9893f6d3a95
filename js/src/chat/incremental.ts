// Incremental rendering of a growing (streamed) markdown text: per batch, only what the new text can change.
// Rendering and sanitizing themselves are ./markdown.ts's; this module decides what to re-render and where the
// nodes go.

import type { Env, Token } from "markdown-it";

import {
  appendToFence,
  colourFence,
  fenceLanguage,
  type FenceChunks,
  highlightable,
  OPEN_FENCE_CHUNK_CHARS,
  openFenceNodes,
  parseMarkdown,
  renderTokens,
} from "./markdown";
import { createPages, type MarkdownPages } from "./md_pages";
import { morphNodes } from "./morph";

// ---- incremental rendering of a growing (streamed) text ------------------------------------------
//
// A streamed message only ever grows at its end, so everything but its last blocks is final: the
// renderer keeps the DOM nodes of finished top-level blocks and, per update, parses and re-renders
// only the text after them (the "tail"). A block is finished once a later block starts after a blank
// line on a complete line (nothing appended afterwards can merge into or re-interpret it), or when it
// is a fence whose closing line is complete. A fence still open at the end is shown unhighlighted and
// grows by appending text (its content is only ever extended), in chunks of lines so the browser lays
// out only the last chunk; once its closing line arrives it is shown plain and coloured once, when the
// page is next idle (at once if the text is final). Reference-style link definitions are the one
// construct that reaches backwards: a new one triggers a full re-render.
// The tail streams at the end of the last page, where its blocks stay once finished, and each render
// is morphed into the nodes already shown (./morph.ts): a block that grows or finishes keeps its nodes
// and only its new text is laid out again.
// Every block goes through the same markdown-it (html: false, safe links) + DOMPurify path.

export { LONG_PAGES, PAGE_NODES } from "./md_pages";

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

interface OpenFence extends FenceChunks {
  /** absolute offset of the fence's content (the line after the opener) in the source */
  contentStart: number;
  /** characters of content shown so far */
  shown: number;
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

export interface MarkdownStats {
  /** full re-renders (a reset, a change that isn't an append, a reference definition) */
  full: number;
  /** tail re-renders (markdown-it parses of the text after the finished blocks) */
  tail: number;
  /** updates served by appending to an open fence, without parsing */
  fenceAppends: number;
}

export interface IncrementalOptions {
  /** Runs deferred work (colouring fences that closed) when the page is idle; tests pass their own. */
  idle?: (work: () => void) => void;
}

/** The browser's idle callback (with a deadline, so it runs while a stream keeps the page busy), else a task. */
function whenIdle(work: () => void): void {
  if (typeof requestIdleCallback === "function") requestIdleCallback(() => work(), { timeout: IDLE_TIMEOUT_MS });
  else setTimeout(work, 0);
}

/** At the latest this long after a fence closes while a reply streams, it is coloured. */
export const IDLE_TIMEOUT_MS = 300;

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
export function createIncrementalMarkdown(target: HTMLElement, options: IncrementalOptions = {}): IncrementalMarkdown {
  return new IncrementalRenderer(target, options.idle ?? whenIdle);
}

/** Fences that closed while the text streams, shown plain until the page is idle (or the text is final). */
interface Colourer {
  /** Show `nodes` (finished blocks rendered with deferred highlighting) plain now, and coloured when idle. */
  later(nodes: readonly ChildNode[]): void;
  /** Colour what waits now (the text is final). */
  now(): void;
  clear(): void;
}

function createColourer(target: HTMLElement, idle: (work: () => void) => void): Colourer {
  let uncoloured: { code: HTMLElement; language: string }[] = [];
  let scheduled = false;
  const now = (): void => {
    scheduled = false;
    const todo = uncoloured;
    uncoloured = [];
    for (const { code, language } of todo) if (target.contains(code)) colourFence(code, language);
  };
  return {
    later(nodes) {
      for (const node of nodes) {
        if (!(node instanceof HTMLElement) || !node.classList.contains("hn-code")) continue;
        const code = node.querySelector<HTMLElement>("pre > code");
        const language = code === null ? null : fenceLanguage(code);
        if (code !== null && language !== null) uncoloured.push({ code, language });
      }
      if (uncoloured.length > 0 && !scheduled) {
        scheduled = true;
        idle(now);
      }
    },
    now() {
      if (uncoloured.length > 0) now();
    },
    clear() {
      uncoloured = [];
    },
  };
}

/** What a tail's blocks are: which leading ones are finished, where they end, and the fence still open at the end. */
interface TailShape {
  blocks: Group[];
  starts: number[];
  /** how many leading blocks are finished */
  done: number;
  /** where the finished blocks end in the tail */
  end: number;
  /** the last block, when it is a fence still open (shown by appending, see OpenFence) */
  open: Group | undefined;
}

/** The shape of a parsed tail (see the comment above OPEN_FENCE_CHUNK_CHARS). */
function tailShape(tokens: readonly Token[], tail: string, final: boolean, wholeText: boolean): TailShape {
  const blocks = groups(tokens);
  const starts = lineStarts(tail);
  const complete = (line: number): boolean => line + 1 < starts.length;
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
  return { blocks, starts, done, end, open };
}

class IncrementalRenderer implements IncrementalMarkdown {
  readonly stats: MarkdownStats = { full: 0, tail: 0, fenceAppends: 0 };
  private source = "";
  private final = false;
  /** source[0:stable] is rendered into finished blocks, which are final */
  private stable = 0;
  /** source.slice(stable), kept as it grows: what the next tail render parses */
  private tailText = "";
  /** where the source's last line starts, and that line (an open fence grows from it) */
  private lineStart = 0;
  private lastLine = "";
  /** the raw source ended in "\r" (a "\n" appended next would join it: markdown-it reads "\r\n" as one line end) */
  private endsWithCR = false;
  private fence: OpenFence | null = null;
  /** a reference definition was seen: it can change links anywhere, so always render it all */
  private wholeText = false;
  private readonly pages: MarkdownPages;
  private readonly colours: Colourer;

  constructor(target: HTMLElement, idle: (work: () => void) => void) {
    this.pages = createPages(target);
    this.colours = createColourer(target, idle);
  }

  // A streamed text is a rope of small appends: any scan of the whole of it (a comparison, a search, a slice)
  // makes the engine copy it flat, a cost that grows with the text on every batch. With `appended` the renderer
  // touches only the tail after its finished blocks and the source's last line.
  update(raw: string, isFinal = false, appended?: string): void {
    this.apply(raw, isFinal, appended);
    if (this.final) this.colours.now();
  }

  private reset(): void {
    this.pages.clear();
    this.source = "";
    this.stable = 0;
    this.tailText = "";
    this.fence = null;
    this.colours.clear();
    this.stats.full += 1;
  }

  /** Fast path: `appended` only extends an open fence's content, with no line that could close it. */
  private extendOpenFence(appended: string): boolean {
    // Everything here is relative to the source's last line: the fence content before it is on screen already.
    const { fence, lineStart } = this;
    if (fence === null || appended === "" || fence.contentStart + fence.shown < lineStart) return false;
    const fresh = this.lastLine + appended;
    if (FENCE_LINE.test(fresh)) return false;
    const newLine = fresh.lastIndexOf("\n") + 1;
    const visible =
      lineStart + newLine > fence.contentStart && HELD_BACK.test(fresh.slice(newLine)) ? lineStart + newLine : lineStart + fresh.length;
    appendToFence(fence, fresh.slice(fence.contentStart + fence.shown - lineStart, visible - lineStart));
    fence.shown = visible - fence.contentStart;
    this.stats.fenceAppends += 1;
    return true;
  }

  /** `source` grew by `appended`: follow its last line without reading the rest. */
  private grow(appended: string): void {
    const newLine = appended.lastIndexOf("\n") + 1;
    if (newLine > 0) {
      this.lineStart = this.source.length + newLine;
      this.lastLine = appended.slice(newLine);
    } else {
      this.lastLine += appended;
    }
    this.source += appended;
  }

  /** `source` was replaced as a whole (the slow path). */
  private replaceSource(next: string): void {
    this.source = next;
    this.lineStart = next.lastIndexOf("\n") + 1;
    this.lastLine = next.slice(this.lineStart);
    this.tailText = next.slice(this.stable);
  }

  /**
   * Render `tail` (the text after the finished blocks; `text` is the whole of it), keeping what `previousTail`
   * (the tail rendered before) already shows.
   */
  private renderTail(text: string, tail: string, previousTail: string): void {
    const env: Env = {};
    this.stats.tail += 1;
    const tokens = parseMarkdown(tail, env);
    if (Object.keys(env.references ?? {}).length > 0 && !this.wholeText) {
      this.wholeText = true;
      if (this.stable > 0) {
        this.reset();
        this.renderTail(text, text, "");
        return;
      }
    }
    const { blocks, starts, done, end, open } = tailShape(tokens, tail, this.final, this.wholeText);
    const previous = this.fence;
    this.fence = null;

    // A fence that closes mid-stream is coloured when the page is idle, not in the batch that closed it: colouring
    // and laying out its spans was the costliest batch of a stream. Final text is coloured at once.
    const render = (from: number, to: number): ChildNode[] =>
      from >= to ? [] : renderTokens(tokens.slice(blocks[from]!.from, blocks[to - 1]!.to), env, !this.final);
    // The tail shown before (in place, not an open fence) mostly equals the new blocks: morph it (./morph.ts).
    let shown = this.pages.tail.filter((n) => !(previous?.nodes.includes(n) ?? false));
    let finished: ChildNode[] = [];
    if (done > 0) {
      // The fence that streamed open, now sealed and not highlighted, keeps its nodes.
      const kept =
        previous === null
          ? -1
          : blocks.slice(0, done).findIndex((b) => {
              const token = tokens[b.from]!;
              return (
                token.type === "fence" &&
                this.stable + (starts[b.start + 1] ?? -1) === previous.contentStart &&
                token.content.length > OPEN_FENCE_CHUNK_CHARS && // rendered the same way, chunked (htmlToNodes)
                !highlightable(token.info, token.content) &&
                token.content.startsWith(this.shownOf(previous, previousTail))
              );
            });
      if (kept < 0 || previous === null) {
        finished = morphNodes(shown, render(0, done));
        shown = shown.slice(finished.length);
      } else {
        appendToFence(previous, tokens[blocks[kept]!.from]!.content.slice(previous.shown));
        const before = morphNodes(shown, render(0, kept));
        shown = shown.slice(before.length);
        finished = [...before, ...previous.nodes, ...render(kept + 1, done)];
      }
      if (!this.final) this.colours.later(finished);
    }
    const live = blocks.slice(done, open === undefined ? blocks.length : blocks.length - 1);
    const nodes: ChildNode[] = [];
    if (live.length > 0) {
      // A fence closed but not finished yet is coloured once it is finished.
      const rendered = renderTokens(tokens.slice(live[0]!.from, live[live.length - 1]!.to), env, true);
      nodes.push(...morphNodes(shown, rendered));
    }
    if (open !== undefined) nodes.push(...this.openFence(tokens[open.from]!, this.stable + starts[open.start + 1]!, previous, previousTail));
    this.pages.place(finished, nodes);
    this.stable += end;
    this.tailText = tail.slice(end);
  }

  /** The fence still open at the end: the one shown before grown by what is new, else built afresh. */
  private openFence(token: Token, contentStart: number, previous: OpenFence | null, previousTail: string): ChildNode[] {
    const content = withoutHeldBack(token.content);
    const reuse =
      previous !== null &&
      previous.contentStart === contentStart &&
      previous.info === token.info &&
      content.startsWith(this.shownOf(previous, previousTail));
    if (reuse) {
      appendToFence(previous, content.slice(previous.shown));
      previous.shown = content.length;
      this.fence = previous;
    } else {
      const built = openFenceNodes(token.info, content);
      this.fence = { ...built.fence, contentStart, shown: content.length, nodes: built.nodes };
    }
    return this.fence.nodes;
  }

  /** The fence content `previous` shows, read from the tail it was rendered in (the old `stable` is its origin). */
  private shownOf(previous: OpenFence, previousTail: string): string {
    return previousTail.slice(previous.contentStart - this.stable, previous.contentStart - this.stable + previous.shown);
  }

  private apply(raw: string, isFinal: boolean, appended: string | undefined): void {
    if (appended !== undefined && !/[\r\0]/.test(appended) && !(this.endsWithCR && appended.startsWith("\n"))) {
      if (appended === "" && isFinal === this.final) return;
      this.endsWithCR = false;
      if (!isFinal && !this.final && !this.wholeText && this.extendOpenFence(appended)) {
        this.tailText += appended;
        this.grow(appended);
        return;
      }
      if (!this.wholeText && !(this.final && !isFinal)) {
        this.final = isFinal;
        const previousTail = this.tailText;
        this.renderTail(this.source + appended, previousTail + appended, previousTail);
        this.grow(appended);
        return;
      }
    }
    this.endsWithCR = raw.endsWith("\r");
    // markdown-it's own normalization, done here so offsets agree with its line maps
    const next = raw.includes("\r") || raw.includes("\0") ? raw.replace(/\r\n?/g, "\n").replace(/\0/g, "\uFFFD") : raw;
    if (next === this.source && isFinal === this.final) return;
    if (!isFinal && !this.final && !this.wholeText && next.length > this.source.length && next.startsWith(this.source)
        && this.extendOpenFence(next.slice(this.source.length))) {
      this.replaceSource(next);
      return;
    }
    const kept = this.source.slice(0, this.stable);
    if (this.wholeText || (this.final && !isFinal) || !next.startsWith(kept)) {
      // Trailing whitespace trimmed off after the last finished block changes nothing rendered.
      const trimmed =
        !this.wholeText && this.pages.tail.length === 0 && kept.startsWith(next) && BLANK_TAIL.test(kept.slice(next.length));
      if (trimmed) {
        this.stable = next.length;
        this.final = isFinal;
        this.replaceSource(next);
        return;
      }
      this.reset();
    }
    this.final = isFinal;
    this.renderTail(next, next.slice(this.stable), this.tailText);
    this.replaceSource(next);
  }
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
