"""Images in replies and history against the real servers: a file Hermes made, found and read back.

The scripted model's ``IMAGE`` writes a PNG into the Hermes home's ``images/`` folder and answers
``MEDIA:<path>`` (as Hermes names a file it made, docs/protocol/dashboard-newer.md §13). The reply's text part
carries a ``media`` reference, live and from history alike; the Dashboard's ``/api/media`` hands the bytes
back, sniffed and bounded; an API Server run names the same file (docs/protocol/api-server.md §11).
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from hermes_notebook._demo.local_hermes import LocalHermes
from hermes_notebook._demo.script import IMAGE_PNG
from hermes_notebook.client.api import ApiClient
from hermes_notebook.client.dashboard import DashboardConnection
from hermes_notebook.client.dashboard.media import MediaImage, fetch_media
from hermes_notebook.errors import HermesUsageError
from hermes_notebook.settings import Settings
from hermes_notebook.turns import TurnFolder
from hermes_notebook.turns.events import Event

pytestmark = pytest.mark.both_servers


def _images(message: object) -> list[dict[str, object]]:
    parts = message.to_dict()["parts"] if hasattr(message, "to_dict") else message["parts"]  # type: ignore[index]
    return [image for part in parts for image in part.get("images") or ()]


@pytest.mark.asyncio(loop_scope="module")
async def test_an_image_hermes_made_shows_live_and_from_history_and_reads_back(
    conn: DashboardConnection, hermes: LocalHermes, settings: Settings
) -> None:
    """Live and history give the same ``media`` reference; reading it returns the PNG's bytes, sniffed."""
    name = f"hn-{uuid.uuid4().hex[:8]}"
    ref = await conn.create_session()
    message = await asyncio.wait_for(await conn.submit(ref, f"IMAGE {name}"), 90)
    live = _images(message)
    path = str(hermes.home / "images" / f"{name}.png")
    assert [(i["source"], i["path"], i["mime"], i["alt"]) for i in live] == [
        ("media", path, "image/png", f"{name}.png")
    ]
    history = [m for m in await conn.history(ref) if m.role == "assistant"]
    assert _images(history[-1]) == live
    image = await fetch_media(settings, path)
    assert image == MediaImage(mime="image/png", data=IMAGE_PNG, path=path)
    assert base64.b64decode(image.to_ref()["data"] or "") == IMAGE_PNG
    with pytest.raises(HermesUsageError, match="outside the Hermes media folders"):
        await fetch_media(settings, str(hermes.workdir / "outside.png"))


@pytest.mark.servers("newer")  # the run path is the same code on 0.19.0 (docs/protocol/api-server.md §11)
@pytest.mark.asyncio(loop_scope="module")
async def test_a_run_names_the_same_image(settings: Settings, hermes: LocalHermes) -> None:
    """An API Server run's output keeps the ``MEDIA:`` tag; the run dialect folds it into the same
    reference."""
    name = f"hn-{uuid.uuid4().hex[:8]}"
    async with ApiClient(settings) as api:
        ref = await api.start_run(f"IMAGE {name}")
        folder = TurnFolder("run")
        async for event in api.run_events(ref.id):
            folder.apply(Event(event.type, event.payload, run_id=ref.id, dialect="run"))
    assert folder.done
    path = str(hermes.home / "images" / f"{name}.png")
    assert [(i["source"], i["path"]) for i in _images(folder.message)] == [("media", path)]


