// The connection banner (.hn-banner[data-status]): what the `connection` traitlet says, with a live countdown while
// reconnecting; hidden while connected and quiet. Owns: the countdown's timer.

import { h, setAttr, setText } from "../dom";
import type { Messenger } from "../messenger";
import type { ChatModel, Connection } from "../types/chat";

export interface Banner {
  readonly el: HTMLElement;
  dispose(): void;
}

export function createBanner(model: ChatModel, messenger: Messenger): Banner {
  const el = h("div", { class: "hn-banner", role: "status", "aria-live": "polite" });
  let timer: ReturnType<typeof setInterval> | null = null;
  const stop = (): void => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  const show = (connection: Connection | null): void => {
    stop();
    const status = connection?.status ?? "connected";
    setAttr(el, "data-status", status);
    const detail = connection?.message ? ` ${connection.message}` : "";
    if (status === "reconnecting") {
      const until = Date.now() + (connection?.retry_in ?? 0) * 1000;
      const tick = (): void => {
        const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
        setText(el, left > 0 ? `Connection lost. Reconnecting in ${left} s…${detail}` : `Reconnecting…${detail}`);
        if (left === 0) stop();
      };
      tick();
      if (timer === null && (connection?.retry_in ?? 0) > 0) timer = setInterval(tick, 1000);
    } else if (status === "disconnected") {
      setText(el, `Disconnected from Hermes.${detail}`);
    } else if (status === "reconnected") {
      setText(el, `Reconnected.${detail}`);
    } else {
      setText(el, detail.trim());
    }
    el.hidden = status === "connected" && detail === "";
  };
  messenger.listen("change:connection", () => show(model.get("connection")));
  show(model.get("connection"));
  return { el, dispose: stop };
}
