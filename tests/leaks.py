"""Nothing a test starts outlives the session: no child process, no thread of ours.

A session-wide fixture (autouse, so set up first and torn down last, after every other fixture
has stopped what it started) waits a bounded time for what is still winding down, then fails the
session's last teardown naming each leftover: a server, an agent process, a kernel, a thread.
Each xdist worker checks its own session.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import psutil
import pytest

SETTLE_S = 10.0  # what was told to stop gets this long to go (a kernel takes a few seconds)
# The package's two process-wide threads, each started once on first use and idle after: the
# timers' heap and the loop that runs async handlers where no loop runs (runtime/_threads.py).
PROCESS_WIDE = {"lineup-timers", "lineup-async-handlers"}
# jupyter_core's run_sync (nbclient, jupyter_client) keeps one loop thread per process, named
# "<caller's thread> - runner", stopped at exit: a library's, started once.
LIBRARY_WIDE = " - runner"


def _children() -> list[psutil.Process]:
    alive = []
    for child in psutil.Process().children(recursive=True):
        try:
            if child.status() != psutil.STATUS_ZOMBIE:
                alive.append(child)
        except psutil.NoSuchProcess:
            pass
    return alive


def _threads(before: set[int]) -> list[threading.Thread]:
    return [
        t
        for t in threading.enumerate()
        if t.ident not in before
        and t.is_alive()
        and t.name not in PROCESS_WIDE
        and not t.name.endswith(LIBRARY_WIDE)
    ]


def _describe(process: psutil.Process) -> str:
    try:
        return f"pid {process.pid}: {' '.join(process.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {process.pid}"


@pytest.fixture(scope="session", autouse=True)
def nothing_left_running() -> Iterator[None]:
    before = {t.ident for t in threading.enumerate() if t.ident is not None}
    yield
    deadline = time.monotonic() + SETTLE_S
    while (_children() or _threads(before)) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [_describe(p) for p in _children()] + [
        f"thread {t.name} (daemon={t.daemon})" for t in _threads(before)
    ]
    if left:
        pytest.fail("the tests left these running:\n  " + "\n  ".join(left), pytrace=False)