def test_reply_images_hold_the_bytes_hermes_made(hermes_nb: Any, hermes: LocalHermes, tmp_path: Path) -> None:
    """``Reply.images``: the ``media`` image read in through the conversation when the turn ended, displayed
    as an ``image/png`` output of exactly the PNG Hermes wrote; the transcript names it and embeds no bytes;
    an export embeds it with ``images=True`` and names it by default."""
    name = f"hn-{uuid.uuid4().hex[:8]}"
    reply = hermes_nb.ask(f"IMAGE {name}", new=True, timeout=120)
    [image] = reply.images
    assert (image.source, image.path, image.mime, image.data) == (
        "inline",
        str(hermes.home / "images" / f"{name}.png"),
        "image/png",
        IMAGE_PNG,
    )
    bundle = image._repr_mimebundle_()
    assert base64.b64decode(bundle["image/png"]) == IMAGE_PNG and name in bundle["text/plain"]
    transcript = reply.bundle()
    assert f"{name}.png" in transcript["text/html"] and bundle["image/png"] not in transcript["text/html"]
    page = hermes_nb.export(reply, tmp_path / "with.html", images=True).read_text()
    assert f'src="data:image/png;base64,{bundle["image/png"]}"' in page
    session = hermes_nb.export(
        None, tmp_path / "session.ipynb", images=True
    ).read_text()  # history + this reply
    assert f"data:image/png;base64,{bundle['image/png']}" in session
    for suffix in ("md", "html", "ipynb"):
        named = hermes_nb.export(reply, tmp_path / f"named.{suffix}").read_text()
        assert f"{name}.png" in named and bundle["image/png"] not in named, suffix


