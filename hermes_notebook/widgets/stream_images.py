"""A view's ``image`` question: the bytes of an image a part names, read in the kernel and sent as a message.

Why here and not in the browser: a ``media`` image is a file on the Hermes host, read through the Dashboard
with its token (``Conversation.image``); the browser never gets a server URL to load. The view names the image
by message, part and index, never by path, so it can only ask for what the conversation holds. ``inline``
images already carry their (sniffed, bounded) base64 and are answered from the store; ``remote`` ones are
never fetched by the kernel (the view shows them as a link the user may open). Answers are custom messages,
never widget state, so a saved notebook keeps no image bytes from a view (the static transcript names each
image instead).
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from .. import runtime
from ..scrub import image_data
from . import inbound
from .replies import answer, refusal

__all__ = ["ImageLoad", "ImageViews", "install_image_answers"]

log = logging.getLogger(__name__)


class _Read(Protocol):
    @property
    def mime(self) -> str: ...
    @property
    def data(self) -> bytes: ...


#: Reads a ``media`` image by its path on the Hermes host (``Conversation.image``).
ImageLoad = Callable[[str], Awaitable[_Read]]


class ImageViews(Protocol):
    """What the answers use of a streaming widget (the chat or the ``%hermes`` view): its public surface
    only."""

    def message(self, message_id: str | None) -> dict[str, Any] | None: ...
    def on_action(self, name: str, handler: Callable[[dict[str, Any]], object]) -> None: ...
    def send_to_views(self, content: dict[str, Any]) -> None: ...
    def scrub_value(self, value: Any) -> Any: ...


def install_image_answers(widget: ImageViews, load: ImageLoad | None) -> None:
    """Answer the views' ``image`` questions; ``media`` images through ``load`` (None: "not readable
    here")."""
    widget.on_action("image", lambda question: _answer(widget, question, load))


def _image(widget: ImageViews, question: Mapping[str, Any]) -> Mapping[str, Any]:
    message = widget.message(question["message_id"]) or {}
    part = next((p for p in message.get("parts") or () if p.get("id") == question["part_id"]), None)
    images = (part or {}).get("images") or []
    if question["index"] >= len(images) or not isinstance(images[question["index"]], Mapping):
        raise inbound.Refused("that image is not in this conversation")
    image: Mapping[str, Any] = images[question["index"]]
    return image


def _answer(widget: ImageViews, question: dict[str, Any], load: ImageLoad | None) -> None:
    try:
        image = _image(widget, question)
    except inbound.Refused as exc:  # the view shows why in place of the image (no notice line)
        widget.send_to_views(refusal(question, str(exc)))
        return
    source = image.get("source")
    if source == "inline" and image_data(image):
        widget.send_to_views(
            answer(question, {"type": "image", "mime": image["mime"], "data": image["data"]})
        )
    elif source == "media" and isinstance(image.get("path"), str) and load is not None:
        runtime.submit(_read(widget, question, load, image["path"]))
    else:
        why = (
            "a remote image is never loaded here: open its link"
            if source == "remote"
            else str(image.get("note") or "this image cannot be shown here")
        )
        widget.send_to_views(refusal(question, why))


async def _read(widget: ImageViews, question: dict[str, Any], load: ImageLoad, path: str) -> None:
    try:
        read = await load(path)
    except Exception as exc:  # the view shows why (outside the media folders, gone, not an image ...)
        log.info("could not read the image %r: %s", path, exc)
        widget.send_to_views(refusal(question, widget.scrub_value(str(exc))))
        return
    data = base64.b64encode(read.data).decode("ascii")
    widget.send_to_views(answer(question, {"type": "image", "mime": read.mime, "data": data}))
