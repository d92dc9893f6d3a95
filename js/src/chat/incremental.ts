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

/**
 * Finished top-level nodes are grouped into pages of this many (`div.hn-md-page`, layout-contained), so
 * a change at the end lays out a few dozen pages and the last one, not thousands of blocks: without
 * them the browser's layout of a 1 MB message grows with its block count on every update.
 */
export const PAGE_NODES = 64;

/** From this many pages on, a message is long: its off-screen pages skip rendering (`.hn-md-long` in chat.css). */
export const LONG_PAGES = 4;

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
  const idle = options.idle ?? whenIdle;
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
  /** nodes after the finished blocks (always the last children of the last page) */
  let tailNodes: ChildNode[] = [];
  let fence: OpenFence | null = null;
  /** a reference definition was seen: it can change links anywhere, so always render it all */
  let wholeText = false;
  const stats: MarkdownStats = { full: 0, tail: 0, fenceAppends: 0 };
  /** Fences that closed while the text streams, shown plain until the page is idle (or the text is final). */
  let uncoloured: { code: HTMLElement; language: string }[] = [];
  let colourScheduled = false;

  const colourAll = (): void => {
    colourScheduled = false;
    const todo = uncoloured;
    uncoloured = [];
    for (const { code, language } of todo) if (target.contains(code)) colourFence(code, language);
  };

  /** Show `nodes` (finished blocks rendered with deferred highlighting) plain now, and coloured when idle. */
  const colourLater = (nodes: readonly ChildNode[]): void => {
    for (const node of nodes) {
      if (!(node instanceof HTMLElement) || !node.classList.contains("hn-code")) continue;
      const code = node.querySelector<HTMLElement>("pre > code");
      const language = code === null ? null : fenceLanguage(code);
      if (code !== null && language !== null) uncoloured.push({ code, language });
    }
    if (uncoloured.length > 0 && !colourScheduled) {
      colourScheduled = true;
      idle(colourAll);
    }
  };

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
    uncoloured = [];
    stats.full += 1;
  };

  const newPage = (): HTMLElement => {
    const created = document.createElement("div");
    created.className = "hn-md-page";
    target.append(created);
    if (++pages === LONG_PAGES) target.classList.add("hn-md-long");
    return created;
  };

  /**
   * Show `finished` (now final, in order) after the finished blocks, and `tail` after them, at the end of the last
   * page. A node already where it belongs is not moved: a moved node is restyled and laid out from scratch, so a
   * block that finishes stays where it streamed (in the page it will belong to) unless that page is full.
   */
  const place = (finished: readonly ChildNode[], tail: readonly ChildNode[]): void => {
    const keep = new Set([...finished, ...tail]);
    for (const node of tailNodes) if (!keep.has(node)) node.remove();
    const plan: { into: HTMLElement; nodes: ChildNode[] }[] = [];
    const slot = (into: HTMLElement): ChildNode[] => {
      if (plan[plan.length - 1]?.into !== into) plan.push({ into, nodes: [] });
      return plan[plan.length - 1]!.nodes;
    };
    for (const node of finished) {
      if (page === null || pageNodes >= PAGE_NODES) {
        page = newPage();
        pageNodes = 0;
      }
      slot(page).push(node);
      pageNodes += 1;
    }
    if (tail.length > 0) slot((page ??= newPage())).push(...tail);
    // Later pages first, so a node moving on to a new page has left the old one before the old one's end is checked.
    for (let k = plan.length - 1; k >= 0; k--) {
      const { into, nodes } = plan[k]!;
      let after: ChildNode | null = null;
      for (let i = nodes.length - 1; i >= 0; i--) {
        const node = nodes[i]!;
        if (node.parentNode !== into || node.nextSibling !== after) into.insertBefore(node, after);
        after = node;
      }
    }
    tailNodes = [...tail];
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
    const tokens = parseMarkdown(tail, env);
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

    // A fence that closes mid-stream is coloured when the page is idle, not in the batch that closed it: colouring
    // and laying out its spans was the costliest batch of a stream. Final text is coloured at once.
    const render = (from: number, to: number): ChildNode[] =>
      from >= to ? [] : renderTokens(tokens.slice(blocks[from]!.from, blocks[to - 1]!.to), env, !final);
    // The tail shown before (in place, not an open fence) mostly equals the new blocks: morph it (./morph.ts).
    let shown = tailNodes.filter((n) => !(previous?.nodes.includes(n) ?? false));
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
                stable + (starts[b.start + 1] ?? -1) === previous.contentStart &&
                token.content.length > OPEN_FENCE_CHUNK_CHARS && // rendered the same way, chunked (htmlToNodes)
                !highlightable(token.info, token.content) &&
                token.content.startsWith(shownOf(previous, previousTail))
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
      if (!final) colourLater(finished);
    }
    const live = blocks.slice(done, open === undefined ? blocks.length : blocks.length - 1);
    const nodes: ChildNode[] = [];
    if (live.length > 0) {
      // A fence closed but not finished yet is coloured once it is finished.
      const rendered = renderTokens(tokens.slice(live[0]!.from, live[live.length - 1]!.to), env, true);
      nodes.push(...morphNodes(shown, rendered));
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
    place(finished, nodes);
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
    apply(raw, isFinal, appended);
    if (final && uncoloured.length > 0) colourAll();
  };

  const apply = (raw: string, isFinal: boolean, appended: string | undefined): void => {
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
