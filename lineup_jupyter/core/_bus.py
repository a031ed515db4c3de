"""Carries client->agent envelopes of one conversation to their subscribers, and keeps a history.

The bus knows envelopes, not widgets or surfaces. Delivery is FIFO even when a subscriber
sends while being called (its answer is queued behind what is already in flight), and a
subscriber that raises is logged and recorded, never allowed to break delivery to others.
"""

from __future__ import annotations

import heapq
import itertools
import json
import logging
import os
import pathlib
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TextIO

from ..protocol._errors import UsageError
from ..runtime._watchers import Watchers

__all__ = ["Bus", "History", "Record", "Subscription"]

logger = logging.getLogger("lineup_jupyter")

Direction = Literal["to_client", "to_agent"]
Kind = Literal["envelope", "refused", "handler_error", "mcp"]
Callback = Callable[[dict[str, Any]], None]


class Record(NamedTuple):
    """One thing that crossed the bus, in order.

    ``envelope`` is the message as received or sent (for bytes that were not JSON, ``{"raw":
    "<first characters>"}``); ``error`` is the refusal payload when it was refused.
    ``kind`` is ``envelope``, ``refused``, ``handler_error`` or ``mcp``: a JSON-RPC
    message between the host and an MCP server or one of its apps (docs/mcp-apps.md), kept
    as ``{"type": "mcp.<method>" or "mcp.response", "server", "app_id", "dir", "jsonrpc"}``
    with ``dir`` one of to_server, from_server, to_app, from_app. ``health`` is true for a
    health check (a JSON-RPC ``ping`` and its answer, which the MCP apps' watchdog sends every
    few seconds): the history keeps those apart, so they never push out the conversation.
    """

    seq: int
    time: float
    direction: Direction
    kind: Kind
    # An accepted message is kept as the JSON text it arrived as and parsed when read: text
    # is one object for the garbage collector to skip, a parsed message is a hundred to scan.
    message: dict[str, Any] | str | bytes
    error: dict[str, Any] | None = None
    health: bool = False

    @property
    def envelope(self) -> dict[str, Any]:
        message = self.message
        if isinstance(message, dict):
            return message
        if isinstance(message, str) and message.startswith("\ufeff"):
            message = message[1:]  # the host tolerates one byte-order mark; json.loads does not
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    @property
    def type(self) -> str | None:
        """The envelope's type; for a refusal of something that had none, the refused type."""
        return _type_of(self.envelope, self.error)

    @property
    def instance_id(self) -> str | None:
        """The surface instance it is about, if any (a refusal reported by a surface too)."""
        return _instance_of(self.envelope)

    def to_json(self) -> dict[str, Any]:
        """The record as one line of an export (History.export) or a row of the inspector."""
        envelope = self.envelope  # parsed once: a record may be kept as text
        return {
            "seq": self.seq,
            "time": self.time,
            "direction": self.direction,
            "kind": self.kind,
            "type": _type_of(envelope, self.error),
            "instance_id": _instance_of(envelope),
            "envelope": envelope,
            "error": self.error,
            "health": self.health,
        }


def _type_of(envelope: dict[str, Any], error: dict[str, Any] | None) -> str | None:
    kind = envelope.get("type")
    if isinstance(kind, str):
        return kind
    refused = (error or {}).get("refused_type")
    return refused if isinstance(refused, str) else None


def _instance_of(envelope: dict[str, Any]) -> str | None:
    payload = envelope.get("payload")
    found = payload.get("instance_id") if isinstance(payload, dict) else None
    if found is None:
        found = envelope.get("instance_id")  # what the host keeps of a surface's message
    return found if isinstance(found, str) else None


# Records, changes and instances are NamedTuples or slotted classes rather than frozen
# dataclasses: they are made on every message, and a frozen dataclass costs 2 µs to build.


HEALTH_RECORDS = 100  # health checks kept, in a ring of their own (at most the history's size)
_PINGS_AWAITED = 256  # ping ids whose answer is still to come, to know the answer as one


