"""The seam between a session and the wire: what a transport is, and what it tells a session.

A session (``RemoteAgent``, _remote.py) speaks lineup.v1 for one agent outside the kernel; a
transport only moves text. A new transport (stdio, WebSocket, in memory, ...) implements
``Transport`` and needs nothing else of the package: it never sees the Host, an envelope's
meaning or an agent id's owner. The session gives it a ``Sink`` to report to.

    session                                   transport
      start(sink)  ------------------------->  connects; then, in order, on any thread:
                   <-------------------------  sink.opened(agent_id?)   (each connection)
                   <-------------------------  sink.message(text)       (one envelope)
                   <-------------------------  sink.refused(shown, error) (what it cannot pass)
                   <-------------------------  sink.trouble(why)        (cannot connect yet)
                   <-------------------------  sink.lost(why, final=)   (a connection ended)
      send(text) -> bool                       queued, never blocks; False: OUTBOX_CHARS wait
      pause_reading() / resume_reading()       the session's inbox is full / has room again
      hang_up(why, refused=)                   end this connection (a dialled one reconnects)
      close()                                  for good; never waits; nothing more is reported

Every ``Sink`` method returns at once, whatever thread calls it; ``pause_reading`` is how a
session holds a flooding agent back (by its own pipe or socket, not the kernel's memory).
Helpers for transports that block on I/O (a pipe, websockets' threading client) live here
too: ``Writer`` (a bounded outgoing queue and its thread) and ``Gate`` (a reader that waits
while paused).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

from ..protocol._errors import ProtocolError

__all__ = ["INBOX_SIZE", "OUTBOX_CHARS", "Gate", "Sink", "Transport", "Writer"]

logger = logging.getLogger("lineup_jupyter")

INBOX_SIZE = 64  # messages read but not yet handed to the host; then reading pauses
OUTBOX_CHARS = 8 * 1024 * 1024  # characters queued for an agent that is not reading (H42)


class Sink(Protocol):
    """What a transport tells its session. Each call returns at once, from any thread."""

    def opened(self, agent_id: str | None = None) -> None:
        """A connection is up (again). ``agent_id``: the id its opening asked for (H41)."""

    def message(self, text: str | bytes) -> None:
        """One message as the agent sent it (one line, one text frame)."""

    def refused(self, shown: str, error: ProtocolError) -> None:
        """Something the transport could not pass on (a line over the limit, a binary
        frame); ``shown`` describes it for the history."""

    def trouble(self, why: str) -> None:
        """A connection cannot be made yet (the transport tries again)."""

    def lost(self, why: str, *, final: bool, clean: bool = False) -> None:
        """A connection ended; ``final`` when no other follows; ``clean`` when the agent
        meant to end (a process that exited with code 0)."""


class Transport(Protocol):
    """Moves text between a session and one agent outside the kernel."""

    @property
    def describe(self) -> str:
        """What it is, for messages and the host's view: ``process 'python a.py'``."""

    def start(self, sink: Sink) -> None:
        """Connect and report to ``sink``; raises UsageError if it cannot even start."""

    def send(self, text: str) -> bool:
        """Queue one envelope's text; never blocks. False when more than OUTBOX_CHARS are
        waiting (the agent is not reading, H42): nothing was queued."""

    def pause_reading(self) -> None:
        """Read nothing more until ``resume_reading`` (the session's inbox is full)."""

    def resume_reading(self) -> None:
        """Read again."""

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        """End the current connection now (the agent broke a rule); report it with
        ``sink.lost``. ``refused``: after what is queued is written (the refusal), and a
        WebSocket closes with 1008 saying ``why``. A transport that dials may connect again."""

    def close(self) -> None:
        """End for good, dropping what is queued; never waits (the bus may be calling)."""


class Writer:
    """A bounded outgoing queue and the thread that writes it, for a transport whose write
    blocks (a pipe, a threading WebSocket): the host never waits on an agent that does not
    read (H42)."""

    def __init__(self, name: str, write: Callable[[str], None]) -> None:
        self._write = write
        self._queue: deque[str | Callable[[], None]] = deque()
        self._chars = 0
        self._open = True
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def put(self, text: str) -> bool:
        """Queue one envelope's text; False when the queue is full (the agent is not reading)."""
        with self._ready:
            if self._chars + len(text) > OUTBOX_CHARS:
                return False
            if self._open:
                self._queue.append(text)
                self._chars += len(text)
                self._ready.notify()
        return True

    def end(self, then: Callable[[], None]) -> None:
        """Write what is queued, then call ``then`` (on the writer's thread) and stop."""
        with self._ready:
            if self._open:
                self._queue.append(then)
                self._ready.notify()

    def stop(self) -> None:
        """Write nothing more; what is still queued is dropped."""
        with self._ready:
            self._open = False
            self._queue.clear()
            self._chars = 0
            self._ready.notify()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._ready:
                while self._open and not self._queue:
                    self._ready.wait()
                if not self._open:
                    return
                item = self._queue.popleft()
                if not isinstance(item, str):  # end(): everything before it is written
                    self._open = False
                    self._queue.clear()
                    self._chars = 0
                    break
                self._chars -= len(item)
            try:
                self._write(item)
            except Exception as exc:  # the pipe or socket is gone: its reader reports the end
                logger.debug("[lineup] writing to an agent failed: %r", exc)
                self.stop()
                return
        item()


class Gate:
    """Where a reader thread waits while its session has no room (``pause_reading``)."""

    def __init__(self) -> None:
        self._open = threading.Event()
        self._open.set()

    def pause(self) -> None:
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    def wait(self) -> None:
        self._open.wait()
