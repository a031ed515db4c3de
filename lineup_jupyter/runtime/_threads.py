"""Where work runs: on the kernel's event loop, else now, else on a thread of its own.

The one home of what we know about threads in a Jupyter kernel; every module that hands work
across threads or waits does it through these functions, never with ``call_soon_threadsafe``,
``get_running_loop`` or a ``threading.Thread`` of its own. Why it matters (measured; see
docs/testing.md, "Where a message handler runs"):

- ipykernel 7.4 runs a cell inside its asyncio loop, and handles widget messages on that same
  main thread while an ``async`` cell awaits: so ``await`` on a future a click resolves works,
  and anything that touches a widget (a synced trait, ``send``) must run on that loop's thread.
- A cell that blocks (a ``time.sleep`` loop, ``Event.wait``) holds the loop, so the message
  that would end the wait is never handled: the kernel deadlocks. Nothing here ever blocks on
  the loop's own thread; ``Pending.result`` refuses to.
- ipykernel 7.0-7.3 handled comm messages on a subshell thread: a handler there must resolve
  futures and touch the widget through the loop (``call_soon_threadsafe``), never directly.
- A script, pytest or a transport's reader thread has no running loop at all: there the work
  runs at once (under the host's lock, which its callers hold), or on a daemon thread when it
  has to wait (a timer, a poller).

Work handed over here never raises into the caller, which may be a reader thread or a timer
that does not own it: what it raises is logged with ``[lineup]`` and its name, with the
traceback, on every path (now, on the loop, on a thread). Imports nothing from the package.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import queue
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import Future
from typing import Any, Protocol, TypeVar

__all__ = [
    "HostThread",
    "LoopThread",
    "Pacer",
    "Repeating",
    "Timer",
    "Worker",
    "call_later",
    "call_soon_on",
    "live",
    "repeat",
    "running_loop",
    "spawn",
]

logger = logging.getLogger("lineup_jupyter")

T = TypeVar("T")
_LONGEST_WAIT = 86_400.0  # seconds a timer waits at most (see call_later)


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running on this thread, if any (a notebook cell, a comm handler on
    ipykernel 7.4); None in a script, a test, or a transport's thread."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def live(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether ``loop`` still runs and so will run what is handed to it (a finished script's
    loop is closed or stopped: nobody is left to run its callbacks)."""
    return loop is not None and loop.is_running() and not loop.is_closed()


def _reported(work: Callable[..., Any], what: str, *args: Any) -> Callable[[], None]:
    def run() -> None:
        try:
            work(*args)
        except Exception:  # the caller does not own this work: say so, never swallow it
            logger.exception("[lineup] %s failed", what)

    return run


