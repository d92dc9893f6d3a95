// The chat's header: the session (title and picker, session_picker.ts), its model and context gauge
// (session_header.ts), the kernel's permission modes (kernel_modes.ts), the Hermes profile (profiles.ts), and the
// New session, Refresh and Export buttons. Each part keeps its own state; the header places them and keeps the
// model label, gauge and modes in step with their traitlets.

import { h } from "../dom";
import type { Messenger } from "../messenger";
import type { ChatModel, ChatOutgoing } from "../types/chat";
import { createExportControl } from "./export";
import { createKernelModes } from "./kernel_modes";
import { createProfilePicker, type ProfilePicker } from "./profiles";
import { createSessionHeader } from "./session_header";
import { createSessionPicker, type SessionPicker } from "./session_picker";

export interface ChatHeader {
  readonly el: HTMLElement;
  readonly sessions: SessionPicker;
  readonly profiles: ProfilePicker;
}

export function createChatHeader(model: ChatModel, messenger: Messenger, send: (message: ChatOutgoing) => void): ChatHeader {
  const sessions = createSessionPicker(model, messenger);
  const sessionHeader = createSessionHeader();
  const kernelModes = createKernelModes(send);
  const profiles = createProfilePicker(send);
  const newSession = h("button", { type: "button", class: "hn-new-session" }, "New session");
  const refresh = h("button", { type: "button", class: "hn-refresh", "aria-label": "Refresh history" }, "Refresh");
  newSession.addEventListener("click", () => send({ type: "new_session" }));
  refresh.addEventListener("click", () => send({ type: "refresh" }));
  // Three groups that wrap as wholes (chat.css): what the session is, the kernel's modes, the controls.
  const el = h(
    "div",
    { class: "hn-header" },
    h("div", { class: "hn-header-session" }, sessions.title, sessionHeader.el),
    kernelModes.el,
    h(
      "div",
      { class: "hn-header-controls", role: "group", "aria-label": "Session controls" },
      profiles.el,
      sessions.el,
      newSession,
      refresh,
      createExportControl(send),
    ),
  );
  const showSessionInfo = (): void => {
    sessionHeader.showModel(model.get("model"));
    sessionHeader.showContext(model.get("context_usage"));
  };
  const showKernelModes = (): void => kernelModes.show(model.get("kernel_modes"));
  messenger.listen("change:model", showSessionInfo);
  messenger.listen("change:context_usage", showSessionInfo);
  messenger.listen("change:kernel_modes", showKernelModes);
  showSessionInfo();
  showKernelModes();
  return { el, sessions, profiles };
}
