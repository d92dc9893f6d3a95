// A kernel tool's part names the images its result sent to the model (`sent_images`, kernel/images.py): each is
// shown as exactly the PNG that was sent, with its size and where it came from, so the user sees what the model saw.
//
// Inert: only image/png, only base64 we check here, shown through a data: URL built here (nothing remote loads).
// Stable DOM hooks: .hn-sent-images (hidden when none), .hn-sent-image img, .hn-sent-image-label.

import { h } from "../dom";
import type { SentImage } from "../types/turns";

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function sizeText(image: SentImage): string {
  const kb = Math.max(1, Math.round(image.bytes / 1024));
  return `${image.width}×${image.height}, ${kb} KB`;
}

/** Fill `slot` with the images (hidden when there are none); rebuilt only when they differ. */
export function renderSentImages(slot: HTMLElement, images: SentImage[] | undefined): void {
  const list = (images ?? []).filter((i) => i.mime === "image/png" && typeof i.data === "string" && BASE64.test(i.data));
  const key = list.map((i) => `${i.label}:${i.bytes}:${i.data.length}`).join("|");
  if (slot.dataset.images === key) return;
  slot.dataset.images = key;
  slot.hidden = list.length === 0;
  if (list.length === 0) {
    slot.replaceChildren();
    return;
  }
  const figures = list.map((image) =>
    h(
      "figure",
      { class: "hn-sent-image" },
      h("img", { src: `data:image/png;base64,${image.data}`, alt: `${image.label} (sent to the model)`, loading: "lazy" }),
      h("figcaption", { class: "hn-sent-image-label" }, `${image.label} · ${sizeText(image)}`),
    ),
  );
  const title = `Sent to the model: ${list.length} image${list.length === 1 ? "" : "s"}`;
  slot.replaceChildren(h("details", { class: "hn-sent-images-box", open: true }, h("summary", {}, title), ...figures));
}
