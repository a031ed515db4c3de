"""An agent outside the kernel: its envelopes in from a transport, the host's envelopes out.

Like MCP's python-sdk, a connection is three layers: the wire models (``protocol``), a session
(``RemoteAgent``, here) and a transport that only moves text (``_transport.Transport``: stdio,
WebSocket, in memory). The session, whatever the transport:

- gives every message to the host as the text it arrived as, so an agent in another process
  is checked exactly like one in the kernel: the host is the authority (H2, H3);
- speaks for one agent id (H41): ``agent_id=`` (or the one a listener connection asked for),
  else the ``sender.id`` of the first envelope naming a free one; an id the kernel or another
  connection speaks for is refused (``agent_conflict``, _identity.py), to this connection
  alone, and said on its line in the host's view; so a process cannot act, nor hear, as
  another agent;
- sends ``client.inventory`` on every connection and reconnection (C1), to it alone, then
  every envelope the host addresses to its agent or to no one in particular, and the
  refusals of its own messages (H3); an agent that does not read is hung up on (H42);
- has one set of status words for every transport (``STATUSES``).

It needs of the host only ``SessionHost``, a small interface the Host satisfies through an
adapter (_host.py): nothing here imports the Host.

Where the host is used. The host and its widget belong to the kernel's thread (comm messages
and trait changes are not thread-safe; the widget's flush is an event-loop callback), while
a transport reports from threads of its own (a pipe's reader, a listener's I/O loop). So what
a transport reports waits in the session's inbox and is handed over, in order, with
``call_soon_threadsafe`` to the event loop that was running where the connection was made (a
notebook cell); with no loop there (a script, pytest) it runs at once under the host's lock,
or on a worker thread when the transport's thread must never wait for the host (a listener's
one I/O thread): ``HostThread`` and ``Worker``, _threads.py, the one home of that rule. Past
``INBOX_SIZE`` waiting, the transport is asked to pause reading, so a
flooding agent is held back by its own pipe or socket instead of the kernel's memory.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from functools import partial
from typing import Any, Final, Protocol

from ..core._identity import Identities
from ..protocol import rules
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._json import dumps, loads
from ..protocol._validate import Limits, readable_id, readable_type
from ..runtime._threads import HostThread
from ._transport import INBOX_SIZE, OUTBOX_CHARS, Transport

__all__ = ["ENDED", "STATUSES", "RemoteAgent", "SessionHost"]

logger = logging.getLogger("lineup_jupyter")

# One set of words for every transport (the host's view and ``host.remote_agents`` show them).
STATUSES: Final = (
    "connecting",  # not connected yet (a WebSocket being dialled, a process starting)
    "connected",  # envelopes flow both ways
    "disconnected",  # the connection dropped; the transport connects again (a dialled one)
    "ended",  # the agent's side ended it for good (a process exited, a connection left)
    "closed",  # the host ended it: close(), or the agent broke a rule (H41, H42)
)
ENDED: Final = frozenset({"ended", "closed"})


class Subscribed(Protocol):
    def close(self) -> None: ...


class SessionHost(Protocol):
    """What a session needs of the host; the Host satisfies it (an adapter in _host.py)."""

    @property
    def limits(self) -> Limits: ...

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """The host's lock: what the session checks and does under it is one step."""

    @property
    def identities(self) -> Identities:
        """Which endpoint speaks for which agent id (H41); used under ``lock``."""

    @property
    def inventory(self) -> dict[str, Any]: ...

    def receive(self, raw: str | bytes, endpoint: object) -> None:
        """``Host.receive`` for a message from ``endpoint``."""

    def send(
        self, type_: str, payload: dict[str, Any], *, to: str | None, endpoint: object
    ) -> None:
        """Send an envelope to ``endpoint`` only (addressed to agent ``to``, if any)."""

    def record_refused(self, shown: dict[str, Any], error: dict[str, Any]) -> None:
        """Record in the history a message refused before the host could read it."""

    def subscribe(self, callback: Callable[[dict[str, Any]], None], endpoint: object) -> Subscribed:
        """Every envelope sent to no one in particular, or to ``endpoint``."""

    def track(self, session: RemoteAgent) -> None:
        """List the session in the host's view (and ``host.remote_agents``)."""

    def changed(self) -> None:
        """A session's status, agent id or problem changed: the view redraws its line."""


