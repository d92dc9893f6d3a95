"""An offline, scripted stand-in for an LLM: a tiny OpenAI-compatible chat-completions server.

This is NOT a model. It answers ``POST /v1/chat/completions`` with canned replies chosen by a keyword, so
that the real Hermes Agent can be driven through every path (text, reasoning, tool calls, approvals,
clarify questions, slow streams, failures) with no network and no API key. The tests and the demo point
Hermes' ``model.base_url`` at it.

The keyword is the first word (case-sensitive) of the LAST PARAGRAPH of the last user message: Hermes
merges the text of a failed or interrupted turn into the next prompt with a blank line, so only the newest
paragraph counts.

========================  ==================================================================================
prompt                    reply
========================  ==================================================================================
(anything else)           streamed text ``Hello from the scripted model. You said: <paragraph>``
``THINK ...``             ``reasoning_content`` deltas (:data:`THINK_REASONING`), then text
                          ``I thought about it: the answer is 42.``
``RUN <command>``         a ``terminal`` tool call ``{"command": <command>}``; after the tool result, the text
                          ``Command output:`` (``Command output (exit code N):`` when N is not 0), a newline
                          and the output in a fenced block: ``"Command output:\\n```\\nhi\\n```"``
``THINKRUN <command>``    reasoning (:data:`THINKRUN_REASONING`) and the ``terminal`` call in one response,
                          then the same final text as ``RUN``
``DANGER [dir]``          a ``terminal`` call ``rm -rf ./<dir>`` (default dir ``hermes-danger-demo``), which
                          Hermes flags for approval; after the result: ``Dangerous command was blocked:`` and
                          the ``BLOCKED: ...`` reason in a fenced block, or ``Dangerous command ran (exit code
                          N).`` and any output
``CLARIFY [question]``    a ``clarify`` call ``{"question": <question or "Pick A or B?">, "choices": ["A",
                          "B"]}`` (newer Hermes, whose tool schema takes ``questions[]``: one such question);
                          after the result: ``You chose: <answer>`` (``(no answer)`` if empty; the tool's
                          error text if it failed; answers of several questions joined with ``; ``)
``CLARIFY3``              newer Hermes only: three questions in one call (pick one of A/B, pick any of
                          X/Y/Z, a free-text name)
``SKILL <name>``          a ``skill_view`` call ``{"name": <name>}`` (a skill that declares
                          ``required_environment_variables`` makes a newer Hermes ask for a secret); after the
                          result: ``Skill loaded: <name>``
``KERNEL <tool> [arg]``   a call to the notebook's kernel tool ``<tool>`` (``list_variables``,
                          ``describe df``, ``read_cells 1:3``, ``read_output 2``, ``run_code <code>``;
                          the cell tools ``list_cells``, ``insert_cell 2 [markdown] <source>``,
                          ``edit_cell 0 <source>``, ``delete_cell 1``, ``run_cell 3``,
                          ``run_cells [first [last]]``, ``restart_and_run_all``, where a source
                          starting with ``"`` is a JSON string), directly or through a newer Hermes'
                          ``tool_call``;
                          ``KERNEL@notebook_<hex>`` names the server. After the result: ``Kernel tool
                          result:`` and the result itself in a fenced block (Hermes' untrusted-data wrapper
                          and the ``{"result": ...}`` envelope taken off), then ``Images received: N (<mime>
                          <base64 length>, ...)`` when Hermes passed images to the model with it
``KERNELS <steps>``       kernel tool calls in turn, one per response: steps joined by ``;;``, each
                          ``<tool> [arg]`` as for ``KERNEL``; ``wait S`` first delays the first call by S
                          seconds of reasoning; ``slow N`` last streams N ticks (0.25 s apart) before the
                          final ``Kernel tool results:`` with each result in a fenced block
``PREVIEW <i> <source>``   an ``insert_cell`` proposing code cell ``<source>`` at index ``<i>`` (a source
                          starting with ``"`` is a JSON string), then ``preview`` of the pending change its
                          result names (``PREVIEW@notebook_<hex>`` names the server), then ``Preview
                          result:`` and the preview's result in a fenced block (``Images received: ...``
                          with its figures); a refused proposal ends with ``Could not preview:`` and why
``SLOW [n [words]]``      n deltas (default 60) ``tick 0 ``, ``tick 1 `` ... 0.25 s apart, then
                          ``for <words>`` if given (``SLOW 3 item 7``: a model-bound turn of about 1 s);
                          stops as soon as the client disconnects
``FAIL`` / ``FAIL<code>`` HTTP 500 (or ``<code>``) with body ``{"error": {"message": "scripted model failure
                          (HTTP 500)", ...}}``
``MARKDOWN``              :data:`MARKDOWN_REPLY` (heading, list, python code block, inline HTML, a link)
``CACHED``                the echo reply, reporting :data:`CACHED_USAGE` (60 of its 100 prompt tokens read
                          from the provider's prompt cache)
``LONG [n]``              exactly n characters (default 2000) of text, in 10-character deltas, no pauses
``PLAN``                  two todo tool calls (``todo``; on a newer Hermes ``todo_list`` through its
                          ``tool_call`` bridge): :data:`PLAN_STEPS` (item 1 in progress, then done and item 2
                          in progress), then the text :data:`PLAN_TEXT`
``DELEGATE <goal>``       a ``delegate_task`` call for one subagent with that goal (the child is scripted by
                          the same keywords: ``DELEGATE RUN echo hi``); then :data:`DELEGATE_TEXT` and 24
                          slow deltas (~6 s), so the background child reports while the turn is open
``EDIT <p> <old> <new>``  a ``patch`` call replacing ``old`` with ``new`` in the file at path ``p`` (Hermes
                          sends an inline diff with its completion); then ``Edited <p> (1 file changed).``
``IMAGE [name] [dot]``    a ``terminal`` call that copies a PNG to ``<home>/images/<name>.png`` (default
                          ``hn-image``; a media folder Hermes' ``/api/media`` serves) and prints its path: a
                          small bar chart (:data:`IMAGE_PNG`), or with ``dot`` a 1x1 PNG (:data:`DOT_PNG`);
                          then ``Here is the image:`` and ``MEDIA:<that path>``, as Hermes names a file it
                          made
``JUDGE <s> <words>``     as a ``/goal``: Hermes' goal judge (a request without tools whose message opens
                          with ``Goal:``; any goal gets the verdict ``done``) answers after ``s`` seconds,
                          while Hermes holds the session after the turn's ``message.complete``
``BIGCONTEXT <command>``  the ``RUN`` tool call, reporting :data:`BIG_USAGE` (150k prompt tokens, over the
                          compression threshold of the 200k context the local config declares), so Hermes
                          compacts the context mid-turn before it sends the tool result back
========================  ==================================================================================

A newer Hermes appends a ``[System note: ...]`` paragraph to the very first message of a fresh home; such
trailing notes are skipped when choosing the paragraph. A tool-calling keyword whose tool Hermes did not offer
(e.g. ``clarify`` on the API Server) gets the text ``[scripted model] tool '<name>' was not offered by
Hermes.``. Session-title requests (no tools; either Hermes' title prompt) get a plain title from the first
words of the user's message, a keyword read as what it does (``RUN echo hi`` -> "Run echo hi"), as JSON where
the newer Hermes asks for it. Every response reports usage 10 prompt + 5 completion tokens (``BIGCONTEXT``
aside).

Use it in-process (``model = ScriptedModel(); port = model.start(); ...; model.stop()``; ``model.requests``
holds every request body received; ``model.push(Reply(...))`` queues a custom reply for the next agent
request) or as a process: ``python -m hermes_notebook._demo.scripted_model --port N``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import select
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "MARKDOWN_REPLY",
    "MODEL_ID",
    "THINKRUN_REASONING",
    "THINK_REASONING",
    "Reply",
    "ScriptedModel",
    "ToolCall",
    "plan_reply",
    "prompt_of",
]

from .script import (
    MARKDOWN_REPLY,
    MODEL_ID,
    THINK_REASONING,
    THINKRUN_REASONING,
    USAGE,
    Reply,
    ToolCall,
    plan_reply,
    prompt_of,
)

_PROBE_PATHS = {"/api/v1/models", "/api/tags", "/v1/props", "/props", "/version"}


def _chunk(
    delta: dict[str, Any], *, cid: str, finish: str | None = None, usage: Mapping[str, Any] | None = None
) -> bytes:
    payload: dict[str, Any] = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        payload["usage"] = dict(usage)
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _stream_chunks(reply: Reply, cid: str) -> Iterator[tuple[bytes, bool]]:
    """SSE frames for a reply, each with whether a pause should follow it."""
    yield _chunk({"role": "assistant", "content": ""}, cid=cid), False
    for piece in reply.reasoning_deltas():
        yield _chunk({"reasoning_content": piece}, cid=cid), True
    for piece in reply.text_deltas():
        yield _chunk({"content": piece}, cid=cid), True
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield _chunk({"tool_calls": [head]}, cid=cid), False
        args = json.dumps(dict(call.arguments))
        for piece in (args[: len(args) // 2], args[len(args) // 2 :]):
            yield _chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}, cid=cid), True
    finish = "tool_calls" if reply.tool_calls else "stop"
    yield _chunk({}, cid=cid, finish=finish, usage=reply.usage or USAGE), False
    yield b"data: [DONE]\n\n", False


def _completion(reply: Reply, cid: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.text_deltas()) or None}
    if reply.reasoning:
        message["reasoning_content"] = "".join(reply.reasoning_deltas())
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(dict(c.arguments))},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": cid,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [
            {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
        ],
        "usage": dict(reply.usage or USAGE),
    }


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        if self.server.model.verbose:
            sys.stderr.write(f"[scripted-model] {format % args}\n")

    def _send_json(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            self._send_json(
                200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "owned_by": "scripted"}]}
            )
        elif path == "/health":
            self._send_json(200, {"status": "ok", "model": MODEL_ID, "scripted": True})
        else:
            self._send_json(404, {"error": {"message": f"not found: {path}", "type": "not_found"}})

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send_json(404, {"error": {"message": f"not found: {path}", "type": "not_found"}})
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send_json(400, {"error": {"message": "invalid JSON", "type": "invalid_request_error"}})
            return
        model = self.server.model
        reply = model.next_reply(body)
        if reply.status != 200:
            message = f"scripted model failure (HTTP {reply.status})"
            self._send_json(
                reply.status,
                {"error": {"message": message, "type": "server_error", "code": "scripted_failure"}},
            )
            return
        cid = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        if reply.pause > 0:
            time.sleep(reply.pause)
        if not body.get("stream"):
            self._send_json(200, _completion(reply, cid))
            return
        self.close_connection = True  # the stream ends when we close: no chunked encoding needed
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        delay = model.delay if reply.delay is None else reply.delay
        with model.streaming() as stopping:
            try:
                for frame, pause in _stream_chunks(reply, cid):
                    if stopping.is_set() or self._client_gone():
                        return
                    self.wfile.write(frame)
                    self.wfile.flush()
                    if pause and delay > 0:
                        stopping.wait(delay)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client went away (an interrupt or stop): nothing left to do

    def _client_gone(self) -> bool:
        """True when the client closed its side (readable with no data), so a slow stream stops at once."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], model: ScriptedModel) -> None:
        self.model = model
        super().__init__(address, _Handler)


