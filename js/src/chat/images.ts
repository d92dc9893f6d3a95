// The images a text or tool part names (`images`, hermes_notebook/turns/images.py), shown inline.
//
// What loads: only bytes that came from the connected Hermes, through the kernel. An `inline` image carries its
// base64 (sniffed and bounded by the kernel); a `media` image is a file on the Hermes host, which the view asks
// the kernel for (an `image` question, js/src/invoke.ts, once it comes near the screen) and shows from the
// answer's base64; neither is ever an `<img>` of a server URL. A `remote` image (an http(s) URL in the model's
// text) never loads here, not even on a click: it is a link the user may open in a new tab, naming its host. Every
// image is a data: URL built here from base64 checked here, of PNG, JPEG, GIF or WebP only (never SVG). Alt text
// and notes are server text: textContent.
// Stable DOM hooks: .hn-images (hidden when none), .hn-image[data-source][data-state], .hn-image img,
// .hn-image-caption, .hn-image-link.

import { h } from "../dom";
import type { Messenger } from "../messenger";
import type { ImageMsg, ImageRequest } from "../types/chat";
import type { ImageRef } from "../types/turns";
import type { Asked } from "../types/widget";
import { imageHost } from "./markdown";

/** The image types shown (turns/images.SHOWN_TYPES). */
export const SHOWN_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** How long a view waits for a media image read through the kernel (ms). */
export const IMAGE_TIMEOUT_MS = 60_000;

/** Asks the kernel for a part's image (an `image` question); rejects with why it is not shown. */
export type AskImage = (question: Asked<ImageRequest>) => Promise<ImageMsg>;

/** The `image` question, asked through a view's messenger. */
export function imageAsker(messenger: Messenger): AskImage {
  return (question) =>
    new Promise((resolve, reject) => {
      messenger.ask<ImageRequest>(question, { answer: resolve, failed: reject }, { timeout: IMAGE_TIMEOUT_MS });
    });
}

export interface ImageIds {
  message_id: string;
  part_id: string;
}

/** `text` without the `MEDIA:<path>` tags of the media images shown under it (Hermes' way of naming a file it made:
 *  once the image is there, the tag is not shown as text too); twin of turns/images.py `without_media_tags`. */
export function withoutMediaTags(text: string, images: readonly ImageRef[] | undefined): string {
  const paths = (Array.isArray(images) ? images : []).filter((i) => i.source === "media" && i.path).map((i) => i.path as string);
  if (paths.length === 0 || !text.includes("MEDIA:")) return text;
  let out = text;
  for (const path of paths) {
    const escaped = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    out = out.replace(new RegExp(`[ \\t]*MEDIA:\\s*([\`"']?)${escaped}\\1[ \\t]*`, "g"), "");
  }
  return out.replace(/\n{3,}/g, "\n\n").trimEnd();
}

/** A data: URL of `data` as `mime`, or null unless both are what we show. */
export function imageSrc(mime: string | null | undefined, data: string | null | undefined): string | null {
  if (typeof mime !== "string" || !SHOWN_TYPES.includes(mime) || typeof data !== "string" || data === "") return null;
  return BASE64.test(data) ? `data:${mime};base64,${data}` : null;
}

function keyOf(images: readonly ImageRef[]): string {
  return JSON.stringify(images.map((i) => [i.source, i.path, i.url, i.alt, i.bytes, i.note, i.data?.length ?? 0]));
}

function sizeText(bytes: number | null): string {
  return typeof bytes === "number" ? ` · ${Math.max(1, Math.round(bytes / 1024)).toLocaleString()} KB` : "";
}

/** Below this many pixels a side, an image is scaled up to its minimum box without smoothing (chat.css). */
const SMALL_SIDE = 48;

function picture(figure: HTMLElement, src: string, alt: string): void {
  figure.dataset.state = "shown";
  const img = h("img", { src, alt, loading: "lazy" });
  img.addEventListener("load", () => {
    img.classList.toggle("hn-image-small", img.naturalWidth < SMALL_SIDE || img.naturalHeight < SMALL_SIDE);
  });
  figure.prepend(img);
}

function unshown(figure: HTMLElement, why: string): void {
  figure.dataset.state = "unshown";
  figure.prepend(h("div", { class: "hn-image-unshown" }, `Image not shown: ${why}`));
}

function figureFor(image: ImageRef, index: number, ids: ImageIds, ask: AskImage | undefined): HTMLElement {
  const alt = image.alt || "image";
  const caption = h("figcaption", { class: "hn-image-caption" }, `${alt}${sizeText(image.bytes)}`);
  const figure = h("figure", { class: "hn-image", "data-source": image.source, "data-state": "waiting" }, caption);
  if (image.source === "remote") {
    const host = image.url ? imageHost(image.url) : null;
    figure.dataset.state = "link";
    if (host !== null && image.url) {
      // a link, never an <img>: the notebook loads nothing from elsewhere; the user may open it in a new tab
      caption.append(" · ", h("a", { class: "hn-image-link", href: image.url.trim(), target: "_blank",
        rel: "noopener noreferrer nofollow" }, `open it on ${host} ↗`));
    }
    return figure;
  }
  const src = image.source === "inline" ? imageSrc(image.mime, image.data) : null;
  if (src !== null) picture(figure, src, alt);
  else if (image.source !== "media" || image.note) unshown(figure, image.note ?? "not a PNG, JPEG, GIF or WebP image");
  else if (ask === undefined) unshown(figure, "this view cannot read files from the Hermes host");
  else {
    const waiting = h("div", { class: "hn-image-waiting", role: "status" }, "Loading the image from Hermes…");
    figure.prepend(waiting);
    whenNear(figure, () => ask({ type: "image", ...ids, index }).then(
      (answer) => {
        waiting.remove();
        const shown = imageSrc(answer.mime, answer.data);
        if (shown === null) unshown(figure, "not a PNG, JPEG, GIF or WebP image");
        else picture(figure, shown, alt);
      },
      (error: unknown) => {
        waiting.remove();
        unshown(figure, error instanceof Error ? error.message : "the kernel did not answer");
      },
    ));
  }
  return figure;
}

/** Run `load` once `el` is on screen or near it (a long history does not read every file at once); at once
 *  where the browser cannot tell (no IntersectionObserver). */
function whenNear(el: HTMLElement, load: () => unknown): void {
  if (typeof IntersectionObserver === "undefined") {
    load();
    return;
  }
  let done = false;
  const observer = new IntersectionObserver((entries) => {
    if (done || !entries.some((entry) => entry.isIntersecting)) return;
    done = true;
    observer.disconnect();
    load();
  }, { rootMargin: "400px" });
  observer.observe(el);
}

/** Fill `slot` with a part's images (hidden when none); rebuilt only when they change, so a media file is asked
 *  for once per change, not per streamed batch. */
export function renderImages(slot: HTMLElement, images: readonly ImageRef[] | undefined, ids: ImageIds, ask?: AskImage): void {
  const list = Array.isArray(images) ? images : [];
  const key = keyOf(list);
  if (slot.dataset.images === key) return;
  slot.dataset.images = key;
  slot.hidden = list.length === 0;
  slot.replaceChildren(...list.map((image, index) => figureFor(image, index, ids, ask)));
}
