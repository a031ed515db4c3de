"""A value that arrives later, from the user: ``await`` it in a notebook cell, or get a callback.

Measured on ipykernel 7.4 with JupyterLab 4.6: a cell that awaits a future which a widget
message resolves completes, because the kernel handles widget messages on its event loop
while the cell awaits; a cell that blocks (``time.sleep`` in a loop, ``Event.wait``) holds
that loop, so the message never arrives and the kernel deadlocks. ``result()`` therefore
refuses to block on the event loop's own thread and says what to do instead. Older ipykernels
may resolve from another thread: every resolution reaches an awaiting cell through its
loop (``_threads.call_soon_on``; why, in _threads.py).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Generator
from typing import Any, Generic, TypeVar

from ..protocol._errors import UsageError
from ._threads import call_soon_on, running_loop

__all__ = ["Pending"]

logger = logging.getLogger("lineup_jupyter")

T = TypeVar("T")


class Pending(Generic[T]):
    """Resolved exactly once; ``await pending`` gives the value."""

    def __init__(self, what: str) -> None:
        self._what = what  # for messages: "the answer to question 'q1'"
        self._lock = threading.Lock()
        self._event = threading.Event()
        self._value: Any = None
        self._callbacks: list[Callable[[T], None]] = []
        self._futures: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[T]]] = []
        # Called once, when a cell first awaits this while it is not there yet: the agent
        # points that cell to where the user answers (docs/agents.md, "Where the user looks").
        self.on_first_await: Callable[[], object] | None = None

    def done(self) -> bool:
        return self._event.is_set()

    def _resolve(self, value: T) -> bool:
        """Set the value (the first call wins); run callbacks, wake awaiting cells."""
        with self._lock:
            if self._event.is_set():
                return False
            self._value = value
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
            futures, self._futures = self._futures, []
        for loop, future in futures:  # a closed loop has no one awaiting any more
            call_soon_on(loop, _settle, future, value)
        for callback in callbacks:
            _call(callback, value)
        return True

    def add_done_callback(self, callback: Callable[[T], None]) -> None:
        """Call ``callback(value)`` once the value is there (at once if it already is)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        _call(callback, self._value)

    def result(self, timeout: float | None = None) -> T:
        """The value, waiting for it from a thread that is not the kernel's event loop.

        In a notebook cell, write ``await pending`` instead: waiting here would stop the
        kernel from receiving the very message that brings the value.
        """
        if self._event.is_set():
            return self._value  # type: ignore[no-any-return]
        if running_loop() is not None:
            raise UsageError(
                f"[lineup] {self._what} is not there yet, and waiting for it here would block "
                "the kernel's event loop, which is what delivers it. In a notebook cell write "
                "`await` before it (`value = await handle`), or pass a callback with "
                "`handle.add_done_callback(...)`."
            )
        if not self._event.wait(timeout):
            raise TimeoutError(f"[lineup] {self._what} did not arrive within {timeout} s")
        return self._value  # type: ignore[no-any-return]

    def __await__(self) -> Generator[Any, None, T]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        with self._lock:
            if self._event.is_set():
                future.set_result(self._value)
                hook = None
            else:
                self._futures.append((loop, future))
                hook, self.on_first_await = self.on_first_await, None
        if hook is not None:
            try:
                hook()
            except Exception:  # a pointer that failed must not keep the value from the cell
                logger.exception("[lineup] could not show where %s is asked", self._what)
        return future.__await__()


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():  # the awaiting task may have been cancelled meanwhile
        future.set_result(value)


def _call(callback: Callable[[Any], None], value: Any) -> None:
    try:
        callback(value)
    except Exception:  # one broken callback must not keep the value from the others
        logger.exception("[lineup] a done callback failed")