class RemoteAgent:
    """An agent outside the kernel: the session of one agent, over any transport.

    Made by ``host.connect_process``, ``host.connect_websocket``, or an agent connecting to
    ``host.listen_websocket``. ``agent_id`` is the agent it speaks for (None until the first
    envelope names it, H41); ``status`` is one of ``STATUSES``; ``problem`` the last thing
    that went wrong; ``close()`` ends it.
    """

    def __init__(
        self,
        host: SessionHost,
        transport: Transport,
        *,
        agent_id: str | None = None,
        host_thread: HostThread | None = None,
    ) -> None:
        if agent_id is not None and readable_id(agent_id) is None:
            raise UsageError(f"[lineup] agent id {agent_id!r} must match {rules.ID_PATTERN} (M1)")
        self.describe = transport.describe  # what it is, for messages: "process 'python a.py'"
        self.dropped = 0  # envelopes for this agent that came while it was not connected
        self.problem: str | None = None  # the last thing that went wrong with the connection
        self._host = host
        self._transport = transport
        self._agent_id = agent_id
        self._host_thread = host_thread or HostThread()
        self._state = "connecting"
        self._lock = threading.Lock()
        self._inbox: deque[Callable[[], None]] = deque()
        self._paused = False
        self._scheduled = False
        self._drain_lock = threading.RLock()
        self._closed = threading.Event()
        # Which connection may be sent to: the one the transport has up (_current, set on its
        # thread) and the one whose opening the session has handled (_up, on the host's). Only
        # when they are the same one: nothing meant for a lost connection reaches the next
        # one ahead of its inventory (C1).
        self._connections = 0
        self._current: int | None = None
        self._up: int | None = None
        self._hung_up: str | None = None  # why the host hung up on this connection (H41, H42)
        self._troubled = False
        if agent_id is not None:  # H41: refused at once when the kernel or another has it
            with host.lock:
                try:
                    host.identities.claim(agent_id, self)
                except ProtocolError as error:
                    raise UsageError(f"[lineup] {error.message}") from None
        self._subscription = host.subscribe(self._on_envelope, endpoint=self)
        try:
            transport.start(_Sink(self))
        except BaseException:
            self._subscription.close()
            self._release()
            raise
        host.track(self)  # the host's view lists it

    @property
    def agent_id(self) -> str | None:
        """The agent this connection speaks for; None until its first envelope (H41)."""
        return self._agent_id

    @property
    def status(self) -> str:
        """One of ``STATUSES``: connecting, connected, disconnected, ended or closed."""
        return self._state

    def view(self) -> dict[str, Any]:
        """What the host's view shows of this connection: who, how, its status, and the
        last problem (an exit code and stderr, a dropped connection), if any."""
        return {
            "agent_id": self._agent_id,
            "via": self.describe,
            "status": self.status,
            "problem": self.problem,
        }

    def close(self) -> None:
        """Stop talking to this agent and end its transport. Closing twice does nothing.
        Never waits: the bus may be calling."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
            self._up = None
            self._inbox.clear()
        self._state = "closed"
        self._subscription.close()
        self._release()
        self._transport.close()
        self._host.changed()

    def __enter__(self) -> RemoteAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(agent_id={self._agent_id!r}, via={self.describe!r}, "
            f"status={self.status!r})"
        )

    def _name(self) -> str:
        return f"agent {self._agent_id!r} ({self.describe})" if self._agent_id else self.describe

    def _release(self) -> None:
        """The agent id is free for the next connection that claims it (H41)."""
        with self._host.lock:
            self._host.identities.release(self)

    # ---- from the transport's thread to the host's ---------------------------------------

    def _feed(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the host's thread after what is already waiting; never blocks."""
        defers = self._host_thread.defers()
        with self._lock:
            if self._closed.is_set():
                return
            self._inbox.append(work)
            pause = len(self._inbox) >= INBOX_SIZE and not self._paused
            self._paused = self._paused or pause
            drain = not (defers and self._scheduled)  # a drain is already on its way
            self._scheduled = self._scheduled or defers
        if pause:
            self._transport.pause_reading()
        if drain:
            self._host_thread.call(self._drain)

    def _drain(self) -> None:
        while True:
            with self._lock:
                self._scheduled = False
            with self._drain_lock:  # one drain at a time keeps the agent's order
                for _ in range(INBOX_SIZE):
                    with self._lock:
                        work = self._inbox.popleft() if self._inbox else None
                        resume = self._paused and len(self._inbox) <= INBOX_SIZE // 2
                        self._paused = self._paused and not resume
                    if resume:
                        self._transport.resume_reading()
                    if work is None:
                        return
                    try:
                        work()
                    except Exception:  # a bug of ours must not stop the next message
                        logger.exception("[lineup] %s: handling a message failed", self._name())
            if self._host_thread.defers():
                # More are waiting: on a loop, run them on a later turn, so it serves the
                # kernel's other work (the widget, the user's cells) in between.
                with self._lock:
                    if self._scheduled:
                        return
                    self._scheduled = True
                self._host_thread.call(self._drain)
                return

    # ---- on the host's thread ---------------------------------------------------------------

    def _opened(self, connection: int, requested: str | None) -> None:
        """A connection is up: it hears the inventory before anything else (C1)."""
        with self._host.lock:  # nothing else is sent to this agent in between
            with self._lock:
                if self._closed.is_set() or self._current != connection:
                    return  # closed, or already lost: its lost() comes next
                self._up = connection
            self._hung_up = None
            if requested is not None and requested != self._agent_id:
                try:
                    self._host.identities.claim(requested, self)
                except ProtocolError as error:
                    self._state = "connected"
                    self._refuse_claim({}, requested, error)
                    self._hang_up(self.problem or error.message, refused=True)
                    return
                self._agent_id = requested
            self._state = "connected"
            self.problem = None  # whatever went wrong before this connection is over
            if self._troubled:
                logger.warning("[lineup] %s: connected", self._name())
                self._troubled = False
            self._host.changed()
            # To this connection alone: unbound, it has no agent id to address yet (H41), and
            # the other agents already have this revision (H42).
            self._send("lineup.v1.client.inventory", self._host.inventory)

    def _message(self, connection: int, raw: str | bytes) -> None:
        """One envelope as the agent sent it: checked for its sender, then the host's."""
        if self._up != connection:  # hung up on, or sent before a refusal took effect
            return
        host = self._host
        with host.lock:
            try:
                # The host's own parser: what it cannot read here, the host refuses too.
                value = loads(raw, max_bytes=host.limits.max_message_bytes)
            except ProtocolError:
                value = None
            claimed = _claimed_sender(value)
            if claimed is not None and claimed != self._agent_id:
                shown = value if isinstance(value, dict) else {}
                try:
                    host.identities.check(claimed, self)
                    if self._agent_id is not None:
                        raise ProtocolError(
                            "invalid",
                            "H41",
                            "$.sender.id",
                            f"this connection speaks for agent {self._agent_id!r}, not "
                            f"{claimed!r}; one connection carries one agent's envelopes.",
                        )
                except ProtocolError as error:
                    self._refuse_claim(shown, claimed, error)
                    return
                host.identities.claim(claimed, self)
                self._agent_id = claimed  # H41: the first envelope names the agent
                host.changed()
            host.receive(raw, self)

    def _refuse_claim(self, shown: dict[str, Any], claimed: str, error: ProtocolError) -> None:
        """An envelope in another agent's name (H41): refused to this connection alone, and
        its line in the host's view says so."""
        self._refuse(
            shown,
            error.with_refused(readable_id(shown.get("id")), readable_type(shown.get("type"))),
        )
        self.problem = f"refused an envelope in the name of {claimed!r}: {error.message}"
        self._host.changed()

    def _refuse(self, shown: dict[str, Any], error: ProtocolError) -> None:
        """Refuse what the transport itself could not pass on, the way the host refuses (H3):
        recorded in the history, and one lineup.v1.error to this connection's agent."""
        with self._host.lock:
            self._host.record_refused(shown, error.to_payload())
            self._send("lineup.v1.error", error.to_payload())

    def _refused(self, connection: int, shown: str, error: ProtocolError) -> None:
        if self._up == connection:
            self._refuse({"raw": shown}, error)

    def _send(self, type_: str, payload: dict[str, Any]) -> None:
        """Send to this connection only (its agent, if it named one): never to another."""
        self._host.send(type_, payload, to=self._agent_id, endpoint=self)

    def _trouble(self, why: str) -> None:
        if self._closed.is_set():
            return
        self.problem = why
        if not self._troubled:  # once per outage, not once per attempt
            self._troubled = True
            logger.warning(
                "[lineup] %s: %s (less and less often, until it answers or close() is called)",
                self._name(),
                why,
            )
        self._host.changed()

    def _lost(self, why: str, final: bool, clean: bool) -> None:
        """A connection ended; ``final`` when no other will follow. A ``clean`` end (an
        agent process that exited with code 0) is logged as info, not a warning."""
        with self._lock:
            self._up = None
        if final:
            self._subscription.close()
            self._release()
        if self._closed.is_set():
            return  # the host closed it: nothing to report
        if self._hung_up is not None:  # the host hung up (H41, H42): that is the story
            self.problem = self._hung_up
            self._state = "closed" if final else "disconnected"
        else:
            self._state = "ended" if final else "disconnected"
            self.problem = None if clean else why
            level = logging.INFO if clean else logging.WARNING
            logger.log(level, "[lineup] %s: %s", self._name(), why)
        self._host.changed()

    def _hang_up(self, why: str, *, refused: bool = False) -> None:
        """End this connection because of the agent (H41, H42); its line says why."""
        with self._lock:
            self._up = None
        self._hung_up = why
        self.problem = why
        self._state = "disconnected"
        self._transport.hang_up(why, refused=refused)
        self._host.changed()

    def _on_envelope(self, envelope: dict[str, Any]) -> None:
        """The bus's callback (on the host's thread): queue what is for this agent."""
        target = envelope.get("target")
        target_id = target.get("id") if isinstance(target, dict) else None
        if target_id is not None and target_id != self._agent_id:
            return
        with self._lock:
            up = self._up is not None and self._up == self._current
            queued = not up or self._transport.send(dumps(envelope))
        if not up:
            self.dropped += 1
        elif not queued:
            why = (
                f"it did not read what the host sent (more than {OUTBOX_CHARS} characters "
                "were waiting), so the connection was closed rather than let messages be lost "
                "(H42)."
            )
            logger.warning("[lineup] %s: %s", self._name(), why)
            self._hang_up(why)


