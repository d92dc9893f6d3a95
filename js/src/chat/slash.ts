// Hermes' own slash commands in the composer: a `/` menu listing the server's catalog, and the panel that shows
// what a command printed. The catalog is never synced state: the menu asks the kernel for it (`{type:
// "commands"}`) the first time it opens, and the answer (`commands`) is kept here only. Names, descriptions and
// output are server text, set with textContent only.
//
// Keys while the menu is open: ArrowDown/ArrowUp move, Enter or Tab picks (the name and a space go into the
// textarea), Escape closes it (and is not passed on, so it does not also stop a running turn).
//
// Stable DOM hooks: ul.hn-slash-menu[role=listbox] li.hn-slash-option[role=option][aria-selected]
// (.hn-slash-name, .hn-slash-description), .hn-command-output (.hn-command-name, pre.hn-command-text,
// .hn-command-warning, button.hn-command-close).

import { h, setAttr, setText } from "../dom";
import type { CommandEntry } from "../types/chat";

/** Entries shown at once (the catalog has a hundred or more; typing narrows it). */
export const MAX_SHOWN = 50;
/** A composer text that is a command line: `/name`, then arguments. */
export const COMMAND_LINE = /^\/[A-Za-z0-9][A-Za-z0-9_.:-]*(\s|$)/;

export interface SlashMenu {
  readonly el: HTMLElement;
  /** The catalog arrived from the kernel. */
  setCatalog(entries: readonly CommandEntry[]): void;
  /** Give a textarea keydown to the menu first; true when the menu used it. */
  handleKey(event: KeyboardEvent): boolean;
  /** Open, filter or close the menu for the textarea's current text. */
  update(): void;
  readonly open: boolean;
}

let menus = 0;

export function createSlashMenu(textarea: HTMLTextAreaElement, requestCatalog: () => void): SlashMenu {
  const id = `hn-slash-${++menus}`;
  const el = h("ul", { class: "hn-slash-menu", role: "listbox", id, "aria-label": "Hermes commands", hidden: true });
  let catalog: readonly CommandEntry[] | null = null;
  let requested = false;
  let shown: CommandEntry[] = [];
  let active = 0;

  const setOpen = (open: boolean): void => {
    el.hidden = !open;
    setAttr(textarea, "aria-expanded", open ? "true" : "false");
    if (!open) setAttr(textarea, "aria-activedescendant", null);
  };
  setAttr(textarea, "aria-controls", id);
  setAttr(textarea, "aria-autocomplete", "list");
  setOpen(false);

  /** The word being typed when it is the start of a command (`/na` on the first line, no space yet). */
  const typedName = (): string | null => {
    const match = /^\/([^\s]*)$/.exec(textarea.value);
    return match === null ? null : match[1]!.toLowerCase();
  };

  const pick = (entry: CommandEntry | undefined): void => {
    if (entry === undefined) return;
    textarea.value = `${entry.name} `;
    setOpen(false);
    textarea.focus();
    textarea.setSelectionRange(textarea.value.length, textarea.value.length);
  };

  const highlight = (): void => {
    el.querySelectorAll<HTMLElement>(".hn-slash-option").forEach((option, i) => {
      setAttr(option, "aria-selected", i === active ? "true" : "false");
      if (i === active) {
        setAttr(textarea, "aria-activedescendant", option.id);
        option.scrollIntoView?.({ block: "nearest" });
      }
    });
  };

  const render = (prefix: string): void => {
    if (catalog === null) {
      el.replaceChildren(h("li", { class: "hn-slash-loading", role: "presentation" }, "Loading Hermes commands…"));
      shown = [];
      return;
    }
    const matches = catalog.filter((c) => c.name.toLowerCase().startsWith(`/${prefix}`));
    shown = matches.slice(0, MAX_SHOWN);
    active = Math.min(active, Math.max(0, shown.length - 1));
    if (shown.length === 0) {
      el.replaceChildren(h("li", { class: "hn-slash-empty", role: "presentation" }, "No Hermes command starts with that"));
      return;
    }
    el.replaceChildren(
      ...shown.map((entry, i) => {
        const option = h(
          "li",
          { class: "hn-slash-option", role: "option", id: `${id}-${i}`, "aria-selected": "false" },
          h("span", { class: "hn-slash-name" }, entry.name),
          entry.description ? h("span", { class: "hn-slash-description" }, entry.description) : null,
        );
        option.addEventListener("mousedown", (event) => event.preventDefault()); // keep the textarea's focus
        option.addEventListener("click", () => pick(entry));
        return option;
      }),
    );
    highlight();
  };

  const update = (): void => {
    const prefix = typedName();
    if (prefix === null) {
      setOpen(false);
      return;
    }
    if (catalog === null && !requested) {
      requested = true;
      requestCatalog();
    }
    if (el.hidden) active = 0;
    render(prefix);
    setOpen(true);
  };

  textarea.addEventListener("input", update);
  textarea.addEventListener("blur", () => setOpen(false));

  return {
    el,
    get open() {
      return !el.hidden;
    },
    setCatalog(entries) {
      catalog = Array.isArray(entries)
        ? entries.filter((e) => typeof e?.name === "string" && e.name.startsWith("/"))
        : [];
      if (!el.hidden) render(typedName() ?? "");
    },
    update,
    handleKey(event) {
      if (el.hidden || event.isComposing) return false;
      if (event.key === "Escape") {
        setOpen(false);
      } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (shown.length === 0) return false;
        active = (active + (event.key === "ArrowDown" ? 1 : shown.length - 1)) % shown.length;
        highlight();
      } else if ((event.key === "Enter" || event.key === "Tab") && !event.ctrlKey && !event.metaKey && shown.length > 0) {
        pick(shown[active]);
      } else {
        return false;
      }
      event.preventDefault();
      event.stopPropagation();
      return true;
    },
  };
}

export interface CommandOutput {
  readonly el: HTMLElement;
  show(command: string, output: string, warning: string): void;
}

/** The panel above the composer showing what the last command printed (plain text), with a close button. */
export function createCommandOutput(): CommandOutput {
  const name = h("span", { class: "hn-command-name" });
  const close = h("button", { type: "button", class: "hn-command-close", "aria-label": "Close the command output" }, "×");
  const text = h("pre", { class: "hn-command-text" });
  const warning = h("div", { class: "hn-command-warning", hidden: true });
  const el = h(
    "div",
    { class: "hn-command-output", role: "status", hidden: true },
    h("div", { class: "hn-command-head" }, name, h("span", { class: "hn-spacer" }), close),
    text,
    warning,
  );
  close.addEventListener("click", () => {
    el.hidden = true;
  });
  return {
    el,
    show(command, output, warn) {
      setText(name, String(command ?? ""));
      setText(text, String(output ?? ""));
      setText(warning, String(warn ?? ""));
      warning.hidden = !warn;
      el.hidden = false;
    },
  };
}
