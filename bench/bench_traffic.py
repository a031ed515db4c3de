"""Bytes the kernel sends to the host's view per operation, early and late in a session.

    .venv/bin/python bench/bench_traffic.py

Each scenario runs one operation 1 000 times on a fresh host whose widget talks to a fake comm
that counts what ipywidgets would put on the wire (the JSON of every custom message and every
trait update, buffers included). No event loop runs, so every change is sent at once: the
figures are per operation, deterministic, and no coalescing helps them. The table gives the
bytes of operation #1, #100 and #1 000 and the ratio #1 000 / #1 (the baseline is the first
operation of the same run): a cost that grows with the session shows as a ratio far above 1.
It also gives the kernel's time per operation (median of ten) at #10 and #1 000 and their
ratio: a machine's speed cancels out of it, its load does not (run it on a quiet machine).
tests/host/test_traffic.py asserts the byte targets of issue 16 on the same scenarios.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lineup_jupyter import Host, Limits

KIB = 1024
POINTS = (1, 100, 1000)
STATE_SIZES = {"1 KiB": 1 * KIB, "64 KiB": 64 * KIB, "250 KiB": 250 * KIB}
ANSWER_BYTES = 20 * KIB
ANSWER_UPDATES = 1000


class FakeComm:
    """What ipywidgets sends through: counted, never delivered."""

    comm_id = "fake-comm"
    kernel = object()  # ipywidgets sends only through a comm with a kernel

    def __init__(self) -> None:
        self.bytes = 0
        self.messages = 0

    def on_msg(self, _callback: Callable[..., Any]) -> None:
        pass

    def close(self, *_args: Any, **_kwargs: Any) -> None:
        pass

    def send(
        self,
        data: Any = None,
        metadata: Any = None,
        buffers: list[bytes] | None = None,
    ) -> None:
        self.messages += 1
        self.bytes += len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode())
        self.bytes += sum(len(buffer) for buffer in buffers or ())


# A session of a thousand operations of one kind: above the default counts (H44), which
# bound what a hostile agent holds, not what this measurement needs.
ROOMY = Limits(max_open_surfaces=5_000, max_components=5_000, max_waiting_calls=5_000)


def watched_host() -> tuple[Host, FakeComm]:
    host = Host(conversation_id="conv_traffic", limits=ROOMY)
    comm = FakeComm()
    host.widget.comm = comm
    return host, comm


def per_operation(run: Callable[[Host], Iterator[None]]) -> list[int]:
    """The bytes sent by each operation ``run`` yields after (its first yield ends the set-up,
    which is not counted)."""
    return measured(run)[0]


def measured(run: Callable[[Host], Iterator[None]]) -> tuple[list[int], list[float]]:
    """The bytes sent by each operation, and the kernel's time for it (seconds)."""
    host, comm = watched_host()
    operations = run(host)
    next(operations)
    sizes, times = [], []
    before = comm.bytes
    started = time.perf_counter()
    for _ in operations:
        now = time.perf_counter()
        times.append(now - started)
        sizes.append(comm.bytes - before)
        before = comm.bytes
        started = time.perf_counter()
    return sizes, times


def kernel_ms(times: list[float], n: int) -> float:
    """The median kernel time of the ten operations ending at #n, in milliseconds."""
    return 1000 * statistics.median(times[max(0, n - 10) : n])