class History:
    """A bounded, ordered record of a conversation (a ring buffer: the oldest falls off).

    Health checks (``Record.health``: a ``ping`` and its answer) go to a smaller ring of their
    own, so an idle conversation's watchdog never pushes its messages out; both are read as
    one, in order.
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise UsageError(f"[lineup] history size must be at least 1, not {size}")
        self._records: deque[Record] = deque(maxlen=size)
        self._health: deque[Record] = deque(maxlen=min(size, HEALTH_RECORDS))
        self._pings: dict[tuple[Any, ...], None] = {}  # insertion-ordered: the oldest first
        self._seq = 0
        self._lock = threading.Lock()
        self._watchers: Watchers[[Record]] = Watchers("history")

    def add(
        self,
        direction: Direction,
        kind: Kind,
        envelope: dict[str, Any] | str | bytes,
        error: dict[str, Any] | None = None,
    ) -> Record:
        with self._lock:
            self._seq += 1
            health = kind == "mcp" and self._is_health_check(envelope)
            record = Record(self._seq, time.time(), direction, kind, envelope, error, health)
            (self._health if health else self._records).append(record)
        if self._watchers:
            self._watchers.notify(record)
        return record

    def _is_health_check(self, message: object) -> bool:
        """A JSON-RPC ``ping`` of an MCP record, or the answer to one seen before (matched by
        server, app and id, whichever side asked). Called under the lock."""
        if not isinstance(message, dict) or not isinstance(message.get("jsonrpc"), dict):
            return False
        rpc = message["jsonrpc"]
        request_id = rpc.get("id")
        if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
            return bool(rpc.get("method") == "ping")  # a ping sent as a notification
        key = (message.get("server"), message.get("app_id"), type(request_id), request_id)
        if rpc.get("method") == "ping":
            self._pings[key] = None
            if len(self._pings) > _PINGS_AWAITED:
                del self._pings[next(iter(self._pings))]
            return True
        if "method" not in rpc and key in self._pings:
            del self._pings[key]
            return True
        return False

    def watch(self, watcher: Callable[[Record], None]) -> Callable[[], None]:
        """Call ``watcher(record)`` after every record is added (the inspector's view does);
        returns the function that stops it. It may be called on an agent's reader thread."""
        return self._watchers.add(watcher)

    def since(self, seq: int) -> list[Record]:
        """The records numbered after ``seq``, oldest first. Each ring is read from its newest
        end, so this costs the records returned, not the whole history (a view's new ones)."""
        with self._lock:
            if self._seq <= seq:
                return []
            newer = [
                list(itertools.takewhile(lambda r: r.seq > seq, reversed(ring)))[::-1]
                for ring in (self._records, self._health)
            ]
        return list(heapq.merge(*newer, key=_seq_of))

    def select(
        self,
        *,
        type: str | None = None,
        instance_id: str | None = None,
        direction: Direction | None = None,
        kind: str | None = None,
    ) -> list[Record]:
        """The records that match every filter given, oldest first."""
        found = []
        for record in self:
            if (direction is not None and record.direction != direction) or (
                kind is not None and record.kind != kind
            ):
                continue  # decided without parsing the message
            envelope = record.envelope
            if (type is None or _type_of(envelope, record.error) == type) and (
                instance_id is None or _instance_of(envelope) == instance_id
            ):
                found.append(record)
        return found

    def export(self, target: str | os.PathLike[str] | TextIO) -> int:
        """Write every record as JSON lines (``Record.to_json``), oldest first, to a path or
        an open text file; returns how many were written."""
        records = list(self)
        lines = "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in records)
        if isinstance(target, (str, os.PathLike)):
            pathlib.Path(target).write_text(lines, encoding="utf-8")
        else:
            target.write(lines)
        return len(records)

    @property
    def size(self) -> int:
        """How many records of the conversation it keeps (health checks not counted)."""
        return self._records.maxlen or 0

    @property
    def health_size(self) -> int:
        """How many health checks it keeps, in their own ring."""
        return self._health.maxlen or 0

    @property
    def dropped(self) -> int:
        """How many records fell off the front (of either ring)."""
        return self._seq - len(self)

    def _all(self) -> list[Record]:
        with self._lock:
            if not self._health:
                return list(self._records)
            return list(heapq.merge(self._records, self._health, key=_seq_of))

    def __iter__(self) -> Iterator[Record]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._records) + len(self._health)

    def __getitem__(self, index: int) -> Record:
        return self._all()[index]


def _seq_of(record: Record) -> int:
    return record.seq


