"""H44: every count the host keeps is bounded, and a refusal beyond it is cheap and precise.

Counts (Limits): open surfaces, components, waiting calls; memory kept for nothing: an
answered call keeps a fingerprint, a refused oversize message an excerpt (measured with
tracemalloc: bytes still held, never time). The listener's limits are in test_listener.py.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host, Limits, ProtocolError

from ..conftest import consent_state, envelope, feed, open_payload

MiB = 1024 * 1024


def refusal(error: Any) -> tuple[str, str, str]:
    assert error is not None
    return (error.code, error.rule, error.path)


def test_h44_open_surfaces_are_bounded(tmp_path: Path) -> None:
    """H44: past max_open_surfaces a new instance is refused too_many at its instance_id; a
    replacement (U1) still opens, and closing one makes room."""
    host = Host("conv_01", data_dir=tmp_path, limits=Limits(max_open_surfaces=3))
    for n in range(3):
        assert host.receive(envelope("ui.open", open_payload(f"s{n}"), id_=f"o{n}")) is None
    error = host.receive(envelope("ui.open", open_payload("s3"), id_="o3"))
    assert refusal(error) == ("too_many", "H44", "$.payload.instance_id")
    assert list(host.surfaces) == ["s0", "s1", "s2"]
    assert host.receive(envelope("ui.open", open_payload("s1", n=2), id_="r1")) is None
    close = envelope("ui.close", {"instance_id": "s0", "reason": "done"}, id_="c0")
    assert host.receive(close) is None
    assert host.receive(envelope("ui.open", open_payload("s3"), id_="o4")) is None


def test_h44_components_are_bounded(tmp_path: Path) -> None:
    """H44: past max_components a new component is refused; an update of a shown one is not."""
    host = Host("conv_01", data_dir=tmp_path, limits=Limits(max_components=2))
    agent = host.connect_agent("a")
    first = agent.status("one")
    agent.status("two")
    with pytest.raises(ProtocolError) as refused:
        agent.status("three")
    assert refusal(refused.value) == ("too_many", "H44", "$.payload.component_id")
    agent.status("one, done", "done", component_id=first)  # an update: fine
    agent.remove(first)
    agent.status("three")
    assert len(host.components) == 2


def test_h44_waiting_calls_are_bounded(tmp_path: Path) -> None:
    """H44, C10: past max_waiting_calls a call that would wait for the user is answered at
    once, failed too_many (no card); once one is decided, the next waits again."""
    host = Host("conv_01", data_dir=tmp_path, limits=Limits(max_waiting_calls=2))

    @host.capability("demo.ask", risk="user_confirmation")
    def ask(arguments: dict[str, Any]) -> None:
        """Asks each time."""

    agent = host.connect_agent("a")
    waiting = [agent.call("demo.ask", reason="one"), agent.call("demo.ask", reason="two")]
    third = agent.call("demo.ask", reason="three")
    assert third.done() and third.result().status == "failed"
    assert (third.result().error or {})["code"] == "too_many"
    assert (third.result().error or {})["rule"] == "H44"
    assert len(host.pending_calls) == 2 and len(consent_state(feed(host))["pending"]) == 2
    host.decide(waiting[0].call_id, "deny")
    agent.call("demo.ask", reason="four")
    assert len(host.pending_calls) == 2


def retained(work: Any) -> int:
    """Bytes still allocated after ``work()`` ran and its garbage was collected. Garbage
    made before is not traced, so it needs no collection first (a full one costs 0.2 s of
    CPU late in a session)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        work()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_h44_c12_an_answered_call_keeps_a_fingerprint_not_its_arguments(tmp_path: Path) -> None:
    """C12, H44: 50 calls of 900 KiB of arguments, each answered at once, leave far less
    than their 44 MiB behind: the call table keeps a sha256 per call_id (the history keeps
    its last records whole, so it is made small here to measure the call table alone)."""
    host = Host("conv_01", data_dir=tmp_path, history_size=1)
    blob = "x" * (900 * 1024)

    def calls() -> None:
        for n in range(50):
            call = envelope(
                "app.call",
                {
                    "call_id": f"call_{n}",
                    "capability": "demo.undeclared",  # answered unsupported at once (C3)
                    "reason": "measure",
                    "expires_at": "2099-01-01T00:00:00Z",
                    "arguments": {"blob": blob},
                },
                id_=f"m{n}",
            )
            assert host.receive(call) is None

    kept = retained(calls)
    assert kept < 8 * MiB, f"{kept / MiB:.1f} MiB kept for 50 answered calls"
    sent: list[dict[str, Any]] = []
    host.subscribe(sent.append)

    def again(arguments: dict[str, Any], id_: str) -> dict[str, Any]:
        payload = {
            "call_id": "call_7",
            "capability": "demo.undeclared",
            "reason": "again",
            "expires_at": "2099-01-01T00:00:00Z",
            "arguments": arguments,
        }
        return envelope("app.call", payload, id_=id_)

    # The same call again gets its one answer again (C12); other arguments are a conflict:
    # what was kept tells them apart without the arguments.
    assert host.receive(again({"blob": blob}, "again")) is None
    assert sent[-1]["type"] == "lineup.v1.app.result"
    assert sent[-1]["payload"]["status"] == "unsupported"
    conflict = host.receive(again({"blob": blob + "y"}, "again_other"))
    assert refusal(conflict) == ("call_conflict", "C12", "$.payload.call_id")


@pytest.mark.parametrize("form", ["text", "json text", "bytes", "dict"])
def test_h44_a_refused_32_mib_message_is_kept_as_an_excerpt(tmp_path: Path, form: str) -> None:
    """H2, H44: a 32 MiB message is refused too_large, and the history keeps 1000 characters
    of it and its size, not the message."""
    host = Host("conv_01", data_dir=tmp_path)
    state = {"blob": "x" * (32 * MiB)}
    message: Any = envelope("ui.open", open_payload("big", **state))
    if form == "text":
        message = "y" * (32 * MiB)
    elif form == "json text":
        message = json.dumps(message)
    elif form == "bytes":
        message = json.dumps(message).encode()
    size = len(message if form != "dict" else json.dumps(message, separators=(",", ":")))

    def refuse() -> None:
        assert refusal(host.receive(message)) == ("too_large", "H2", "$")

    kept = retained(refuse)
    (record,) = host.history.select(kind="refused")
    assert record.envelope["excerpt_of_bytes"] == size
    assert len(record.envelope["raw"]) == 1000
    assert kept < 1 * MiB, f"{kept / MiB:.1f} MiB kept for one refused message"