def state_of(size: int) -> dict[str, Any]:
    """A dashboard-like state of about ``size`` bytes of JSON."""
    rows = [{"t": i, "value": i * 0.5, "label": f"point {i}"} for i in range(size // 30)]
    state: dict[str, Any] = {"title": "chart", "rows": rows, "cursor": 0}
    total = len(json.dumps(state))
    if total > size:  # rows are about the same size: drop enough of them at once
        del rows[len(rows) - (total - size) * len(rows) // total - 1 :]
    return state


def patch_one_field(size: int) -> Callable[[Host], Iterator[None]]:
    def run(host: Host) -> Iterator[None]:
        agent = host.connect_agent("chart")
        agent.open("chart", html="<canvas></canvas>", state=state_of(size))
        yield
        for n in range(1, POINTS[-1] + 1):
            agent.patch("chart", {"cursor": n}, merge=True)
            yield

    return run


BUNDLE_JS = "/* a 10 KiB bundle */" + "x" * (10 * KIB)


def open_surfaces(host: Host) -> Iterator[None]:
    agent = host.connect_agent("opener")
    yield
    for n in range(1, POINTS[-1] + 1):
        agent.open(f"surface.{n}", html="<div id=app></div>", js=BUNDLE_JS, state={"n": n})
        yield


MESSAGE = ("Some **Markdown** with a [link](https://example.org) and `code`. " * 17)[: KIB - 1]


def say(host: Host) -> Iterator[None]:
    agent = host.connect_agent("talker")
    yield
    for _ in range(POINTS[-1]):
        agent.say(MESSAGE)
        yield


def answer_text() -> str:
    """About 20 KiB of an agent's answer: paragraphs, a list, code, a table."""
    parts = []
    n = 0
    while sum(len(part) for part in parts) < ANSWER_BYTES:
        n += 1
        parts.append(
            f"## Step {n}\n\nThe data of step {n} came back with **{n * 7} rows**; "
            "see [the run](https://example.org/run) for details.\n\n"
            f"- checked {n} sources\n- kept `{n * 3}` rows\n\n"
            f"```python\nrows = fetch(step={n})\n```\n\n| a | b |\n|---|---|\n| {n} | {n * 2} |\n\n"
        )
    return "".join(parts)[:ANSWER_BYTES]


def chunks(text: str, count: int) -> list[str]:
    """``text`` in ``count`` pieces of nearly the same length (a model's tokens)."""
    return [text[len(text) * i // count : len(text) * (i + 1) // count] for i in range(count)]


def stream_by_say(host: Host) -> Iterator[None]:
    """How most agent loops stream today: say() the whole text so far, same component id."""
    agent = host.connect_agent("streamer")
    yield
    text = ""
    for piece in chunks(answer_text(), ANSWER_UPDATES):
        text += piece
        agent.say(text, component_id="answer")
        yield


def stream_by_append(host: Host) -> Iterator[None]:
    """The same answer through agent.stream (H45): one component.append per piece."""
    agent = host.connect_agent("streamer")
    with agent.stream("answer") as stream:
        yield
        for piece in chunks(answer_text(), ANSWER_UPDATES):
            stream.write(piece)
            yield


def update_component(host: Host) -> Iterator[None]:
    """A progress bar moved while 1 000 other components are shown."""
    agent = host.connect_agent("worker")
    for n in range(POINTS[-1]):
        agent.status(f"step {n}", "done")
    yield
    for n in range(1, POINTS[-1] + 1):
        agent.progress(n, POINTS[-1], label="work", component_id="bar")
        yield


def scenarios() -> dict[str, Callable[[Host], Iterator[None]]]:
    found: dict[str, Callable[[Host], Iterator[None]]] = {
        f"merge-patch one field of a {name} state": patch_one_field(size)
        for name, size in STATE_SIZES.items()
    }
    found["open a surface (10 KiB bundle)"] = open_surfaces
    found["say 1 KiB of Markdown (a new component)"] = say
    found["stream a 20 KiB answer by say() (1 000 updates)"] = stream_by_say
    found["stream a 20 KiB answer by agent.stream (1 000 writes)"] = stream_by_append
    found["update a component among 1 000"] = update_component
    return found


def main() -> None:
    print(
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs: bytes sent to the view by "
        "operation #n, and the kernel's time for it (median of the ten ending at #n)"
    )
    print()
    print(
        "| operation | bytes #1 | #100 | #1 000 | #1 000 / #1 | total "
        "| kernel ms #10 | #1 000 | #1 000 / #10 |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, run in scenarios().items():
        sizes, times = measured(run)
        first, middle, last = (sizes[n - 1] for n in POINTS)
        early, late = kernel_ms(times, 10), kernel_ms(times, POINTS[-1])
        print(
            f"| {name} | {first:,} | {middle:,} | {last:,} | {last / first:.2f} "
            f"| {sum(sizes):,} | {early:.2f} | {late:.2f} | {late / early:.2f} |".replace(",", " ")
        )


if __name__ == "__main__":
    main()
