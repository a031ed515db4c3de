"""An agent outside the kernel with no process and no socket: both ends of a connection in
memory, for tests (``ScriptedUser.connect_memory``) and a headless host.

``connect_memory(host)`` makes a session (``RemoteAgent``) over a ``MemoryTransport`` and
returns the other end, an ``OutsideAgent``: what a process would write to its stdout
(``send``) and read from its stdin (``receive``, ``expect``), driven by the caller. The
session cannot tell it from a process: the same inventory first (C1), the same identity
rules (H41), the same bounded queue for an agent that does not read (H42), the same
statuses. Its queue is the session's bound (``OUTBOX_CHARS``), like a pipe's buffer.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from ._remote import RemoteAgent, SessionHost
from ._transport import OUTBOX_CHARS, Sink

__all__ = ["MemoryTransport", "OutsideAgent", "connect_memory"]

GUARD = 30.0  # seconds receive() waits by default: a guard against a hang, never a measure


class OutsideAgent:
    """The agent's end of an in-memory connection. ``session`` is the host's end (the
    ``RemoteAgent`` listed in ``host.remote_agents``); ``hung_up`` says why the host ended
    the connection, once it has."""

    session: RemoteAgent

    def __init__(self) -> None:
        self.hung_up: str | None = None
        self._unread: deque[str] = deque()
        self._chars = 0
        self._changed = threading.Condition()
        self._room = threading.Event()  # cleared while the session's inbox is full
        self._room.set()
        self._sink: Sink | None = None

    def send(self, message: str | bytes | Mapping[str, Any], *, timeout: float = GUARD) -> None:
        """Send one message as the agent: an envelope (a dict, sent as JSON) or any text or
        bytes, as a line on a process's stdout would be. Waits while the host has no room."""
        sink = self._sink
        if sink is None or self.hung_up is not None:
            raise ConnectionError(f"[lineup] the host ended this connection: {self.hung_up}")
        if not self._room.wait(timeout):
            raise TimeoutError(f"[lineup] the host took nothing for {timeout} s")
        text = json.dumps(message) if isinstance(message, Mapping) else message
        sink.message(text)

    def receive(self, *, timeout: float = GUARD) -> dict[str, Any]:
        """The next envelope the host sent this agent (waits for it, up to ``timeout`` s)."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._unread or self.hung_up, timeout):
                raise TimeoutError(f"[lineup] the host sent nothing in {timeout} s")
            if not self._unread:
                raise ConnectionError(f"[lineup] the host ended this connection: {self.hung_up}")
            text = self._unread.popleft()
            self._chars -= len(text)
        envelope: dict[str, Any] = json.loads(text)
        return envelope

    def expect(self, type_: str, *, timeout: float = GUARD) -> dict[str, Any]:
        """The next envelope of ``type_`` (``ui.event`` or the full name) the host sent this
        agent; the others before it are passed over."""
        full = type_ if type_.startswith("lineup.v1.") else "lineup.v1." + type_
        while (envelope := self.receive(timeout=timeout))["type"] != full:
            pass
        return envelope

    @property
    def unread(self) -> int:
        """How many envelopes the host sent that were not received yet."""
        with self._changed:
            return len(self._unread)

    def leave(self, why: str = "the agent left", *, clean: bool = True) -> None:
        """The agent ends the connection (a process that exits: ``clean`` with code 0)."""
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.lost(why, final=True, clean=clean)

    def wait_until_hung_up(self, *, timeout: float = GUARD) -> str:
        """Wait until the host ends the connection; returns why."""
        with self._changed:
            if not self._changed.wait_for(lambda: self.hung_up is not None, timeout):
                raise TimeoutError(f"[lineup] the host did not end the connection in {timeout} s")
            return self.hung_up or ""

    def __repr__(self) -> str:
        return f"OutsideAgent(session={self.session!r}, unread={self.unread})"

    # ---- the transport's side (same module) ---------------------------------------------

    def _deliver(self, text: str) -> bool:
        with self._changed:
            if self.hung_up is not None:
                return True  # gone: as a pipe to a process that exited
            if self._chars + len(text) > OUTBOX_CHARS:
                return False
            self._unread.append(text)
            self._chars += len(text)
            self._changed.notify_all()
        return True

    def _end(self, why: str) -> Sink | None:
        with self._changed:
            if self.hung_up is None:
                self.hung_up = why
            self._changed.notify_all()
        self._room.set()
        sink, self._sink = self._sink, None
        return sink


class MemoryTransport:
    """The host's end of an in-memory connection (``_transport.Transport``)."""

    def __init__(self, outside: OutsideAgent, *, requested: str | None = None) -> None:
        self.describe = "in memory"
        self._outside = outside
        self._requested = requested  # an agent id asked for at the opening, as ?agent_id

    def start(self, sink: Sink) -> None:
        self._outside._sink = sink
        sink.opened(self._requested)

    def send(self, text: str) -> bool:
        return self._outside._deliver(text)

    def pause_reading(self) -> None:
        self._outside._room.clear()

    def resume_reading(self) -> None:
        self._outside._room.set()

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        sink = self._outside._end(why)  # what was queued stays readable, the refusal too
        if sink is not None:
            sink.lost(why, final=True)

    def close(self) -> None:
        self._outside._end("closed by the host")


def connect_memory(
    host: SessionHost, *, agent_id: str | None = None, requested: str | None = None
) -> OutsideAgent:
    """A session over a new in-memory connection; returns the agent's end. ``agent_id`` is
    claimed at once (UsageError when taken, as ``connect_process``); ``requested`` is asked
    for when the connection opens, as a listener's ``?agent_id`` (refused with an error and
    a hang-up when taken, H41)."""
    outside = OutsideAgent()
    outside.session = RemoteAgent(
        host, MemoryTransport(outside, requested=requested), agent_id=agent_id
    )
    return outside
