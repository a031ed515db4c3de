"""An agent outside the kernel: its envelopes in from a transport, the host's envelopes out.

Like MCP's python-sdk, a connection is three layers: the wire models (``protocol``), a session
(``RemoteAgent``, here) and transports that only move text (``_stdio``, ``_websocket``). The
session:

- gives every message to ``Host.receive`` as the text it arrived as, so an agent in another
  process is checked exactly like one in the kernel: the host is the authority (H2, H3);
- speaks for one agent id (H41): ``agent_id=``, else the ``sender.id`` of the first envelope
  naming a free one; an id the kernel or another connection speaks for is refused
  (``agent_conflict``, _identity.py), to this connection alone, and said on its line in the
  host's view; so a process cannot act, nor hear, as another agent;
- sends ``client.inventory`` on every connection and reconnection (C1), to it alone, then
  every envelope the host addresses to its agent or to no one in particular, and the
  refusals of its own messages (H3).

Threads, not asyncio. Reading a pipe or a socket blocks, so each connection reads and writes
on daemon threads of its own: nothing waits on the kernel's event loop, a long cell does not
stall a read, and the same code runs in a kernel, a script and pytest. The host and its widget
are another matter: comm messages and trait changes belong to the kernel's thread (the
widget's flush is an event-loop callback). So a reader hands each message over, in order,
to the event loop that was running where the connection was made (a notebook cell), or, when
there was none (a script, pytest), runs it at once under the host's lock (``HostThread``,
_threads.py: the one home of that rule). At most ``INBOX_SIZE`` messages wait for the loop;
then the reader stops reading, and a flooding agent is held back by its own pipe or socket
instead of the kernel's memory.
Outgoing envelopes wait in a bounded queue for a writer thread, so the host never blocks on
an agent that does not read; when that queue is full the connection is closed (H42): a message
dropped silently would leave the agent with a wrong picture (a question it never sees answered).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._errors import ProtocolError, UsageError
from ._threads import HostThread
from .protocol import rules
from .protocol._json import dumps, loads
from .protocol._validate import readable_id, readable_type

if TYPE_CHECKING:
    from ._host import Host

__all__ = ["INBOX_SIZE", "OUTBOX_CHARS", "HostThread", "Link", "RemoteAgent"]

logger = logging.getLogger("lineup_jupyter")

INBOX_SIZE = 64  # messages read but not yet handed to the host; then the reader waits
OUTBOX_CHARS = 8 * 1024 * 1024  # characters queued for an agent that is not reading (H42)


class Link:
    """One live connection's sending side: a bounded queue and the thread that writes it."""

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


