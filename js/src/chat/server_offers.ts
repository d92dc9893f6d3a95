// What this Hermes offers the chat beyond its conversation, asked (questions) when the view opens and after every
// session change (a profile switch moves the chat to another Hermes home): its profiles, for the header's picker
// (hidden where Hermes lists none or refuses: 0.19.0), and which of a running subagent's controls work here (the
// answer sets `data-subagent-steer` / `data-subagent-stop` on .hn-chat; CSS hides the rest, activity.ts). Not in a
// %hermes view.

import { setAttr } from "../dom";
import type { Messenger } from "../messenger";
import type { ChatModel, ProfilesRequest, SubagentControlsRequest } from "../types/chat";
import type { ProfilePicker } from "./profiles";

/** Ask now and after every session change. */
export function askServerOffers(model: ChatModel, messenger: Messenger, root: HTMLElement, profiles: ProfilePicker): void {
  const ask = (): void => {
    if (model.get("mode") === "turn") return;
    messenger.ask<ProfilesRequest>({ type: "profiles" }, { answer: (msg) => profiles.show(msg), failed: () => profiles.hide() });
    messenger.ask<SubagentControlsRequest>({ type: "subagent_controls" }, {
      answer: (msg) => {
        setAttr(root, "data-subagent-steer", msg.steer === true ? "true" : null);
        setAttr(root, "data-subagent-stop", msg.stop === true ? "true" : null);
      },
    });
  };
  messenger.listen("change:session", ask);
  ask();
}