@dataclass
class Subscription:
    """Returned by ``subscribe``: call it (or ``close()``) to stop receiving."""

    _bus: Bus
    _callback: Callback
    agent_id: str | None
    # Where the subscriber's agents speak from (_identity.py): None for an observer, which
    # hears every envelope sent to an endpoint; an endpoint hears only its own and everyone's.
    endpoint: object = None
    active: bool = field(default=True)

    def close(self) -> None:
        if self.active:
            self.active = False
            self._bus._remove(self)

    __call__ = close

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Bus:
    """Routes envelopes from the client (the host) to the agents of one conversation."""

    def __init__(
        self,
        conversation_id: str,
        *,
        history_size: int = 1000,
        on_handler_error: Callable[[str, BaseException], object] | None = None,
    ) -> None:
        self.conversation_id = conversation_id
        self._on_handler_error = on_handler_error
        self.history = History(history_size)
        self._subscriptions: list[Subscription] = []
        self._queue: deque[tuple[dict[str, Any], object, Subscription | None]] = deque()
        self._draining = threading.local()
        self._lock = threading.Lock()

    def subscribe(
        self, callback: Callback, *, agent_id: str | None = None, endpoint: object = None
    ) -> Subscription:
        """Call ``callback(envelope)`` for every client->agent envelope.

        With ``agent_id``, only for envelopes addressed to that agent or to no one in particular.
        With ``endpoint``, not for envelopes sent to another endpoint (``send(endpoint=)``).
        """
        if not callable(callback):
            raise UsageError(f"[lineup] subscribe needs a callable, not {type(callback).__name__}")
        subscription = Subscription(self, callback, agent_id, endpoint)
        with self._lock:
            self._subscriptions.append(subscription)
        return subscription

    def _remove(self, subscription: Subscription) -> None:
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)

    def record_incoming(
        self, envelope: dict[str, Any] | str | bytes, error: dict[str, Any] | None
    ) -> None:
        self.history.add("to_client", "refused" if error else "envelope", envelope, error)

    def send(
        self,
        envelope: dict[str, Any],
        *,
        endpoint: object = None,
        only: Subscription | None = None,
    ) -> None:
        """Deliver one client->agent envelope to its subscribers, after those already queued.

        ``endpoint``: to that endpoint's subscribers and the observers only (a refusal goes
        to whoever sent the refused message, H41). ``only``: to that one subscription.
        """
        if envelope.get("conversation_id") != self.conversation_id:
            raise UsageError(
                f"[lineup] this bus carries conversation {self.conversation_id!r}, "
                f"not {envelope.get('conversation_id')!r}"
            )
        self.history.add("to_agent", "envelope", envelope)
        self._queue.append((envelope, endpoint, only))
        if getattr(self._draining, "active", False):
            return  # the outer send on this thread delivers it, in order
        self._draining.active = True
        try:
            while self._queue:
                self._deliver(*self._queue.popleft())
        finally:
            self._draining.active = False

    def _deliver(
        self, envelope: dict[str, Any], endpoint: object, only: Subscription | None
    ) -> None:
        text = json.dumps(envelope, ensure_ascii=False)
        target = envelope.get("target")
        target_id = target.get("id") if isinstance(target, dict) else None
        with self._lock:
            subscriptions = list(self._subscriptions) if only is None else [only]
        for subscription in subscriptions:
            if not subscription.active:
                continue
            if subscription.agent_id is not None and target_id not in (None, subscription.agent_id):
                continue
            if endpoint is not None and subscription.endpoint not in (None, endpoint):
                continue
            try:
                # Each subscriber gets its own copy: what one does to it, no one else sees,
                # and the history keeps what was really sent.
                subscription._callback(json.loads(text))
            except Exception as exc:  # a subscriber's bug must not stop the others
                where = (
                    f"agent {subscription.agent_id!r}" if subscription.agent_id else "a subscriber"
                )
                logger.error("[lineup] %s failed on %s: %r", where, envelope.get("type"), exc)
                self.history.add(
                    "to_agent",
                    "handler_error",
                    envelope,
                    {
                        "code": "internal",
                        "message": f"{where} raised {exc!r}",
                        "traceback": "".join(traceback.format_exception(exc)),
                    },
                )
                if self._on_handler_error is not None:
                    self._on_handler_error(f"{where} on {envelope.get('type')}", exc)