class Worker:
    """One daemon thread that runs what it is given, in order: the host's thread for a
    transport whose own thread must never wait for the host's lock (a listener's one I/O
    thread), when no event loop runs where it was made (a script, pytest)."""

    def __init__(self, name: str) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._stopped = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, work: Callable[[], None], what: str = "work for the host") -> None:
        """Queue ``work``; once stopped, run it now on the caller's thread (the worker's
        thread is gone, and work handed over must still run)."""
        with self._lock:
            if not self._stopped:
                self._queue.put(_reported(work, what))
                return
        _reported(work, what)()

    def stop(self) -> None:
        """End the thread once what it was given ran (stopping twice does nothing)."""
        with self._lock:
            if not self._stopped:
                self._stopped = True
                self._queue.put(None)

    def join(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the thread to end (after ``stop``)."""
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self) -> None:
        while (work := self._queue.get()) is not None:
            work()  # reported: a failure is logged and the next one runs


class LoopThread:
    """An asyncio loop of its own on one daemon thread: for I/O that must never run on the
    kernel's loop (an MCP server's session: a hung server then stalls this thread, never the
    kernel; the listener's sockets: a slow agent never holds the kernel). ``submit`` hands it
    a coroutine from any thread; the caller waits on the returned future with a deadline, or
    adds a callback."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        loop = self.loop
        asyncio.set_event_loop(loop)  # for libraries that look the loop up on this thread
        try:
            loop.run_forever()
            # Stopped: what still runs is cancelled and let finish, then the loop closes. A
            # task cancelled already is in its cleanup: a second cancel would break into it
            # even under anyio's shield (measured: an MCP server's stop cut short, its
            # process never reaped), so it is let finish.
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                if not _cancelling(task):
                    task.cancel()
            if tasks:
                loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        # The coroutine itself becomes the task: cancelled before it started (the loop
        # stopped), it is closed, not left "never awaited".
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def on_thread(self) -> bool:
        return threading.get_ident() == self._thread.ident

    def stop(self) -> None:
        """Stop the loop once what it runs now yields; the thread then ends."""
        with contextlib.suppress(RuntimeError):  # closed already
            self.loop.call_soon_threadsafe(self.loop.stop)

    def join(self, timeout: float) -> None:
        """Wait at most ``timeout`` seconds for the thread to end (after ``stop``)."""
        self._thread.join(timeout)


def _cancelling(task: asyncio.Task[Any]) -> bool:
    """Whether a cancel of ``task`` was asked for already (Python 3.11+; on 3.10, False)."""
    cancelling = getattr(task, "cancelling", None)
    return callable(cancelling) and bool(cancelling())


class HostThread:
    """The thread the host and its widget belong to, as seen where this is made: the event
    loop running there (a notebook cell: the kernel's loop), or none (a script, pytest); then
    the ``worker``, if given, else the caller's thread."""

    def __init__(self, worker: Worker | None = None) -> None:
        self.loop = running_loop()
        self.ident = threading.get_ident()
        self.worker = worker

    def loop_to_use(self) -> asyncio.AbstractEventLoop | None:
        """The loop to hand work to; None to do it here, now (no live loop, or on it)."""
        if threading.get_ident() == self.ident or not live(self.loop):
            return None
        return self.loop

    def defers(self) -> bool:
        """Whether ``call`` runs its work later (on the loop or the worker), not now."""
        return self.loop_to_use() is not None or self.worker is not None

    def post(self, work: Callable[[], None], what: str = "work for the kernel's thread") -> bool:
        """Queue ``work`` on the loop, even from its own thread (it runs on a later turn);
        False when there is no live loop to run it, and nothing was queued."""
        loop = self.loop
        if loop is None or not live(loop):
            return False
        try:
            loop.call_soon_threadsafe(_reported(work, what))
        except RuntimeError:  # the loop closed since we looked: nobody else will run it
            return False
        return True

    def call(self, work: Callable[[], None], what: str = "work for the kernel's thread") -> None:
        """Run ``work`` where the host may be used: soon on the loop (from another thread), or
        on the worker, else now. Never raises what ``work`` raises (it is logged)."""
        if self.loop_to_use() is not None and self.post(work, what):
            return
        if self.worker is not None:
            self.worker.submit(work, what)
        else:
            _reported(work, what)()


def call_soon_on(loop: asyncio.AbstractEventLoop, work: Callable[..., Any], *args: Any) -> bool:
    """Run ``work(*args)`` on ``loop``'s thread soon, from any thread: how a value wakes a
    cell awaiting a future made on that loop. False when the loop has closed (no one can
    await there any more) and nothing was queued."""
    if loop.is_closed():
        return False
    try:
        loop.call_soon_threadsafe(_reported(work, getattr(work, "__name__", "a callback"), *args))
    except RuntimeError:  # closed meanwhile
        return False
    return True


class Timer(Protocol):
    """What ``call_later`` returns: an asyncio TimerHandle or a timer of the timers' thread."""

    def cancel(self) -> None: ...


class _ThreadTimer:
    """One deadline on the timers' thread; ``cancel()`` drops its work at once, so what the
    work holds (a host, its broker) is not kept alive until the deadline."""

    __slots__ = ("job", "owner", "when")

    def __init__(self, owner: _Timers, when: float, job: Callable[[], None]) -> None:
        self.owner = owner
        self.when = when
        self.job: Callable[[], None] | None = job

    def __lt__(self, other: _ThreadTimer) -> bool:
        return self.when < other.when

    def cancel(self) -> None:
        self.owner.cancel(self)


class _Timers:
    """Every timer of a program with no loop here (a script, a test, a subshell handler), on
    one daemon thread ``lineup-timers`` started on first use: a heap of deadlines, so a thousand
    waiting calls cost a thousand entries, not a thousand threads. The work runs on that thread,
    one timer at a time, outside the heap's lock."""

    def __init__(self) -> None:
        self._heap: list[_ThreadTimer] = []
        self._cancelled = 0  # entries of the heap whose work was dropped
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, delay: float, job: Callable[[], None]) -> _ThreadTimer:
        timer = _ThreadTimer(self, time.monotonic() + delay, job)
        with self._changed:
            heapq.heappush(self._heap, timer)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lineup-timers", daemon=True)
                self._thread.start()
            self._changed.notify()
        return timer

    def cancel(self, timer: _ThreadTimer) -> None:
        with self._changed:
            if timer.job is None:
                return
            timer.job = None
            self._cancelled += 1
            if self._cancelled * 2 > len(self._heap) > 64:
                # A cancelled timer would wait in the heap for its deadline (up to a day):
                # past half, drop them all at once, so the heap stays the size of what is
                # pending, at a cost shared by the cancels that made it necessary.
                self._heap = [t for t in self._heap if t.job is not None]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._changed:
                while True:
                    while self._heap and self._heap[0].job is None:
                        heapq.heappop(self._heap)
                        self._cancelled -= 1
                    if not self._heap:
                        self._changed.wait()
                        continue
                    wait = self._heap[0].when - time.monotonic()
                    if wait <= 0:
                        due = heapq.heappop(self._heap)
                        job, due.job = due.job, None
                        break
                    self._changed.wait(wait)
            if job is not None:
                job()  # reported: it never raises (_reported)


_timers = _Timers()


