"""One rule for numbers (H2, docs/protocol.md "Numbers"): an integer beyond +/-(2^53-1) is
refused at the edge with its path, never carried: a browser reads 9007199254740993 as ...992,
so a card would show one amount while the handler ran with another. The same rule holds for
LineUp envelopes (the fixtures: state, component values, events, app.call arguments), for
a handler's result and for MCP data (tests/mcp/test_mcp_limits.py). Each attack has its control:
2^53-1 passes unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from lineup_jupyter import Host, ProtocolError
from lineup_jupyter.protocol._json import check_value, loads

from ..capabilities.test_broker import FUTURE, results
from ..conftest import Recorder, envelope

SAFE = 2**53 - 1


@pytest.mark.parametrize("value", [2**53, 2**53 + 1, -(2**53), 10**30, -(2**63) - 1])
def test_h2_an_integer_past_2_53_is_refused_with_its_path(value: int) -> None:
    text = f'{{"a": [1, {{"n": {value}}}]}}'
    with pytest.raises(ProtocolError) as refused:
        loads(text, max_bytes=1 << 20)
    assert (refused.value.code, refused.value.rule) == ("invalid_json", "H2")
    assert refused.value.path == "$.a[1].n"
    assert f"{value} is beyond +/-(2^53-1)" in refused.value.message
    with pytest.raises(ProtocolError, match=r"beyond \+/-\(2\^53-1\)"):
        check_value({"n": value})  # a Python value the host would send: the same rule


def test_h2_the_control_the_largest_safe_integers_pass_unchanged() -> None:
    text = f'{{"n": {SAFE}, "m": {-SAFE}, "f": 1e300}}'
    assert loads(text, max_bytes=1 << 20) == {"n": SAFE, "m": -SAFE, "f": 1e300}
    check_value({"n": SAFE, "m": -SAFE})


def test_h2_an_integer_of_5000_digits_is_named_by_its_size() -> None:
    with pytest.raises(ProtocolError, match="an integer of 16610 bits"):
        check_value({"n": 10**5000})


def paying(host: Host) -> list[dict[str, Any]]:
    ran: list[dict[str, Any]] = []
    host.capability("demo.pay", risk="display_only")(lambda arguments: ran.append(arguments))
    return ran


def pay(call_id: str, amount: int) -> dict[str, Any]:
    return envelope(
        "app.call",
        {
            "call_id": call_id,
            "capability": "demo.pay",
            "reason": "pay",
            "expires_at": FUTURE,
            "arguments": {"amount": amount},
        },
        id_=f"m_{call_id}",
    )


def test_h2_an_app_call_with_an_amount_past_2_53_never_runs(host: Host, sent: Recorder) -> None:
    """Issue 22's card: `amount: 9007199254740992` shown, `...993` run. Refused instead, with
    its path, as the call's one answer; the handler never ran. Control: 2^53-1 runs as is."""
    ran = paying(host)
    host.receive(pay("c_big", 2**53 + 1))
    (answer,) = results(sent)
    assert answer["status"] == "failed"
    assert (answer["error"]["rule"], answer["error"]["path"]) == (
        "H2",
        "$.payload.arguments.amount",
    )
    assert ran == []
    host.receive(pay("c_safe", SAFE))
    assert results(sent)[-1]["status"] == "completed"
    assert ran == [{"amount": SAFE}]


def test_h2_a_handler_result_past_2_53_fails_the_call(host: Host, sent: Recorder) -> None:
    host.capability("demo.count", risk="display_only")(lambda arguments: {"n": 2**60})
    host.capability("demo.safe", risk="display_only")(lambda arguments: {"n": SAFE})
    for call_id, capability in (("c1", "demo.count"), ("c2", "demo.safe")):
        host.receive(
            envelope(
                "app.call",
                {
                    "call_id": call_id,
                    "capability": capability,
                    "reason": "count",
                    "expires_at": FUTURE,
                    "arguments": {},
                },
                id_=f"m_{call_id}",
            )
        )
    refused, control = results(sent)
    assert refused["status"] == "failed" and refused["error"]["path"] == "$.result.n"
    assert "beyond +/-(2^53-1)" in refused["error"]["message"]
    assert control == {"call_id": "c2", "status": "completed", "result": {"n": SAFE}}
