"""What the in-process benchmarks share: one timed pass over a list of inputs."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence
from typing import Any


def timed(run: Callable[[Any], Any], items: Sequence[Any]) -> float:
    """Nanoseconds per item for one pass, with the collector off as timeit does."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter_ns()
        for item in items:
            run(item)
        elapsed = time.perf_counter_ns() - started
    finally:
        gc.enable()
    return elapsed / len(items)