class RemoteAgent:
    """An agent outside the kernel, connected over a transport.

    Made by ``host.connect_process``, ``host.connect_websocket``, or an agent connecting to
    ``host.listen_websocket``. ``agent_id`` is the agent it speaks for (None until the first
    envelope names it, H41); ``status`` says whether it is connected; ``close()`` ends it.
    """

    def __init__(
        self,
        host: Host,
        *,
        agent_id: str | None,
        describe: str,
        host_thread: HostThread | None = None,
    ) -> None:
        if agent_id is not None and readable_id(agent_id) is None:
            raise UsageError(f"[lineup] agent id {agent_id!r} must match {rules.ID_PATTERN} (M1)")
        self.host = host
        self.describe = describe  # what it is, for messages: "process 'python my_agent.py'"
        self.dropped = 0  # envelopes for this agent that came while it was not connected
        self._agent_id = agent_id
        self._host_thread = host_thread or HostThread()
        self._state = "connecting"
        self._inbox: queue.Queue[Callable[[], None]] = queue.Queue(INBOX_SIZE)
        self._scheduled = False
        self._lock = threading.Lock()
        self._drain_lock = threading.RLock()
        self._link: Link | None = None
        self._closed = threading.Event()
        self.problem: str | None = None  # the last thing that went wrong with the connection
        if agent_id is not None:  # H41: refused at once when the kernel or another has it
            with host._lock:
                try:
                    host._identities.claim(agent_id, self)
                except ProtocolError as error:
                    raise UsageError(f"[lineup] {error.message}") from None
        self._subscription = host._bus.subscribe(self._on_envelope, endpoint=self)

    @property
    def agent_id(self) -> str | None:
        """The agent this connection speaks for; None until its first envelope (H41)."""
        return self._agent_id

    @property
    def status(self) -> str:
        """``connecting``, ``connected``, ``disconnected`` or ``closed``."""
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
        """Stop talking to this agent and close its transport. Closing twice does nothing."""
        self._shut()

    def _shut(self) -> None:
        """What close() does, never waiting: the bus may be calling (H42)."""
        with self._lock:
            if self._closed.is_set():
                return
            self._closed.set()
        self._state = "closed"
        self._subscription.close()
        self._release()
        link, self._link = self._link, None
        if link is not None:
            link.stop()
        self._close_transport()
        self.host._connection_changed()

    def _close_transport(self) -> None:
        """End the transport itself (the subclass knows how); must not wait long."""

    def _release(self) -> None:
        """The agent id is free for the next connection that claims it (H41)."""
        with self.host._lock:
            self.host._identities.release(self)

    def _abort(self, why: str) -> None:
        """The connection cannot go on (the agent is not reading): end it, reported."""
        logger.warning("[lineup] %s: %s", self._name(), why)
        self.problem = why
        self._shut()

    def __enter__(self) -> RemoteAgent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(agent_id={self._agent_id!r}, status={self.status!r})"

    def _name(self) -> str:
        return f"agent {self._agent_id!r} ({self.describe})" if self._agent_id else self.describe

    # ---- from a transport's thread to the host's ------------------------------------------

    def _feed(self, work: Callable[[], None]) -> bool:
        """Run ``work`` on the host's thread, after what is already waiting; False once closed.

        Blocks while ``INBOX_SIZE`` are waiting, so a reader never outruns the kernel.
        """
        while not self._closed.is_set():
            try:
                self._inbox.put(work, timeout=0.25)  # the timeout only notices a close
            except queue.Full:
                continue
            self._schedule()
            return True
        return False

    def _schedule(self) -> None:
        if self._host_thread.loop_to_use() is None:
            self._drain()
            return
        with self._lock:
            if self._scheduled:
                return
            self._scheduled = True
        if not self._host_thread.post(self._drain, f"{self._name()}: handing messages over"):
            with self._lock:  # the loop closed since we looked: nobody else will run it
                self._scheduled = False
            self._drain()

    def _drain(self) -> None:
        with self._lock:
            self._scheduled = False
        while True:
            with self._drain_lock:  # one drain at a time keeps the agent's order
                for _ in range(INBOX_SIZE):
                    try:
                        work = self._inbox.get_nowait()
                    except queue.Empty:
                        return
                    try:
                        work()
                    except Exception:  # a bug of ours must not stop the next message
                        logger.exception("[lineup] %s: handling a message failed", self._name())
            # More arrived while draining: on a loop, run them on a later turn so the loop
            # serves the kernel's other work (the widget, the user's cells) in between.
            with self._lock:
                self._scheduled = True
            if self._host_thread.post(self._drain, f"{self._name()}: handing messages over"):
                return
            with self._lock:
                self._scheduled = False

    # ---- on the host's thread ---------------------------------------------------------------

    def _opened(self, link: Link) -> None:
        """A transport connection is up: it hears the inventory before anything else (C1)."""
        if self._closed.is_set():
            link.stop()
            return
        with self.host._lock:  # nothing else is sent to this agent in between
            self._link = link
            self._state = "connected"
            self.problem = None  # whatever went wrong before this connection is over
            self.host._connection_changed()
            # To this connection alone: unbound, it has no agent id to address yet (H41), and
            # the other agents already have this revision (H42).
            self._send("lineup.v1.client.inventory", self.host.inventory)

    def _message(self, raw: str | bytes) -> None:
        """One envelope as the agent sent it: checked for its sender, then the host's."""
        if self._closed.is_set():
            return
        with self.host._lock:
            try:
                # The host's own parser: what it cannot read here, the host refuses too.
                value = loads(raw, max_bytes=self.host.limits.max_message_bytes)
            except ProtocolError:
                value = None
            claimed = _claimed_sender(value)
            if claimed is not None and claimed != self._agent_id:
                shown = value if isinstance(value, dict) else {}
                try:
                    self.host._identities.check(claimed, self)
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
                self.host._identities.claim(claimed, self)
                self._agent_id = claimed  # H41: the first envelope names the agent
                self.host._connection_changed()
            self.host._receive(raw, self)

    def _refuse_claim(self, shown: dict[str, Any], claimed: str, error: ProtocolError) -> None:
        """An envelope in another agent's name (H41): refused to this connection alone, and
        its line in the host's view says so."""
        self._refuse(
            shown,
            error.with_refused(readable_id(shown.get("id")), readable_type(shown.get("type"))),
        )
        self.problem = f"refused an envelope in the name of {claimed!r}: {error.message}"
        self.host._connection_changed()

    def _refuse(self, shown: dict[str, Any], error: ProtocolError) -> None:
        """Refuse what the transport itself could not pass on, the way the host refuses (H3):
        recorded in the history, and one lineup.v1.error to this connection's agent."""
        with self.host._lock:
            self.host._bus.record_incoming(shown, error.to_payload())
            self._send("lineup.v1.error", error.to_payload())

    def _send(self, type_: str, payload: dict[str, Any]) -> None:
        """Send to this connection only (its agent, if it named one): never to another."""
        self.host._send(type_, payload, to=self._agent_id, endpoint=self)

    def _lost(self, link: Link, why: str, *, final: bool, clean: bool = False) -> None:
        """A transport connection ended; ``final`` when no other will follow. A ``clean``
        end (an agent process that exited with code 0) is logged as info, not a warning."""
        if self._link is link:
            self._link = None
        link.stop()
        if final:
            self._subscription.close()
            self._release()
        if self._closed.is_set():
            return  # the host closed it: nothing to report
        self._state = "closed" if final else "disconnected"
        self.problem = None if clean else why
        logger.log(logging.INFO if clean else logging.WARNING, "[lineup] %s: %s", self._name(), why)
        self.host._connection_changed()

    def _on_envelope(self, envelope: dict[str, Any]) -> None:
        """The bus's callback (on the host's thread): queue what is for this agent."""
        target = envelope.get("target")
        target_id = target.get("id") if isinstance(target, dict) else None
        if target_id is not None and target_id != self._agent_id:
            return
        link = self._link
        if link is None:
            self.dropped += 1
            return
        if not link.put(dumps(envelope)):
            self._abort(
                f"it did not read what the host sent (more than {OUTBOX_CHARS} characters "
                "were waiting), so the connection was closed rather than let messages be lost "
                "(H42)."
            )


def _claimed_sender(value: Any) -> str | None:
    """The agent id a parsed message claims to come from, if it names one readably."""
    if not isinstance(value, dict):
        return None
    sender = value.get("sender")
    if not isinstance(sender, dict) or sender.get("kind") != "agent":
        return None
    return readable_id(sender.get("id"))
