// Which session the chat shows: the header's title and `select.hn-session-picker`. The list of other sessions is
// not synced state (a saved notebook would keep every title): the picker asks for it (`list_sessions`, a question)
// when the view opens and when it is focused or pressed, and the kernel pushes it again, without a request, after
// every re-list. Choosing one sends `switch_session`. Owns: the list, and when the unanswered question went (a click
// focuses and presses: one question).

import { h, setText } from "../dom";
import type { Messenger } from "../messenger";
import type { ChatModel, ListSessionsMsg, SessionInfo, SessionsMsg } from "../types/chat";

/** How long an unanswered `list_sessions` keeps another from being asked (ms). */
const LISTING_MS = 5000;

/** What the picker shows for a session: its title, else the start of its first prompt; never a stored id. */
export function sessionLabel(s: SessionInfo): string {
  const text = (s.title || s.preview || "").replace(/\s+/g, " ").trim();
  if (text === "") return "New session";
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}

export interface SessionPicker {
  /** The session's title (.hn-title). */
  readonly title: HTMLElement;
  /** select.hn-session-picker */
  readonly el: HTMLSelectElement;
  /** Ask for the list of sessions (not in a %hermes view, not twice at once). */
  list(): void;
}

export function createSessionPicker(model: ChatModel, messenger: Messenger): SessionPicker {
  const title = h("span", { class: "hn-title" });
  const el = h("select", { class: "hn-session-picker", "aria-label": "Session" }) as HTMLSelectElement;
  let sessions: SessionInfo[] = [];
  let listing: number | null = null; // when the unanswered question went

  const show = (): void => {
    const session = model.get("session");
    setText(title, session?.title || (session ? "Untitled session" : "Hermes"));
    const all: SessionInfo[] = session && !sessions.some((s) => s.id === session.id) ? [session, ...sessions] : sessions;
    el.replaceChildren(...all.map((s) => h("option", { value: s.id, selected: s.id === session?.id, title: s.id }, sessionLabel(s))));
    if (all.length === 0) el.append(h("option", { value: "" }, "No sessions"));
    el.value = session?.id ?? "";
    el.disabled = all.length === 0;
  };
  const received = (list: SessionInfo[]): void => {
    sessions = Array.isArray(list) ? list : [];
    listing = null;
    show();
  };
  const ask = (): void => {
    if (model.get("mode") === "turn" || (listing !== null && Date.now() - listing < LISTING_MS)) return;
    listing = Date.now();
    messenger.ask<ListSessionsMsg>({ type: "list_sessions" }, {
      answer: (msg) => received(msg.sessions),
      failed: () => void (listing = null),
    });
  };
  el.addEventListener("change", () => {
    if (el.value) messenger.command({ type: "switch_session", session_id: el.value });
  });
  el.addEventListener("focus", ask);
  el.addEventListener("pointerdown", ask);
  messenger.listen("change:session", show);
  // A re-list the kernel pushes after a turn (an answer is its question's own).
  messenger.listen("msg:custom", (msg: SessionsMsg | null) => {
    if (msg?.type === "sessions" && msg.request === undefined) received(msg.sessions);
  });
  show();
  return { title, el, list: ask };
}
