// The header's profile picker: which Hermes profile this chat talks to. Opening the view asks `profiles` once (a
// question, js/src/invoke.ts); the answer fills `select.hn-profile-picker`, hidden when the Hermes lists none or
// refuses (0.19.0 has no profiles). Choosing another sends `switch_profile`: the kernel moves the chat to a new
// session in that profile (widgets/chat_profiles.py) and asks nothing of the picker. Names, models and
// descriptions are server text: shown as option text only.

import { h } from "../dom";
import type { ChatOutgoing, ProfileEntry, ProfilesMsg } from "../types/chat";

export interface ProfileOption {
  value: string;
  label: string;
  title: string;
}

/** The picker's options: one per profile, "name (default)" for the server's default, model and description as the
 * tooltip; none when the list is not a list (the picker then stays hidden). */
export function profileOptions(msg: Pick<ProfilesMsg, "profiles">): ProfileOption[] {
  const rows: unknown = msg.profiles;
  if (!Array.isArray(rows)) return [];
  return rows
    .filter((p): p is ProfileEntry => typeof p === "object" && p !== null && typeof p.name === "string" && p.name !== "")
    .map((p) => ({
      value: p.name,
      label: p.default ? `${p.name} (default)` : p.name,
      title: [p.model, p.description].filter((s) => typeof s === "string" && s !== "").join(" · "),
    }));
}

/** Which profile the picker shows as chosen: the chat's own, else the server's default. */
export function chosenProfile(msg: Pick<ProfilesMsg, "profiles" | "current">): string {
  if (typeof msg.current === "string" && msg.current) return msg.current;
  const fallback = Array.isArray(msg.profiles) ? msg.profiles.find((p) => p && p.default) : undefined;
  return fallback?.name ?? "";
}

export interface ProfilePicker {
  readonly el: HTMLSelectElement;
  show(msg: ProfilesMsg): void;
  /** The question was refused (no profiles on this Hermes) or timed out: the picker stays hidden. */
  hide(): void;
}

export function createProfilePicker(send: (message: ChatOutgoing) => void): ProfilePicker {
  const el = h("select", { class: "hn-profile-picker", "aria-label": "Hermes profile", hidden: true }) as HTMLSelectElement;
  let shown = "";
  el.addEventListener("change", () => {
    if (el.value && el.value !== shown) {
      shown = el.value;
      send({ type: "switch_profile", profile: el.value });
    }
  });
  return {
    el,
    show(msg) {
      const options = profileOptions(msg);
      shown = chosenProfile(msg);
      el.replaceChildren(...options.map((o) => h("option", { value: o.value, title: o.title }, o.label)));
      el.value = shown;
      el.hidden = options.length < 2; // one profile: nothing to choose
    },
    hide() {
      el.hidden = true;
    },
  };
}