class _Sink:
    """What the session's transport reports to (``_transport.Sink``): every call is queued
    for the host's thread, in order, and returns at once."""

    def __init__(self, session: RemoteAgent) -> None:
        self._session = session

    def opened(self, agent_id: str | None = None) -> None:
        session = self._session
        with session._lock:
            session._connections += 1
            session._current = connection = session._connections
        session._feed(partial(session._opened, connection, agent_id))

    def message(self, text: str | bytes) -> None:
        session = self._session
        session._feed(partial(session._message, session._current or 0, text))

    def refused(self, shown: str, error: ProtocolError) -> None:
        session = self._session
        session._feed(partial(session._refused, session._current or 0, shown, error))

    def trouble(self, why: str) -> None:
        self._session._feed(partial(self._session._trouble, why))

    def lost(self, why: str, *, final: bool, clean: bool = False) -> None:
        session = self._session
        with session._lock:  # from now on nothing more is sent to this connection
            session._current = None
        session._feed(partial(session._lost, why, final, clean))


def _claimed_sender(value: Any) -> str | None:
    """The agent id a parsed message claims to come from, if it names one readably."""
    if not isinstance(value, dict):
        return None
    sender = value.get("sender")
    if not isinstance(sender, dict) or sender.get("kind") != "agent":
        return None
    return readable_id(sender.get("id"))
