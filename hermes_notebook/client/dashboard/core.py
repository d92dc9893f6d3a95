"""``DashboardCore``: the Dashboard protocol without I/O. Frames in; replies, listener items and frames out.

In the spirit of websockets' sans-I/O ``protocol.py``: :meth:`DashboardCore.receive` takes one text frame and
updates the routing state it owns (sessions and their open turns, JSON-RPC ids awaiting a reply, open server
requests, per-session seq watermarks, the server's detected features). What a frame produces waits in queues
that the asyncio shell (:class:`~.connection.DashboardConnection`) drains after each frame:

- :meth:`data_to_send`: frames to send now (refusals of server requests nobody here can show);
- :meth:`replies_received`: ``(handle, result, error)`` for each reply to a :meth:`request`;
- :meth:`items_received`: ``(listeners, ListenerItem)`` pairs for ``listen`` callbacks;
- :meth:`changes_received`: a newer server's refetch broadcasts (``sessions``, ``cron``...);
- :meth:`faults_received`: frames that do not parse or fit, as :class:`~hermes_notebook.errors.HermesProtocolError`.

Nothing here awaits, sleeps, reads a clock or touches a socket, so the real transcripts of both servers replay
through it without one (tests/test_dashboard_core.py). Protocol notes: docs/protocol/dashboard.md (§n) and
docs/protocol/dashboard-newer.md.

Routing (0.19.0 events carry no turn id, §8.2): a turn is opened for its session before its ``prompt.submit``
goes out, and a session's events go, in order, to its oldest open turn. A busy session answers ``queued`` and
runs the text as its own turn after the running one (§3.1, §7). Events of a session with no open turn (goal
continuations, background notifications, a turn still running after a reconnect: §7 "Synthetic turns") are
folded on their own and handed to listeners. Newer servers number events (``seq``): duplicates are dropped.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...errors import (
    HermesError,
    HermesGatewayClosedError,
    HermesProtocolError,
    HermesRPCError,
    HermesUsageError,
)
from ...turns import TransformOutput, TurnFolder
from ...turns.events import Event
from .rpc import encode_error, encode_request, encode_result, rpc_error
from .server_requests import PROMPT_METHODS, ServerRequest, answer_result, prompt_event
from .session import Listener, ListenerItem, SessionRef, _Session
from .turn import Turn

if TYPE_CHECKING:
    from .connection import DashboardConnection

__all__ = ["METHOD_NOT_FOUND", "DashboardCore"]

METHOD_NOT_FOUND = -32601
#: ``(handle, result, error)``: the handle given to :meth:`DashboardCore.request` and what its reply said.
Reply = tuple[Any, Any, HermesRPCError | None]

_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_from_frame = Event.from_dashboard_frame


class DashboardCore:
    """The routing state of one Dashboard connection, across its sockets, and the frame handling that moves it.

    ``output_waiting`` is True while a queue holds something; the shell checks it after each frame (one
    attribute read on the per-frame path) and drains the queues.
    """

    def __init__(self, transform_output: TransformOutput | None = None) -> None:
        self.transform_output = transform_output
        self.sessions: dict[str, _Session] = {}  # stored id -> routing state (kept across sockets)
        self.by_live: dict[str, _Session] = {}  # live id -> routing state (the current socket only)
        self.listeners: dict[str, list[Listener]] = {}  # stored id -> callbacks (copy-on-write lists)
        self.open_requests: dict[str, ServerRequest] = {}  # srq id -> request, until answered or withdrawn
        self.generation = 0  # counts sockets; a SessionRef bound on an older one must be resumed again
        # Features of the server behind the current socket (detected, never read from a version string).
        self.ready: Mapping[str, Any] = {}  # gateway.ready payload
        self.server_request_methods: frozenset[str] | None = None  # client.capabilities reply; None = 0.19.0
        self.restarted = False  # the last gateway.ready named a replay epoch other than the one before it
        self.clarify_locks: bool | None = None  # clarify.lock on this socket: None untried, False refused
        self._last_epoch: str | None = None
        self._next_id = 0  # JSON-RPC ids keep counting across sockets: a late reply never matches a new request
        self._pending: dict[int, tuple[str, Any]] = {}  # id -> (method, the caller's handle)
        self._outgoing: list[str] = []
        self._replies: list[Reply] = []
        self._items: list[tuple[list[Listener], ListenerItem]] = []
        self._changes: list[str] = []
        self._faults: list[Exception] = []
        self.output_waiting = False

    # --- features ------------------------------------------------------------------------------------------

    @property
    def replay_epoch(self) -> str | None:
        """The server process's replay scope (newer Dashboards; None on 0.19.0 or before ``gateway.ready``)."""
        epoch = self.ready.get("replay_epoch")
        return epoch if isinstance(epoch, str) else None

    @property
    def server_requests(self) -> bool:
        """True when the server behind this socket sends prompts as server requests (newer Dashboards)."""
        return self.server_request_methods is not None

    def new_socket(self) -> None:
        """A socket opened: live ids and the server's features belong to the socket they came on."""
        self.generation += 1
        self.by_live.clear()
        self.ready = {}
        self.server_request_methods = None
        self.clarify_locks = None

    def set_capabilities(self, result: object) -> None:
        """The ``client.capabilities`` reply: which server request methods this server sends."""
        methods = result.get("server_requests") if isinstance(result, Mapping) else None
        self.server_request_methods = frozenset(
            m for m in (methods if isinstance(methods, list) else PROMPT_METHODS) if isinstance(m, str)
        )

    # --- outputs -------------------------------------------------------------------------------------------

    def data_to_send(self) -> list[str]:
        """Frames produced by received ones (refusals), in order; the queue is emptied."""
        out, self._outgoing = self._outgoing, []
        self._settle_flag()
        return out

    def replies_received(self) -> list[Reply]:
        """``(handle, result, error)`` per reply, ``error`` a :class:`HermesRPCError` or None; emptied."""
        out, self._replies = self._replies, []
        self._settle_flag()
        return out

    def items_received(self) -> list[tuple[list[Listener], ListenerItem]]:
        """Listener items to deliver, each with the callbacks listening at the time; emptied."""
        out, self._items = self._items, []
        self._settle_flag()
        return out

    def changes_received(self) -> list[str]:
        """Refetch broadcasts (``sessions.changed`` -> ``sessions``); emptied."""
        out, self._changes = self._changes, []
        self._settle_flag()
        return out

    def faults_received(self) -> list[Exception]:
        """Frames that could not be handled, as errors naming what was wrong; emptied."""
        out, self._faults = self._faults, []
        self._settle_flag()
        return out

    def _settle_flag(self) -> None:
        self.output_waiting = bool(self._outgoing or self._replies or self._items or self._changes or self._faults)

    def deliver(self, listeners: list[Listener], item: ListenerItem) -> None:
        """Queue ``item`` for ``listeners`` (called by the session routing)."""
        self._items.append((listeners, item))
        self.output_waiting = True

    # --- requests ------------------------------------------------------------------------------------------

    def request(self, method: str, params: Mapping[str, Any] | None, handle: Any = None) -> tuple[int, str]:
        """Reserve an id for a request and return ``(id, frame)``; its reply comes back with ``handle``."""
        self._next_id += 1
        request_id = self._next_id
        self._pending[request_id] = (method, handle)
        return request_id, encode_request(request_id, method, params)

    def forget_request(self, request_id: int) -> None:
        """The caller stopped waiting (sent nothing, cancelled or timed out): a late reply is a fault."""
        self._pending.pop(request_id, None)

    def fail_requests(self) -> list[tuple[str, Any]]:
        """Every request still waiting, as ``(method, handle)``, forgotten (the socket is gone)."""
        pending, self._pending = self._pending, {}
        return list(pending.values())

    # --- receiving (hot path) ------------------------------------------------------------------------------

    def receive(self, raw: str | bytes) -> None:
        """One inbound frame: an event, a server request, a reply, or a fault; never raises."""
        try:
            if type(raw) is not str:
                raise HermesProtocolError(f"the Dashboard sent a binary frame of {len(raw)} bytes")
            # The C scanner directly: json.loads adds two Python-level calls per frame, and the server never
            # pads frames (send_text(json.dumps(obj)), §2), so anything after the object is a fault.
            obj, end = _scan(raw, 0)
            if end != len(raw) and raw[end:].strip():
                raise ValueError("extra data after the JSON value")
            if type(obj) is not dict:
                raise HermesProtocolError(f"the Dashboard sent a JSON {type(obj).__name__}, not an object")
            method = obj.get("method")
            if method == "event":
                self._event(obj)
            elif method is not None and "id" in obj:
                self._server_request(obj, method)
            elif "result" in obj or "error" in obj:
                self._reply(obj)
            else:
                raise HermesProtocolError(
                    f"the Dashboard sent a frame that is neither event nor reply: {raw[:120]!r}"
                )
        except Exception as exc:  # noqa: BLE001 - a bad frame must not end the read loop
            if isinstance(exc, (ValueError, StopIteration)) and not isinstance(exc, HermesError):
                exc = HermesProtocolError(f"the Dashboard sent a frame that is not JSON: {raw[:120]!r}")
            self._faults.append(exc)
            self.output_waiting = True

    def _event(self, obj: dict[str, Any]) -> None:
        event = _from_frame(obj)
        if event is None:
            raise HermesProtocolError("the Dashboard sent an event without params.type")
        sid = event.session_id
        session = self.by_live.get(sid) if sid else None
        if session is not None:
            etype = event.type
            if etype == "request.cancel":
                self.open_requests.pop(str(event.payload.get("id")), None)
            elif etype == "message.complete" and self.open_requests:
                self.forget_requests(session.ref.live_id)  # settled elsewhere (another client) without a cancel
            seq = obj["params"].get("seq")
            if type(seq) is int:  # newer Dashboards number every session event (per live id)
                session.feed_seq(seq, event)
            else:
                session.feed(event)
        elif not sid:
            self._broadcast(event)
        # else: a session this socket does not route (resumed by another client): ignored.

    def _reply(self, obj: dict[str, Any]) -> None:
        request_id = obj.get("id")
        entry = self._pending.pop(request_id, None) if type(request_id) is int else None
        if entry is None:
            raise HermesProtocolError(
                f"the Dashboard sent a reply for unknown request id {request_id!r}: "
                f"{str(obj.get('error') or obj.get('result'))[:120]}"
            )
        method, handle = entry
        error = obj.get("error")
        if error is not None:
            self._replies.append((handle, None, rpc_error(error, method)))
        else:
            self._replies.append((handle, obj.get("result"), None))
        self.output_waiting = True

    def _broadcast(self, event: Event) -> None:
        """Session-less events: ``gateway.ready`` (features) and newer servers' ``*.changed`` refetch signals."""
        kind = event.type
        if kind == "gateway.ready":
            self.ready = event.payload
            epoch = self.replay_epoch
            if epoch is not None:
                self.restarted = self._last_epoch is not None and epoch != self._last_epoch
                self._last_epoch = epoch
        elif kind.endswith(".changed"):
            self._changes.append(kind[: -len(".changed")])
            self.output_waiting = True

    # --- server requests (newer Dashboards) ----------------------------------------------------------------

    def _server_request(self, obj: Mapping[str, Any], method: object) -> None:
        """A prompt becomes an interaction of its session; anything else is refused at once."""
        request_id = obj.get("id")
        params = obj.get("params")
        if isinstance(request_id, str) and isinstance(method, str) and method in PROMPT_METHODS:
            request = ServerRequest(request_id, method, params if isinstance(params, Mapping) else {})
            event = prompt_event(request)
            if event is not None:
                self.open_requests[request_id] = request
                session = self.by_live.get(request.session_id)
                if session is not None:
                    session.feed(event)
                # else: the server only asks clients attached to the session, so a resume of it is under way
                # (its reply was read, its binding not yet made): bind() shows the prompt. Never refused: an
                # error answer would withdraw it for every client.
                return
        # Answer at once: the agent would otherwise wait out its timeout on a prompt nobody here can show.
        self._outgoing.append(
            encode_error(request_id, METHOD_NOT_FOUND, f"method not handled by this client: {method}")
        )
        self.output_waiting = True

    def answer_frame(self, request_id: str, response: str) -> str:
        """The result frame answering an open server request with the view's ``response`` string."""
        request = self.open_requests.get(request_id)
        if request is None:
            raise HermesUsageError(f"no pending interaction {request_id!r}")
        return encode_result(request_id, answer_result(request, response))

    def lock_params(self, request_id: str, response: str) -> list[dict[str, Any]] | None:
        """``clarify.lock`` params answering a multi-question clarify one question at a time, or None when the
        answer goes as one result frame (another prompt, one question, or a server without locks).

        Locks are acknowledged and kept by the server across a drop (docs/protocol/dashboard-newer.md §2.3);
        a result frame gets no reply, so an answer lost to a drop would vanish unnoticed. The last lock
        resolves the request.
        """
        request = self.open_requests.get(request_id)
        if request is None or request.method != "clarify" or not self.server_requests or self.clarify_locks is False:
            return None
        questions = request.params.get("questions")
        if not isinstance(questions, list) or len(questions) < 2:
            return None
        answers = answer_result(request, response)["answers"]
        return [{"request_id": request_id, "question_id": qid, "answer": value} for qid, value in answers.items()]

    def answered(self, request_id: str, response: str) -> None:
        """The answer to a server request is on the wire: close the request and record it on its turn."""
        self.open_requests.pop(request_id, None)
        self.mark_answered(request_id, response)

    def mark_answered(self, request_id: str, value: str) -> None:
        """Record an answer on the open turn holding the interaction (sudo/secret values redacted by the model)."""
        for session in self.sessions.values():
            found = session.find_interaction(request_id)
            if found is not None:
                folder, _, turn = found
                changes = folder.answer(request_id, value)
                if turn is not None and changes:
                    turn._push(changes)
                return

    def forget_requests(self, live_id: str) -> None:
        """Drop the open prompts of a session whose turn ended (settled elsewhere, without a cancel)."""
        for request_id in [k for k, r in self.open_requests.items() if r.session_id == live_id]:
            del self.open_requests[request_id]

    # --- sessions ------------------------------------------------------------------------------------------

    def bind(self, ref: SessionRef) -> _Session:
        """Route ``ref``'s live id to its session on the current socket (created on first sight)."""
        session = self.sessions.get(ref.stored_id)
        if session is None or session.ref is not ref:
            session = self.sessions[ref.stored_id] = _Session(self, ref)
            session.epoch = self.replay_epoch
        ref._generation = self.generation
        session.listeners = self.listeners.get(ref.stored_id)
        self.by_live[ref.live_id] = session
        for request in [r for r in self.open_requests.values() if r.session_id == ref.live_id]:
            event = prompt_event(request)
            if event is not None:
                session.feed(event)  # prompts that arrived before this binding (the model ignores known ids)
        return session

    def resumed(self, key: str, result: Mapping[str, Any]) -> tuple[SessionRef, _Session, bool]:
        """Apply a ``session.resume`` reply: ``(ref, session, catch_up)``.

        The ref a caller holds is updated in place (the live id may change, §5). ``catch_up`` is True when a
        newer server can replay what this session missed: same replay epoch, same live id, events seen before;
        live events are then held back until the gap is filled.
        """
        stored = str(result.get("session_key") or result.get("resumed") or key)
        session = self.sessions.get(stored) or self.sessions.get(key)
        ref = session.ref if session is not None else SessionRef(str(result["session_id"]), stored)
        old_live = ref.live_id
        ref.live_id = str(result["session_id"])
        ref.stored_id = stored
        info = result.get("info")
        if isinstance(info, Mapping) and info.get("title"):
            ref.title = str(info["title"])
        if self.by_live.get(old_live) is session and old_live != ref.live_id:
            self.by_live.pop(old_live, None)
        epoch = self.replay_epoch
        catch_up = (
            session is not None and epoch is not None and session.epoch == epoch and old_live == ref.live_id
            and session.last_seq > 0
        )
        if session is not None and catch_up:
            session.buffer = []  # live events from now on wait until the gap is filled
        return ref, self.bind(ref), catch_up

    def set_listeners(self, stored_id: str, callbacks: list[Listener]) -> None:
        if callbacks:
            self.listeners[stored_id] = callbacks
        else:
            self.listeners.pop(stored_id, None)
        session = self.sessions.get(stored_id)
        if session is not None:
            session.listeners = callbacks or None

    def forget_session(self, stored_id: str) -> str | None:
        """Stop routing a session (deleted): its turns end ``cancelled``; returns its live id if bound here."""
        self.set_listeners(stored_id, [])
        session = self.sessions.pop(stored_id, None)
        if session is None:
            return None
        session.end_turns("cancelled", None, None)
        if session.ref._generation != self.generation:
            return None
        self.by_live.pop(session.ref.live_id, None)
        return session.ref.live_id

    def has_suspended(self) -> bool:
        """True while some session keeps open turns across a drop."""
        return any(s.suspended for s in self.sessions.values())

    def maintained(self) -> list[str]:
        """Stored ids to bring back after a drop: listened sessions and sessions with turns kept open."""
        ids = list(self.listeners)
        ids.extend(k for k, s in self.sessions.items() if s.suspended and k not in self.listeners)
        return ids

    def dropped(self, text: str, lossless: bool) -> None:
        """The socket is gone: open turns fail with ``text``, or (``lossless``) wait for a catch-up."""
        for session in self.sessions.values():
            session.buffer = None
            if lossless and (session.turns or session.unsolicited is not None):
                session.suspended = True
            else:
                session.end_turns("error", lambda: HermesGatewayClosedError(text), text)
        self.by_live.clear()

    # --- turns ---------------------------------------------------------------------------------------------

    def open_turn(
        self, session: _Session, text: str, turn_id: str | None = None, owner: DashboardConnection | None = None
    ) -> Turn:
        """Open a turn before its ``prompt.submit`` goes out: its first events can beat the reply (§8.2)."""
        turn_id = turn_id or uuid.uuid4().hex[:12]
        folder = TurnFolder(turn_id, transform_output=self.transform_output, compressions=session.compressions)
        turn = Turn(owner, session.ref, turn_id, text, folder)
        session.open_marker(turn)  # a compression since the previous turn
        session.turns.append(turn)
        return turn

    def open_turns(self) -> list[Turn]:
        """Every submitted turn that has not ended, oldest session first."""
        return [turn for session in self.sessions.values() for turn in session.turns if not turn.done]

    def submit_params(self, session: _Session, text: str) -> dict[str, Any]:
        """``prompt.submit`` params. A newer server redirects a busy session's running turn by default;
        ``queued`` keeps 0.19.0's "runs after the current turn" (a key only newer servers know: sent only to
        them, as 4000 rejects unknown keys)."""
        params: dict[str, Any] = {"session_id": session.ref.live_id, "text": text}
        if self.replay_epoch is not None and (session.turns or session.unsolicited is not None):
            params["queued"] = True
        return params

    def drop_turn(self, session: _Session, turn: Turn) -> None:
        """A prompt the server refused, or dropped unstarted after our stop: its turn ends ``cancelled`` and takes
        no events."""
        if turn in session.turns:
            session.turns.remove(turn)
        turn._end("cancelled")

    def accept(self, session: _Session, turn: Turn, status: object) -> None:
        """Apply the ``prompt.submit`` reply's status: streaming, queued (merged) or steered (§3.1, §7)."""
        turn._on_reply(status)
        if turn._done or turn not in session.turns:
            return
        if status == "queued":
            # One queue slot per session: a second busy submit is merged into the queued text (§3.1), so it
            # runs, and ends, with the turn queued before it.
            earlier = [t for t in session.turns if t is not turn and t._status == "queued" and not t._started]
            if earlier:
                session.turns.remove(turn)
                turn._follow(earlier[-1])
        elif status in ("steered", "redirected"):
            # busy_input_mode=steer: the text joined the running turn; no turn of its own follows (§7).
            session.turns.remove(turn)
            if session.turns:
                turn._follow(session.turns[0])
            else:
                turn._end("complete")

    def end_all(self, status: str) -> None:
        """End every open turn without an error (``close()``)."""
        for session in self.sessions.values():
            session.end_turns(status, None, None)
