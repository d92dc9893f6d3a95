"""``DashboardCore``: the Dashboard protocol without I/O. Frames in; replies, listener items and frames out.

In the spirit of websockets' sans-I/O ``protocol.py``: :meth:`DashboardCore.receive` takes one text frame and
updates the routing state it owns (sessions and their open turns, JSON-RPC ids awaiting a reply, open server
requests, per-session seq watermarks, the server's detected features). What a frame produces waits in queues
that the asyncio shell (:class:`~.connection.DashboardConnection`) drains after each frame:

- :meth:`data_to_send`: frames to send now (refusals of server requests nobody here can show);
- :meth:`replies_received`: ``(handle, result, error)`` for each reply to a request (``calls.request``);
- :meth:`items_received`: ``(listeners, ListenerItem)`` pairs for ``listen`` callbacks;
- :meth:`changes_received`: a newer server's refetch broadcasts (``sessions``, ``cron``...);
- :meth:`faults_received`: frames that do not parse or fit, as
  :class:`~hermes_notebook.errors.HermesProtocolError`.

Nothing here awaits, sleeps, reads a clock or touches a socket, so the real transcripts of both servers replay
through it without one (tests/client/dashboard/test_dashboard_core.py). Protocol notes:
docs/protocol/dashboard.md (§n) and docs/protocol/dashboard-newer.md. A turn is opened for its session before
its ``prompt.submit`` goes out (its events can beat the reply, §8.2); how a session's events find their turn
is :mod:`.routing`'s.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import HermesError, HermesProtocolError
from ...turns import TransformOutput, TurnFolder
from ...turns.events import Event
from .prompts import Prompts
from .routing import SessionState
from .rpc import PendingCalls, Reply, encode_error
from .session import Listener, ListenerItem, SessionRef
from .turn_state import TurnState

__all__ = ["METHOD_NOT_FOUND", "DashboardCore", "Features"]

METHOD_NOT_FOUND = -32601

_scan = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
_from_frame = Event.from_dashboard_frame


@dataclass(frozen=True, slots=True)
class Features:
    """What the server behind the current socket was seen to do (from its frames, never a version string)."""

    server_requests: frozenset[str] | None  # methods it sends as server requests; None: 0.19.0 (events)
    replay_epoch: str | None  # its replay scope (newer servers, after gateway.ready)
    restarted: bool  # the last gateway.ready named another replay epoch than the one before it
    clarify_locks: bool | None  # clarify.lock: None untried, False refused


class DashboardCore:
    """The routing state of one Dashboard connection, across its sockets, and the frame handling that moves
    it.

    ``output_waiting`` is True while a queue holds something; the shell checks it after each frame (one
    attribute read on the per-frame path) and drains the queues.
    """

    def __init__(self, transform_output: TransformOutput | None = None) -> None:
        self.transform_output = transform_output
        self.reports_running = False  # its session.info was seen to say whether a session is running
        self.sessions: dict[str, SessionState] = {}  # stored id -> routing state (kept across sockets)
        self.by_live: dict[str, SessionState] = {}  # live id -> routing state (the current socket only)
        self.listeners: dict[str, list[Listener]] = {}  # stored id -> callbacks (copy-on-write lists)
        self.prompts = Prompts()  # open server requests, and the features they come with
        self.generation = 0  # counts sockets; a session bound on an older one must be resumed again
        # Features of the server behind the current socket (detected, never read from a version string).
        self.ready: Mapping[str, Any] = {}  # gateway.ready payload
        self.restarted = False  # the last gateway.ready named a replay epoch other than the one before it
        self._last_epoch: str | None = None
        self.calls = PendingCalls()  # JSON-RPC ids awaiting a reply, with the caller's handles
        self._outgoing: list[str] = []
        self._replies: list[Reply] = []
        self._items: list[tuple[list[Listener], ListenerItem]] = []
        self._changes: list[str] = []
        self._faults: list[Exception] = []
        self.output_waiting = False

    # --- features ------------------------------------------------------------------------------------------

    @property
    def replay_epoch(self) -> str | None:
        """The server process's replay scope (newer Dashboards; None on 0.19.0 or before
        ``gateway.ready``)."""
        epoch = self.ready.get("replay_epoch")
        return epoch if isinstance(epoch, str) else None

    @property
    def server_requests(self) -> bool:
        """True when the server behind this socket sends prompts as server requests (newer Dashboards)."""
        return self.prompts.methods is not None

    @property
    def features(self) -> Features:
        """The server's detected features, as one value."""
        prompts = self.prompts
        return Features(prompts.methods, self.replay_epoch, self.restarted, prompts.clarify_locks)

    def new_socket(self) -> None:
        """A socket opened: live ids and the server's features belong to the socket they came on."""
        self.generation += 1
        self.by_live.clear()
        self.ready = {}
        self.reports_running = False
        self.prompts.new_socket()

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
        self.output_waiting = bool(
            self._outgoing or self._replies or self._items or self._changes or self._faults
        )

    def deliver(self, listeners: list[Listener], item: ListenerItem) -> None:
        """Queue ``item`` for ``listeners`` (called by the session routing)."""
        self._items.append((listeners, item))
        self.output_waiting = True

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
                self.prompts.withdraw(event.payload.get("id"))
            elif etype == "message.complete" and self.prompts.open:
                self.prompts.settle_session(
                    session.ref.live_id
                )  # settled elsewhere (another client), no cancel
            seq = obj["params"].get("seq")
            if type(seq) is int:  # newer Dashboards number every session event (per live id)
                session.feed_seq(seq, event)
            else:
                session.feed(event)
        elif not sid:
            self._broadcast(event)
        # else: a session this socket does not route (resumed by another client): ignored.

    def _reply(self, obj: dict[str, Any]) -> None:
        self._replies.append(self.calls.reply(obj))
        self.output_waiting = True

    def _broadcast(self, event: Event) -> None:
        """Session-less events: ``gateway.ready`` (features) and newer servers' ``*.changed`` refetch
        signals."""
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
        taken = self.prompts.take(request_id, method, obj.get("params"))
        if taken is not None:
            request, event = taken
            session = self.by_live.get(request.session_id)
            if session is not None:
                session.feed(event)
            # else: the server only asks clients attached to the session, so a resume of it is under way (its
            # reply was read, its binding not yet made): bind() shows the prompt. Never refused: an error
            # answer would withdraw it for every client.
            return
        # Answer at once: the agent would otherwise wait out its timeout on a prompt nobody here can show.
        self._outgoing.append(
            encode_error(request_id, METHOD_NOT_FOUND, f"method not handled by this client: {method}")
        )
        self.output_waiting = True

    def answered(self, request_id: str, response: str, session: SessionState | None = None) -> None:
        """An answer is on the wire: close its server request (if any) and show it answered on its turn (in
        ``session``, else whichever open turn holds the interaction; sudo/secret values redacted by the
        model)."""
        self.prompts.open.pop(request_id, None)
        self.mark_answered(request_id, response, session)

    def mark_answered(self, request_id: str, value: str, session: SessionState | None = None) -> None:
        """Record an answer on the open turn holding the interaction (in ``session`` when given)."""
        for candidate in (session,) if session is not None else self.sessions.values():
            if candidate.answer(request_id, value):
                return

    # --- sessions ------------------------------------------------------------------------------------------

    def bind(self, ref: SessionRef) -> SessionState:
        """Route ``ref``'s live id to its session on the current socket (created on first sight)."""
        session = self.sessions.get(ref.stored_id)
        if session is None or session.ref is not ref:
            session = self.sessions[ref.stored_id] = SessionState(self, ref)
            session.epoch = self.replay_epoch
        session.generation = self.generation
        session.listeners = self.listeners.get(ref.stored_id)
        self.by_live[ref.live_id] = session
        for event in self.prompts.of_session(ref.live_id):
            session.feed(event)  # prompts that arrived before this binding (the model ignores known ids)
        return session

    def live(self, ref: SessionRef) -> SessionState | None:
        """``ref``'s routing state if it is bound on the current socket; None means resume it first."""
        session = self.by_live.get(ref.live_id)
        return session if session is not None and session.generation == self.generation else None

    def expire(self, session: SessionState) -> None:
        """The server no longer knows the session's live id (4001, §2.1): the next use resumes it."""
        session.generation = -1

    def is_bound(self, stored_id: str, *, caught_up: bool = False) -> bool:
        """True when the session is bound on the current socket (and, with ``caught_up``, not waiting for a
        catch-up)."""
        session = self.sessions.get(stored_id)
        return (
            session is not None
            and session.generation == self.generation
            and not (caught_up and session.suspended)
        )

    def resumed(self, key: str, result: Mapping[str, Any]) -> tuple[SessionRef, SessionState, bool]:
        """Apply a ``session.resume`` reply: ``(ref, session, catch_up)``.

        The ref a caller holds is updated in place (the live id may change, §5). ``catch_up`` is True when a
        newer server can replay what this session missed: same replay epoch, same live id, events seen before;
        live events are then held back until the gap is filled (:meth:`catch_up`).
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
            session is not None
            and epoch is not None
            and session.epoch == epoch
            and old_live == ref.live_id
            and session.last_seq > 0
        )
        if session is not None and catch_up:
            session.buffer = []  # live events from now on wait until the gap is filled
        return ref, self.bind(ref), catch_up

    def catch_up(
        self,
        session: SessionState,
        resumed: Mapping[str, Any],
        same_stream: bool,
        since: object = None,
        failure: HermesError | None = None,
    ) -> None:
        """Finish a (re)resume: fill the event gap from ``since`` (the ``session.events.since`` answer, asked
        only when :meth:`resumed` said ``catch_up``) or end turns kept across the drop, restore the prompts
        still open on the server, and start the turn still running there (docs/protocol/dashboard-newer.md
        §4)."""
        source = session.settle(same_stream, self.replay_epoch, since, failure) or resumed
        for event in self.prompts.restore(source.get("open_requests")):
            session.feed(event)
        inflight = resumed.get("inflight")
        if resumed.get("running") and session.idle:
            session.seed_inflight(inflight if isinstance(inflight, Mapping) else {})

    def set_listeners(self, stored_id: str, callbacks: list[Listener]) -> None:
        """Replace the session's ``listen`` callbacks (an empty list removes them)."""
        if callbacks:
            self.listeners[stored_id] = callbacks
        else:
            self.listeners.pop(stored_id, None)
        session = self.sessions.get(stored_id)
        if session is not None:
            session.listeners = callbacks or None

    def rename(self, session: SessionState, old: str) -> None:
        """The session's stored id rotated from ``old`` (auto-compression): its state and listeners follow."""
        stored = session.ref.stored_id
        self.sessions[stored] = self.sessions.pop(old, session)
        if old in self.listeners:
            self.set_listeners(stored, self.listeners.pop(old) + self.listeners.get(stored, []))

    def forget_session(self, stored_id: str) -> str | None:
        """Stop routing a session (deleted): its turns end ``cancelled``; returns its live id if bound
        here."""
        self.set_listeners(stored_id, [])
        session = self.sessions.pop(stored_id, None)
        if session is None:
            return None
        session.end_turns("cancelled", None, None)
        if session.generation != self.generation:
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
            if lossless and not session.idle:
                session.suspended = True
            else:
                session.fail_turns(text)
        self.by_live.clear()

    def give_up(self, text: str) -> None:
        """Turns kept across a drop fail with ``text`` (the server stayed away too long to catch up)."""
        for session in self.sessions.values():
            if session.suspended:
                session.fail_turns(text)

    # --- turns ---------------------------------------------------------------------------------------------

    def open_turn(self, session: SessionState, text: str, turn_id: str | None = None) -> TurnState:
        """Open a turn before its ``prompt.submit`` goes out: its first events can beat the reply (§8.2)."""
        turn_id = turn_id or uuid.uuid4().hex[:12]
        folder = TurnFolder(
            turn_id, transform_output=self.transform_output, compressions=session.compressions
        )
        turn = TurnState(session.ref, turn_id, text, folder)
        session.open_marker(turn)  # a compression since the previous turn
        session.turns.append(turn)
        return turn

    def running_turns(self) -> list[TurnState]:
        """Every submitted turn that has not ended, oldest session first."""
        return [turn for session in self.sessions.values() for turn in session.turns if not turn.done]

    def held(self, stored_id: str) -> bool:
        """True while Hermes still holds the session after a turn (``message.complete`` seen, no
        ``session.info`` saying ``running: false`` since), on a server seen to report it (``settling.py``)."""
        session = self.sessions.get(stored_id)
        return session is not None and session.held and self.reports_running

    @property
    def takes_queued(self) -> bool:
        """The server takes ``prompt.submit``'s ``queued`` key (newer Dashboards: they send a replay epoch;
        0.19.0 rejects unknown keys with 4000)."""
        return self.replay_epoch is not None

    def submit_params(self, session: SessionState, text: str) -> dict[str, Any]:
        """``prompt.submit`` params. A newer server redirects a busy session's running turn by default, and
        interrupts it for a prompt landing after a turn's ``message.complete`` while Hermes still holds the
        session; ``queued`` keeps 0.19.0's "runs after the current turn" without interrupting anything (a key
        only newer servers know: sent only to them, as 4000 rejects unknown keys)."""
        params: dict[str, Any] = {"session_id": session.ref.live_id, "text": text}
        if self.takes_queued and (session.held or not session.idle):
            params["queued"] = True
        return params

    def close(self) -> None:
        """The connection closed: every open turn ends ``cancelled`` (no error) and listeners are dropped."""
        for session in self.sessions.values():
            session.end_turns("cancelled", None, None)
        self.listeners.clear()
