"""Bytes the kernel sends to the view per operation (issue 16): each change alone, whatever
came before it. Counted by bench/bench_traffic.py's fake comm, so deterministic: byte targets
are asserted here, times never."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from lineup_jupyter import render_markdown

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_traffic.py"


@pytest.fixture(scope="module")
def traffic() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_traffic", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_traffic", module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    "name",
    [
        "merge-patch one field of a 250 KiB state",
        "open a surface (10 KiB bundle)",
        "say 1 KiB of Markdown (a new component)",
        "stream a 20 KiB answer by say() (1 000 updates)",
        "stream a 20 KiB answer by agent.stream (1 000 writes)",
        "update a component among 1 000",
    ],
)
def test_the_1000th_operation_costs_what_the_first_does(traffic: ModuleType, name: str) -> None:
    """H6, H13: the n-th operation sends its change, not the session before it (ratio
    #1 000 / #1 at most 1.5)."""
    sizes = traffic.per_operation(traffic.scenarios()[name])
    assert len(sizes) == 1000
    assert max(sizes[99], sizes[999]) <= 1.5 * sizes[0], (sizes[0], sizes[99], sizes[999])


def test_a_one_field_patch_of_a_250_kib_state_sends_under_2_kib(traffic: ModuleType) -> None:
    """H6: a merge patch travels as the patch and the revision it applies to."""
    run = traffic.patch_one_field(250 * 1024)
    sizes = traffic.per_operation(run)
    assert max(sizes) < 2048


@pytest.mark.parametrize("how", ["stream_by_say", "stream_by_append"])
def test_a_streamed_answer_costs_its_own_size_plus_each_messages_overhead(
    traffic: ModuleType, how: str
) -> None:
    """H13, H45: a say() repeating a component id with a longer text, or a stream's write,
    sends only the new end (the re-rendered end of its last Markdown block): 1 000 updates
    of a 20 KiB answer cost under twice the answer as the view gets it (its sanitized HTML)
    plus a fixed envelope per message."""
    sizes = traffic.per_operation(getattr(traffic, how))
    html = render_markdown(traffic.answer_text())
    overhead = len(
        '{"method":"custom","content":{"kind":"feed","seq":1000,"ops":[{"op":"splice",'
        '"component_id":"answer","rev":1000,"field":"html","cut":100,"add":""}]}}'
    )
    assert sum(sizes) < 2 * len(html) + len(sizes) * overhead, (sum(sizes), len(html))