def call_later(delay: float, work: Callable[..., Any], *args: Any, what: str) -> Timer:
    """Run ``work(*args)`` after ``delay`` seconds: a timer of the loop running here (in a
    kernel: no thread, and it runs on the kernel's thread), else a timer of the one timers'
    thread (a script, a test, a handler on a subshell thread). ``cancel()`` stops it. ``delay``
    is capped at a day: a caller that needs longer looks again when this fires (a date in the
    year 9999 is no deadline to sleep towards)."""
    delay = min(max(0.0, delay), _LONGEST_WAIT)
    job = _reported(work, what, *args)
    loop = running_loop()
    if loop is not None:
        return loop.call_later(delay, job)
    return _timers.add(delay, job)


class Pacer:
    """Runs ``work`` at most once every ``interval`` seconds, on the loop running where it is
    asked for, always ending on the latest request; with no loop, at once. An ``interval`` of
    0 runs it on the loop's next turn: a burst of requests from one cell costs one run."""

    def __init__(self, interval: float, work: Callable[[], None], what: str) -> None:
        self._interval = interval
        self._work = work
        self._what = what
        self._handle: asyncio.Handle | None = None
        self._last: float | None = None  # the loop's time of the last run

    def request(self) -> None:
        """Ask for a run: now without a loop, else when the interval since the last allows."""
        if self._handle is not None:
            return
        loop = running_loop()
        if loop is None:
            _reported(self.now, self._what)()
            return
        wait = 0.0 if self._last is None else self._last + self._interval - loop.time()
        if self._interval <= 0:
            self._handle = loop.call_soon(_reported(self.now, self._what))
        else:
            self._handle = loop.call_later(max(0.0, wait), _reported(self.now, self._what))

    def now(self) -> None:
        """Run ``work`` now (what a scheduled run does), cancelling the one scheduled."""
        if self._handle is not None:  # also when the handle itself runs this: a no-op
            self._handle.cancel()
            self._handle = None
        loop = running_loop()
        if loop is not None:
            self._last = loop.time()
        self._work()


class Repeating:
    """What ``repeat`` returns: ``stop()`` ends it (from any thread, also from ``work``)."""

    def __init__(self) -> None:
        self.stopped = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def stop(self) -> None:
        self.stopped.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None and not loop.is_closed():
            # Wake the sleeping task now rather than one interval later; a loop that closed
            # meanwhile (RuntimeError) will never run it again anyway.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(task.cancel)


def repeat(interval: float, work: Callable[[], None], *, what: str, name: str) -> Repeating:
    """Run ``work()`` every ``interval`` seconds until ``stop()``: as a task of the loop
    running here (a notebook cell: it then runs on the kernel's thread, like the rest of the
    host's work), else on a daemon thread. A ``work`` that raises is logged and runs again
    on the next turn; one that wants to stop calls ``stop()``. ``name`` names the task or
    thread (what a test or a debugger sees), ``what`` the work in the log."""
    repeating = Repeating()
    job = _reported(work, what)
    loop = running_loop()
    if loop is not None:

        async def poll() -> None:
            while not repeating.stopped.is_set():
                await asyncio.sleep(interval)
                if not repeating.stopped.is_set():
                    job()

        repeating._loop = loop
        repeating._task = loop.create_task(poll(), name=name)
    else:

        def poll_in_thread() -> None:
            while not repeating.stopped.wait(interval):
                job()

        threading.Thread(target=poll_in_thread, name=name, daemon=True).start()
    return repeating


_tasks: set[asyncio.Task[Any]] = set()  # strong references: a loop keeps only weak ones
_fallback: asyncio.AbstractEventLoop | None = None
_fallback_lock = threading.Lock()


def _fallback_loop() -> asyncio.AbstractEventLoop:
    """One loop thread for coroutines in a program with no running loop (a script)."""
    global _fallback
    with _fallback_lock:
        if _fallback is None or _fallback.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(
                target=loop.run_forever, name="lineup-async-handlers", daemon=True
            ).start()
            _fallback = loop
        return _fallback


def spawn(
    awaitable: Awaitable[Any],
    *,
    home: asyncio.AbstractEventLoop | None,
    what: str,
    on_failure: Callable[[BaseException], None],
) -> None:
    """Run ``awaitable`` as a task: on the loop running here, else on ``home`` (the loop a
    notebook's agent was made on) while it runs, else on one loop thread of our own (a plain
    script). What it raises goes to ``on_failure`` (never to the caller); a cancel does not."""

    def finished(future: asyncio.Future[Any] | Future[Any]) -> None:
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            _reported(on_failure, f"reporting what {what} raised", exc)()

    async def run() -> Any:
        return await awaitable

    loop = running_loop()
    if loop is not None:
        task = loop.create_task(run(), name=f"lineup {what}")
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)
        task.add_done_callback(finished)
        return
    target = home if home is not None and live(home) else _fallback_loop()
    asyncio.run_coroutine_threadsafe(run(), target).add_done_callback(finished)