def test_a_session_exported_later_embeds_its_images_read_back_from_history(
    hermes_nb: Any, hermes_shell: Any, hermes: LocalHermes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Another connection (here ``%hermes``'s) exports a session by id: ``--images`` / ``images=True`` read
    the image Hermes made back from the stored history and embed it; by default the file only names it."""
    name = f"hn-{uuid.uuid4().hex[:8]}"
    hermes_nb.ask(f"IMAGE {name}", new=True, timeout=120)
    session = hermes_nb.session_id
    embedded = f"data:image/png;base64,{base64.b64encode(IMAGE_PNG).decode()}"
    for suffix in ("html", "md", "ipynb"):
        result = hermes_shell.run_cell(
            f"%hermes export {tmp_path / ('with.' + suffix)} {session} --resume --images"
        )
        result.raise_error()
        assert f"exported to {tmp_path / ('with.' + suffix)}" in capsys.readouterr().out
        assert embedded in (tmp_path / f"with.{suffix}").read_text(), suffix
    hermes_shell.run_cell(f"%hermes export {tmp_path / 'named.html'} {session} --resume").raise_error()
    named = (tmp_path / "named.html").read_text()
    assert f"{name}.png" in named and embedded not in named
    stored = hermes_nb.history(session, images=True)
    [image] = [i for m in stored for p in m["parts"] for i in p.get("images") or ()]
    assert (image["source"], image["path"], base64.b64decode(image["data"])) == (
        "inline",
        str(hermes.home / "images" / f"{name}.png"),
        IMAGE_PNG,
    )


@pytest.mark.servers("newer")  # the view's question is the same code on both; one server is enough
def test_a_chat_view_asking_for_the_image_gets_its_bytes(
    hermes: LocalHermes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chat's view asks ``{"type": "image", message_id, part_id, index}`` (a request id): the kernel reads
    the file through the conversation and answers with base64 and the sniffed type; an index it does not hold
    is refused. Its Export button embeds that image in the file."""
    from hermes_notebook.widgets import Chat
    from tests.helpers import eventually

    monkeypatch.chdir(tmp_path)  # Export writes next to the notebook: the kernel's directory
    chat = Chat(hermes.settings())
    sent: list[dict[str, Any]] = []
    chat.send = lambda content, buffers=None: sent.append(json.loads(json.dumps(content)))  # type: ignore[method-assign]
    try:
        chat.wait_ready(30)
        name = f"hn-{uuid.uuid4().hex[:8]}"
        chat._dispatch(chat, {"type": "send", "text": f"IMAGE {name}", "images": []}, [])

        def image_part() -> tuple[str, str] | None:
            for message in chat.snapshot():
                for part in message.get("parts") or ():
                    if any(i.get("source") == "media" for i in part.get("images") or ()):
                        return message["id"], part["id"]
            return None

        message_id, part_id = eventually(image_part, 90, "the reply naming the image")
        ask = {"type": "image", "message_id": message_id, "part_id": part_id}
        chat._dispatch(chat, {**ask, "index": 0, "request": "r1"}, [])
        chat._dispatch(chat, {**ask, "index": 3, "request": "r2"}, [])
        answers = eventually(
            lambda: (
                {m["request"]: m for m in sent if m.get("request") in ("r1", "r2")}
                if len([m for m in sent if m.get("request") in ("r1", "r2")]) == 2
                else None
            ),
            30,
            f"answers ({chat.notice})",
        )
        assert answers["r1"]["type"] == "image" and answers["r1"]["mime"] == "image/png"
        assert base64.b64decode(answers["r1"]["data"]) == IMAGE_PNG
        assert answers["r2"] == {
            "type": "error",
            "request": "r2",
            "message": "that image is not in this conversation",
        }
        assert answers["r1"]["data"] not in json.dumps(
            chat.get_state(), default=str
        )  # sent, never widget state

        # The Export button's file stands alone: the image Hermes made is embedded, not just named.
        eventually(lambda: not chat.busy, 60, "the end of the turn")
        chat._dispatch(chat, {"type": "export", "format": "html"}, [])
        eventually(lambda: chat.notice.startswith("Exported to "), 30, f"the export ({chat.notice})")
        page = Path(chat.notice.removeprefix("Exported to ")).read_text()
        assert f'src="data:image/png;base64,{answers["r1"]["data"]}"' in page
    finally:
        chat.close()


@pytest.mark.servers("newer")  # the same code on 0.19.0 (its Dashboard serves /api/media too: the first test)
def test_the_hermes_view_answers_the_image_and_leaves_it_as_an_image_output(
    hermes_nb: Any, hermes: LocalHermes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a kernel the live view (``%hermes``/``ask``) ends as its transcript followed by the turn's images as
    ``image/png`` outputs; a live view's ``image`` question is answered through the turn's conversation."""
    import copy

    from hermes_notebook.widgets.turn import TurnView
    from tests.helpers import eventually

    outputs: list[Any] = []
    monkeypatch.setattr("hermes_notebook.shell.host.environment", lambda: "kernel")
    monkeypatch.setattr("hermes_notebook.shell.host.same_cell", lambda _count: True)  # the cell still runs
    monkeypatch.setattr("IPython.display.display", lambda *objs, **_kw: outputs.extend(objs))
    monkeypatch.setattr("IPython.display.update_display", lambda obj, **_kw: outputs.append(obj))
    name = f"hn-{uuid.uuid4().hex[:8]}"
    handle = hermes_nb.start(f"IMAGE {name}", new=True)
    reply = handle.wait(120)
    eventually(lambda: any(getattr(o, "mime", None) == "image/png" for o in outputs), 10, "the image output")
    assert isinstance(outputs[0], TurnView)  # the live view, then its transcript, then the image
    assert outputs[1] == reply.bundle()
    [image] = [o for o in outputs[2:] if hasattr(o, "mime")]
    assert base64.b64decode(image._repr_mimebundle_()["image/png"]) == IMAGE_PNG

    message = copy.deepcopy(reply.message)  # as the live view held it: the file's reference, no bytes
    part = next(p for p in message["parts"] if p.get("images"))
    part["images"] = [{**part["images"][0], "source": "media", "data": None}]
    view = TurnView(images=handle.image)
    sent: list[dict[str, Any]] = []
    view.send = lambda content, buffers=None: sent.append(content)  # type: ignore[method-assign]
    try:
        view.push([{"op": "message", "message": message}])
        view._dispatch(
            view,
            {
                "type": "image",
                "request": "v1",
                "message_id": message["id"],
                "part_id": part["id"],
                "index": 0,
            },
            [],
        )
        answer = eventually(
            lambda: next((m for m in sent if m.get("request") == "v1"), None), 30, "the answer"
        )
        assert answer["type"] == "image" and base64.b64decode(answer["data"]) == IMAGE_PNG
    finally:
        view.close()