class ScriptedModel:
    """The scripted chat-completions server, run on a background thread of this process.

    ``delay`` is the pause between deltas of normal replies; ``slow_delay`` the pause for ``SLOW``.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        delay: float = 0.02,
        slow_delay: float = 0.25,
        verbose: bool = False,
        estimate_usage: bool = False,
    ) -> None:
        self.host = host
        self.delay = delay
        self.slow_delay = slow_delay
        self.verbose = verbose
        #: Report the prompt's size as a model would (about four characters a token of the request) instead
        #: of :data:`USAGE`, so a demo's context gauge moves as the conversation grows (tests keep USAGE).
        self.estimate_usage = estimate_usage
        #: Every chat-completions request body received, in arrival order.
        self.requests: list[dict[str, Any]] = []
        self._requested_port = port
        self._queue: collections.deque[Reply] = collections.deque()
        self._active_streams = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("the scripted model is not running")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL (ending in ``/v1``) to give Hermes."""
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> int:
        """Listen and serve on a daemon thread; returns the port."""
        if self._server is not None:
            return self.port
        self._stopping.clear()
        self._server = _Server((self.host, self._requested_port), self)
        self._thread = threading.Thread(target=self._server.serve_forever, name="scripted-model", daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        """Stop serving; open streams end at their next delta."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    @property
    def active_streams(self) -> int:
        """How many streamed responses are being sent right now (0 once Hermes has hung up)."""
        with self._lock:
            return self._active_streams

    @contextlib.contextmanager
    def streaming(self) -> Iterator[threading.Event]:
        """Count one streamed response while it is sent; yields the event set when the model stops."""
        with self._lock:
            self._active_streams += 1
        try:
            yield self._stopping
        finally:
            with self._lock:
                self._active_streams -= 1

    def push(self, reply: Reply | str) -> None:
        """Queue a custom reply (a ``str`` means plain text) for the next agent request (one that offers
        tools).

        Requests without tools (e.g. session titles) never consume it.
        """
        with self._lock:
            self._queue.append(Reply(text=reply) if isinstance(reply, str) else reply)

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The reply to one request (recorded): a pushed reply if it offers tools, else one planned from
        it."""
        with self._lock:
            self.requests.append(body)
            if self._queue and body.get("tools"):
                return self._queue.popleft()
        reply = plan_reply(body, slow_delay=self.slow_delay)
        if self.estimate_usage and reply.usage is None:
            prompt = len(json.dumps([body.get("messages"), body.get("tools")], default=str)) // 4
            completion = max(1, len("".join(reply.text_deltas() + reply.reasoning_deltas())) // 4)
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
            reply = replace(reply, usage=usage)
        return reply

    def __enter__(self) -> ScriptedModel:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the scripted model until SIGTERM/SIGINT; prints ``SCRIPTED_MODEL_READY port=N`` once listening."""
    parser = argparse.ArgumentParser(
        prog="python -m hermes_notebook._demo.scripted_model", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: pick a free one)")
    parser.add_argument("--delay", type=float, default=0.02, help="seconds between deltas")
    parser.add_argument("--slow-delay", type=float, default=0.25, help="seconds between SLOW deltas")
    parser.add_argument("-v", "--verbose", action="store_true", help="log each request to stderr")
    args = parser.parse_args(argv)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the scripted model only binds loopback addresses")
    model = ScriptedModel(
        args.host, args.port, delay=args.delay, slow_delay=args.slow_delay, verbose=args.verbose
    )
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    port = model.start()
    print(f"SCRIPTED_MODEL_READY port={port}", flush=True)
    done.wait()
    model.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
