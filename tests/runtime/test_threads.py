"""_threads.py: where work runs (the kernel's loop, else now, else a thread of its own).

Each function on the three places a call comes from: the loop's own thread (a cell, a comm
message on ipykernel 7.4), another thread while a loop runs (a transport's reader, a comm
handler on a 7.0-7.3 subshell), and a program with no loop (a script, pytest). What the work
raises is reported in the log with ``[lineup]``, never swallowed nor raised into the caller.
Nothing here sleeps to wait: every test waits on an event or a future.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from lineup_jupyter.runtime import _threads
from lineup_jupyter.runtime._threads import (
    HostThread,
    Pacer,
    call_later,
    call_soon_on,
    live,
    repeat,
    running_loop,
    spawn,
)

WAIT = 10.0  # seconds a test waits for a signal before it fails (never reached when it works)


class LoopThread:
    """An event loop running on a thread of its own: the kernel's, as another thread sees it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        started = threading.Event()
        self.loop.call_soon(started.set)
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        assert started.wait(WAIT)

    def run(self, make: Callable[[], Any]) -> Any:
        """``make()`` called on the loop's thread, inside the loop (as a cell runs)."""

        async def inside() -> Any:
            return make()

        return asyncio.run_coroutine_threadsafe(inside(), self.loop).result(WAIT)

    def close(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(WAIT)
        self.loop.close()


@pytest.fixture
def kernel() -> Iterator[LoopThread]:
    loop_thread = LoopThread()
    yield loop_thread
    loop_thread.close()


class Ran:
    """Work that records the thread it ran on; ``fail`` makes it raise."""

    def __init__(self, fail: bool = False) -> None:
        self.threads: list[int] = []
        self.names: list[str] = []
        self.done = threading.Event()
        self.fail = fail

    def __call__(self, *args: Any) -> None:
        self.threads.append(threading.get_ident())
        self.names.append(threading.current_thread().name)
        self.done.set()
        if self.fail:
            raise RuntimeError("the work broke")


def reported(caplog: pytest.LogCaptureFixture, what: str) -> bool:
    return any(
        record.levelno == logging.ERROR
        and record.getMessage() == f"[lineup] {what} failed"
        and record.exc_info is not None
        and "the work broke" in str(record.exc_info[1])
        for record in caplog.records
    )


# ---- running_loop, live ---------------------------------------------------------------


def test_running_loop_is_the_loop_of_this_thread_only(kernel: LoopThread) -> None:
    assert running_loop() is None  # pytest's thread runs no loop
    assert kernel.run(running_loop) is kernel.loop
    assert live(kernel.loop) and not live(None)
    stopped = asyncio.new_event_loop()
    assert not live(stopped)  # made, never run: nothing would run what is handed to it
    stopped.close()


# ---- HostThread.call -------------------------------------------------------------------


def test_call_on_the_loops_own_thread_runs_now(kernel: LoopThread) -> None:
    work = Ran()

    def in_a_cell() -> bool:
        HostThread().call(work, "the work")
        return work.done.is_set()  # before call() returned: no waiting on the loop it holds

    assert kernel.run(in_a_cell) is True
    assert work.threads == [kernel.thread.ident]


def test_call_from_another_thread_runs_on_the_loop(kernel: LoopThread) -> None:
    home = kernel.run(HostThread)
    work = Ran()
    home.call(work, "the work")  # from pytest's thread, as a transport's reader calls it
    assert work.done.wait(WAIT)
    assert work.threads == [kernel.thread.ident]  # not here: the widget is the loop's


def test_call_with_no_loop_runs_now_on_the_callers_thread() -> None:
    home = HostThread()  # a script: no loop where it was made
    work = Ran()
    home.call(work, "the work")
    assert work.threads == [threading.get_ident()]


def test_call_after_the_loop_stopped_runs_now(kernel: LoopThread) -> None:
    """A finished script's loop runs nothing more: the work must not be queued and lost."""
    home = kernel.run(HostThread)
    kernel.close()
    work = Ran()
    home.call(work, "the work")
    assert work.threads == [threading.get_ident()]
    assert home.post(Ran(), "the work") is False  # and post says nothing was queued


@pytest.mark.parametrize("where", ["on the loop", "from another thread", "with no loop"])
def test_call_reports_what_the_work_raises(
    where: str, kernel: LoopThread, caplog: pytest.LogCaptureFixture
) -> None:
    work = Ran(fail=True)
    control = Ran()
    if where == "on the loop":
        kernel.run(lambda: HostThread().call(work, "the work"))
    elif where == "from another thread":
        home = kernel.run(HostThread)
        home.call(work, "the work")
        home.call(control, "the control")  # runs after: the failure is logged by then
        assert control.done.wait(WAIT)
    else:
        HostThread().call(work, "the work")  # does not raise into the caller
    assert work.done.is_set()
    assert reported(caplog, "the work")


def test_post_queues_even_from_the_loops_thread(kernel: LoopThread) -> None:
    """post() always runs on a later turn (a drain that yields to the kernel's other work)."""
    work = Ran()

    def in_a_cell() -> tuple[bool, bool]:
        queued = HostThread().post(work, "the work")
        return queued, work.done.is_set()

    assert kernel.run(in_a_cell) == (True, False)
    assert work.done.wait(WAIT)
    assert HostThread().post(Ran(), "the work") is False  # no loop here: nothing queued


# ---- call_soon_on ----------------------------------------------------------------------


def test_call_soon_on_wakes_a_future_awaited_on_the_loop(kernel: LoopThread) -> None:
    """How a click resolved on a subshell thread (ipykernel 7.0-7.3) wakes an awaiting cell."""
    future: asyncio.Future[str] = kernel.run(kernel.loop.create_future)

    async def cell() -> str:
        return await future

    awaited = asyncio.run_coroutine_threadsafe(cell(), kernel.loop)
    assert call_soon_on(kernel.loop, future.set_result, "allowed") is True
    assert awaited.result(WAIT) == "allowed"


def test_call_soon_on_a_closed_loop_queues_nothing(
    kernel: LoopThread, caplog: pytest.LogCaptureFixture
) -> None:
    work = Ran(fail=True)
    assert call_soon_on(kernel.loop, work) is True
    control = Ran()
    call_soon_on(kernel.loop, control)
    assert control.done.wait(WAIT)
    assert work.threads == [kernel.thread.ident]
    assert reported(caplog, "a callback")  # with [lineup] and the traceback
    kernel.close()
    assert call_soon_on(kernel.loop, Ran()) is False


# ---- call_later ------------------------------------------------------------------------


def test_call_later_on_the_loop_is_a_loop_timer(kernel: LoopThread) -> None:
    work = Ran()
    kernel.run(lambda: call_later(0, work, what="the timer"))
    assert work.done.wait(WAIT)
    assert work.threads == [kernel.thread.ident]  # no thread of its own in a kernel


def test_call_later_with_no_loop_is_a_daemon_thread() -> None:
    work = Ran()
    call_later(0, work, what="the timer")
    assert work.done.wait(WAIT)
    assert work.threads != [threading.get_ident()]


@pytest.mark.parametrize("on_loop", [True, False])
def test_a_cancelled_timer_never_runs(on_loop: bool, kernel: LoopThread) -> None:
    cancelled, control = Ran(), Ran()

    def start() -> None:
        call_later(0.05, cancelled, what="the cancelled timer").cancel()
        call_later(0.2, control, what="the control")  # fires after the cancelled one would

    kernel.run(start) if on_loop else start()
    assert control.done.wait(WAIT)
    assert cancelled.threads == []


@pytest.mark.parametrize("on_loop", [True, False])
def test_call_later_reports_what_the_work_raises(
    on_loop: bool, kernel: LoopThread, caplog: pytest.LogCaptureFixture
) -> None:
    work = Ran(fail=True)
    timer = kernel.run(lambda: call_later(0, work, what="the timer")) if on_loop else None
    if timer is None:
        call_later(0, work, what="the timer")
        assert work.done.wait(WAIT)
        deadline = time.monotonic() + WAIT  # logged on the timers' thread, after done is set
        while not reported(caplog, "the timer") and time.monotonic() < deadline:
            time.sleep(0.01)
    else:
        assert work.done.wait(WAIT)
        kernel.run(lambda: None)  # a later turn of the loop: the failing callback has ended
    assert reported(caplog, "the timer")


def test_call_later_caps_a_far_delay_at_a_day() -> None:
    """An expires_at in the year 9999 must not overflow a thread's wait: it looks again."""
    timer = call_later(1e12, Ran(), what="the far timer")
    assert isinstance(timer, _threads._ThreadTimer)
    assert 86_000 < timer.when - time.monotonic() <= 86_400.0
    timer.cancel()


def test_call_later_with_no_loop_costs_one_thread_however_many_timers() -> None:
    """A thousand waiting calls' expiry timers are a thousand heap entries on one thread, not a
    thousand threads (control: the count of threads named for the timers is exactly one)."""
    before = threading.active_count()
    works = [Ran() for _ in range(1000)]
    # Odd timers are due at once, even ones (cancelled) a second later: time enough to cancel
    # them first however loaded the machine is. The one thread runs the heap in deadline order,
    # so once a last timer due after all of them has run, every cancelled one's time has come.
    timers = [
        call_later((n % 2 == 0) + n / 100_000, work, what="a timer") for n, work in enumerate(works)
    ]
    last = Ran()
    call_later(1.1, last, what="after them all")
    assert threading.active_count() <= before + 1
    for timer in timers[::2]:
        timer.cancel()
    assert all(work.done.wait(WAIT) for work in [*works[1::2], last])
    assert not any(work.done.is_set() for work in works[::2])  # cancelled: never ran
    assert [t.name for t in threading.enumerate()].count("lineup-timers") == 1
    assert len({thread for work in works[1::2] for thread in work.threads}) == 1


def test_a_cancelled_timer_lets_go_of_its_work_at_once() -> None:
    """What a cancelled timer's work holds (a host, its broker) is not kept alive for the day
    its deadline may be away: the timer drops the work when cancelled (control: held before)."""
    work = Ran()
    held = weakref.ref(work)
    timer = call_later(3_600, work, what="an hour away")
    del work
    gc.collect()
    assert held() is not None  # control: the pending timer holds its work
    timer.cancel()
    gc.collect()
    assert held() is None


# ---- Pacer -----------------------------------------------------------------------------


def test_pacer_with_no_loop_runs_at_once() -> None:
    work = Ran()
    pacer = Pacer(60.0, work, "the pacer")
    pacer.request()
    pacer.request()
    assert len(work.threads) == 2


def test_pacer_on_the_loop_runs_a_burst_once(kernel: LoopThread) -> None:
    work = Ran()
    pacer = Pacer(0, work, "the pacer")

    def burst() -> bool:
        for _ in range(100):
            pacer.request()
        return work.done.is_set()

    assert kernel.run(burst) is False  # not during the cell's burst
    assert work.done.wait(WAIT)
    kernel.run(lambda: None)  # one more turn: nothing else was scheduled
    assert work.threads == [kernel.thread.ident]


def test_pacer_now_runs_and_cancels_the_scheduled_run(kernel: LoopThread) -> None:
    work = Ran()
    pacer = Pacer(3600.0, work, "the pacer")

    def requested_then_flushed() -> int:
        pacer.request()  # the first request: scheduled for the loop's next turn
        pacer.now()
        return len(work.threads)

    assert kernel.run(requested_then_flushed) == 1
    kernel.run(lambda: None)  # the loop's next turn: the cancelled run does not run
    kernel.run(pacer.request)  # within the interval: waits an hour
    kernel.run(lambda: None)
    assert len(work.threads) == 1
    kernel.run(pacer.now)  # what the hour's run does: the request was kept, not dropped
    assert len(work.threads) == 2


# ---- repeat ----------------------------------------------------------------------------


@pytest.mark.parametrize("on_loop", [True, False])
def test_repeat_runs_until_stopped_and_goes_on_after_a_failure(
    on_loop: bool, kernel: LoopThread, caplog: pytest.LogCaptureFixture
) -> None:
    runs: list[int] = []
    enough = threading.Event()
    stopped = threading.Event()

    def work() -> None:
        runs.append(threading.get_ident())
        if len(runs) == 1:
            raise RuntimeError("the work broke")  # reported, and the next turn comes anyway
        if len(runs) == 3:
            repeating.stop()  # from inside the work, as a watcher that finds its surface gone
            enough.set()
        if len(runs) > 3:
            stopped.set()  # a run after stop(): the bad thing

    def start() -> Any:
        return repeat(0.01, work, what="the poller", name="lineup-test-poller")

    repeating = kernel.run(start) if on_loop else start()
    assert enough.wait(WAIT)
    assert reported(caplog, "the poller")
    control = Ran()
    call_later(0.1, control, what="the control")  # ten intervals later
    assert control.done.wait(WAIT)
    assert not stopped.is_set() and len(runs) == 3
    if on_loop:
        assert set(runs) == {kernel.thread.ident}
    else:
        assert threading.get_ident() not in runs


# ---- spawn -----------------------------------------------------------------------------


def test_spawn_on_the_loop_is_a_task_there(kernel: LoopThread) -> None:
    ran = Ran()

    async def handler() -> None:
        ran()

    kernel.run(lambda: spawn(handler(), home=None, what="a handler", on_failure=print))
    assert ran.done.wait(WAIT)
    assert ran.threads == [kernel.thread.ident]


def test_spawn_from_a_thread_goes_to_the_home_loop_else_one_of_its_own(kernel: LoopThread) -> None:
    at_home, fallback = Ran(), Ran()

    async def handler(ran: Ran) -> None:
        ran()

    spawn(handler(at_home), home=kernel.loop, what="a handler", on_failure=print)
    assert at_home.done.wait(WAIT)
    assert at_home.threads == [kernel.thread.ident]  # the notebook's loop, where it was made
    kernel.close()
    spawn(handler(fallback), home=kernel.loop, what="a handler", on_failure=print)
    assert fallback.done.wait(WAIT)
    assert fallback.names == ["lineup-async-handlers"]  # the loop thread of its own


@pytest.mark.parametrize("on_loop", [True, False])
def test_spawn_reports_what_the_coroutine_raises(on_loop: bool, kernel: LoopThread) -> None:
    failures: list[BaseException] = []
    reported_it = threading.Event()

    def on_failure(exc: BaseException) -> None:
        failures.append(exc)
        reported_it.set()

    async def handler() -> None:
        raise RuntimeError("the work broke")

    def start() -> None:
        spawn(handler(), home=None, what="a handler", on_failure=on_failure)

    kernel.run(start) if on_loop else start()
    assert reported_it.wait(WAIT)
    assert [str(exc) for exc in failures] == ["the work broke"]


def test_a_loop_thread_runs_coroutines_off_the_callers_thread_and_closes_when_stopped() -> None:
    """runtime's LoopThread (an MCP server's session loop): work submitted from any thread
    runs on its own thread; stopped, what still runs is cancelled and the loop closes."""
    loop_thread = _threads.LoopThread("lineup-test-loop")
    forever = asyncio.Event()

    async def where() -> int:
        return threading.get_ident()

    async def never() -> None:
        await forever.wait()

    assert loop_thread.submit(where()).result(WAIT) != threading.get_ident()
    assert not loop_thread.on_thread()
    pending = loop_thread.submit(never())
    loop_thread.stop()
    with pytest.raises(BaseException):  # cancelled by the stop, not left pending  # noqa: B017, PT011
        pending.result(WAIT)
    loop_thread._thread.join(WAIT)
    assert loop_thread.loop.is_closed()


@pytest.mark.parametrize(
    "guarded",
    [
        pytest.param(
            True,
            id="guarded",
            marks=pytest.mark.skipif(
                sys.version_info < (3, 11),
                reason="Task.cancelling() is Python 3.11+: on 3.10 only McpConnection's own "
                "single cancel keeps a session's cleanup whole",
            ),
        ),
        pytest.param(False, id="control"),
    ],
)
def test_a_stopped_loop_thread_lets_a_cancelled_task_finish_its_cleanup(
    guarded: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An MCP server's session is cancelled, then its loop stopped: the stop must not cancel
    it a second time, which breaks into its shielded cleanup (the process it ends is then
    killed but never reaped). The control: with every task cancelled again, the cleanup
    is cut short, so the test sees the break."""
    import anyio

    if not guarded:
        monkeypatch.setattr(_threads, "_cancelling", lambda task: False)
    loop_thread = _threads.LoopThread("lineup-test-loop")
    began, in_cleanup = threading.Event(), threading.Event()
    cleaned: list[str] = []
    tasks: list[asyncio.Task[None]] = []

    async def session() -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.append(task)
        began.set()
        try:
            await asyncio.Event().wait()
        finally:
            with anyio.CancelScope(shield=True):
                in_cleanup.set()
                try:
                    # The process's bounded wait, as _stdio's stop; far longer than the stop
                    # takes to reach it, so the control's second cancel lands inside it.
                    await asyncio.sleep(0.5)
                    cleaned.append("done")
                except asyncio.CancelledError:
                    cleaned.append("broken")
                    raise

    future = loop_thread.submit(session())
    assert began.wait(WAIT)
    loop_thread.loop.call_soon_threadsafe(tasks[0].cancel)
    assert in_cleanup.wait(WAIT)
    loop_thread.stop()
    loop_thread.join(WAIT)
    assert loop_thread.loop.is_closed()
    assert future.cancelled()
    assert cleaned == (["done"] if guarded else ["broken"])


def test_a_stopped_worker_runs_what_it_is_still_given_and_its_thread_ends() -> None:
    """An MCP server that ended stops its worker at once (no thread left per dead server);
    work handed over after that (an answer arriving late) still runs, on the caller's
    thread. The control: before the stop, work runs on the worker's own thread."""
    worker = _threads.Worker("test-worker")
    where: list[str] = []
    done = threading.Event()
    worker.submit(lambda: (where.append(threading.current_thread().name), done.set()))
    assert done.wait(5) and where == ["test-worker"]
    worker.stop()
    worker.stop()  # twice: nothing more
    worker.join(5)
    assert "test-worker" not in [t.name for t in threading.enumerate()]
    worker.submit(lambda: where.append(threading.current_thread().name))
    assert where == ["test-worker", threading.current_thread().name]
