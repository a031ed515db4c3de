"""Problems the notebook's user must see: a handler of theirs that raised, sync or async.

ipywidgets swallows what a comm callback raises, and a logger line lands in no cell: a handler
that fails on a click used to fail silently (docs/agents.md, "When a handler fails"). Every
failure is kept here, bounded, for ``host.problems`` in Python and the host's view (the
``problems`` list it draws next to the surface or agent it belongs to), and is recorded in the
history as a ``handler_error`` for the inspector.

Coroutine handlers (``async def``) run as tasks (``_threads.spawn``: on the event loop of the
thread that dispatches, else on the loop the agent was made on, a notebook's kernel loop, else
on one loop thread of their own, a plain script): what they raise is reported the same way.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import itertools
import logging
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..protocol._envelopes import now_iso
from ._threads import spawn
from ._watchers import Watchers

__all__ = ["Problem", "Problems", "run_handler"]

logger = logging.getLogger("lineup_jupyter")

PROBLEMS_KEPT = 50  # the newest problems; older ones stay in the history until it rolls over
TRACEBACK_CHARS = 8_000  # the end of a traceback is where the error is
MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Problem:
    """One failure to show: where it happened, what was raised, and its traceback."""

    seq: int
    # "handler": a user's function; "surface": a surface's script; "mcp": a server; "agent": a
    # call of the user's own agent the host could not serve (an undeclared capability)
    source: str
    where: str  # "handler refresh() for ui.event 'refresh'"
    message: str  # "ZeroDivisionError: division by zero"
    traceback: str
    agent_id: str | None = None
    instance_id: str | None = None
    at: str = ""  # when, in the protocol's format (UTC, milliseconds, Z)
    count: int = 1  # the same problem again, right after: counted, not listed again

    def to_view(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "source": self.source,
            "where": self.where,
            "message": self.message,
            "traceback": self.traceback,
            "agent_id": self.agent_id,
            "instance_id": self.instance_id,
            "at": self.at,
            "count": self.count,
        }

    def __str__(self) -> str:
        again = f" ({self.count} times)" if self.count > 1 else ""
        return f"{self.where}: {self.message}{again}"


class Problems:
    """The newest problems of one host, in order; thread-safe (async handlers fail on loops)."""

    def __init__(self, keep: int = PROBLEMS_KEPT) -> None:
        self._items: deque[Problem] = deque(maxlen=keep)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self._watchers: Watchers[[]] = Watchers("problems")

    def report(
        self,
        where: str,
        exc: BaseException,
        *,
        agent_id: str | None = None,
        instance_id: str | None = None,
        source: str = "handler",
    ) -> Problem:
        text = "".join(traceback.format_exception(exc))
        return self.add(
            where,
            f"{type(exc).__name__}: {exc}",
            text,
            agent_id=agent_id,
            instance_id=instance_id,
            source=source,
        )

    def add(
        self,
        where: str,
        message: str,
        details: str = "",
        *,
        agent_id: str | None = None,
        instance_id: str | None = None,
        source: str = "handler",
    ) -> Problem:
        """Keep one problem (``details``: a traceback or a stack, its end kept). The same one
        again right after the last is counted on it instead of listed twice."""
        if len(details) > TRACEBACK_CHARS:
            details = "…\n" + details[-TRACEBACK_CHARS:]
        message = message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + "…"
        with self._lock:
            last = self._items[-1] if self._items else None
            if last is not None and (last.source, last.where, last.message, last.instance_id) == (
                source,
                where,
                message,
                instance_id,
            ):
                problem = dataclasses.replace(last, count=last.count + 1)
                self._items[-1] = problem
            else:
                problem = Problem(
                    next(self._seq),
                    source,
                    where,
                    message,
                    details,
                    agent_id,
                    instance_id,
                    now_iso(),
                )
                self._items.append(problem)
        if problem.count == 1:
            logger.error("[lineup] %s: %s", where, message)
        self._watchers.notify()
        return problem

    def watch(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` after every change (possibly on another thread)."""
        return self._watchers.add(watcher)

    def newest(self) -> Problem | None:
        with self._lock:
            return self._items[-1] if self._items else None

    def clear(self) -> None:
        """Forget what was shown (the history keeps its handler_error records)."""
        with self._lock:
            self._items.clear()
        self._watchers.notify()

    def __iter__(self) -> Iterator[Problem]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index: int) -> Problem:
        with self._lock:
            return self._items[index]

    def __repr__(self) -> str:
        items = list(self)
        if not items:
            return "Problems(none)"
        return "Problems(\n" + "\n".join(f"  {p}" for p in items) + "\n)"


# ---- running a user's handler ---------------------------------------------------------


def run_handler(
    handler: Callable[[Any], Any],
    argument: Any,
    *,
    where: str,
    on_failure: Callable[[BaseException], None],
    home_loop: asyncio.AbstractEventLoop | None,
) -> None:
    """Call ``handler(argument)``; a coroutine it returns runs as a task. Whatever it raises,
    then or later, goes to ``on_failure`` and never to the caller (one broken handler must not
    keep an event from the others, nor raise into the host)."""
    try:
        outcome = handler(argument)
    except Exception as exc:
        on_failure(exc)
        return
    if not inspect.isawaitable(outcome):
        return

    spawn(outcome, home=home_loop, what=where, on_failure=on_failure)
