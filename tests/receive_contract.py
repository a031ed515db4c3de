"""The contract of ``Host.receive``, as one reusable check for the fuzz and robustness tests.

For any input the host returns None (accepted) or a ProtocolError (refused) and never raises.
A refusal changes nothing a later message could observe, and gets exactly one answer: a
``lineup.v1.error``, or an ``app.result`` with status ``failed`` for an ``app.call`` whose
``call_id`` is a valid id not answered before (C12, H3) in a message that was read (text over
the message limit is not, H44). Every envelope the host emits is valid.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from lineup_jupyter import Host, ProtocolError
from lineup_jupyter.protocol import rules, validate_envelope

CONVERSATION = "conv_01"
AGENT = "agent_fuzz"
OPEN_INSTANCE = "dashboard.main"  # opened by ``fresh_host``, so patch and close are valid
ANSWERED_CALL = "call_answered"  # answered by ``fresh_host``, so C12 has something to keep
_ID = re.compile(rules.ID_PATTERN)
# The host does not let these refusals burn a call_id: a replayed message (H9) or one meant for
# another conversation (M1) was never a call to this host, so they get a plain error.
_NOT_A_CALL_HERE = ("duplicate_id", "wrong_conversation")


def envelope(type_: str, payload: dict[str, Any], id_: str) -> dict[str, Any]:
    return {
        "v": 1,
        "id": id_,
        "type": f"lineup.v1.{type_}",
        "conversation_id": CONVERSATION,
        "sender": {"kind": "agent", "id": AGENT},
        "payload": payload,
    }


def valid_envelopes() -> dict[str, dict[str, Any]]:
    """One valid agent->client envelope of each type, for a host made by ``fresh_host``."""
    return {
        "ui.open": envelope(
            "ui.open",
            {
                "instance_id": "dashboard.second",
                "app": {
                    "id": "com.example.weather",
                    "version": "1.2.0",
                    "name": "Weather",
                    "html": "<main id='root'></main>",
                    "css": "main{display:grid}",
                    "js": "LineUpSurface.onState(s => render(s));",
                },
                "state": {"city": "Lyon", "days": [{"t": 21.5, "rain": False}]},
            },
            "msg_open_2",
        ),
        "ui.patch": envelope(
            "ui.patch",
            {
                "instance_id": OPEN_INSTANCE,
                "state": {"city": "Oslo", "unit": "C"},
            },
            "msg_patch_1",
        ),
        "ui.close": envelope(
            "ui.close",
            {
                "instance_id": OPEN_INSTANCE,
                "reason": "completed",
            },
            "msg_close_1",
        ),
        "app.call": envelope(
            "app.call",
            {
                "call_id": "call_new",
                # Not declared, so answered at once (unsupported, C3); the broker's own
                # paths are tested in test_broker.py.
                "capability": "weather.lookup",
                "reason": "Show the forecast",
                "expires_at": "2099-01-01T00:00:00Z",
                "arguments": {"city": "Oslo"},
            },
            "msg_call_1",
        ),
    }


@dataclass
class Fixture:
    host: Host
    sent: list[dict[str, Any]]


def fresh_host() -> Fixture:
    """A host of conversation conv_01 with one open instance and one answered call."""
    host = Host(CONVERSATION, history_size=10_000)
    sent: list[dict[str, Any]] = []
    host.subscribe(sent.append)
    assert [e["type"] for e in sent] == ["lineup.v1.client.inventory"]  # C1, at once
    sent.clear()
    opened = envelope(
        "ui.open",
        {
            "instance_id": OPEN_INSTANCE,
            "app": {"id": "com.example.dashboard", "version": "1.0.0", "html": "<div></div>"},
            "state": {"title": "Sales", "series": [1, 2, 3]},
        },
        "msg_setup_open",
    )
    called = envelope(
        "app.call",
        {
            "call_id": ANSWERED_CALL,
            "capability": "clipboard.write",
            "reason": "Copy the total",
            "expires_at": "2099-01-01T00:00:00Z",
            "arguments": {"text": "42"},
        },
        "msg_setup_call",
    )
    for message in (opened, called):
        error = host.receive(message)
        assert error is None, f"the fixture's own setup was refused: {error}"
    return Fixture(host, sent)


def snapshot(host: Host) -> dict[str, Any]:
    """Everything a refusal must leave alone. Private attributes are read only here."""
    return {
        "surfaces": {
            iid: (inst.owner, inst.revision, inst.generation, inst.app, inst.state)
            for iid, inst in host.surfaces.items()
        },
        "inventory": host.inventory,
        # the remembered app.result of each call_id (C12), in its sender's scope (H27): the
        # kernel's agents are told apart by their ids; "" is a sender the host could not name
        "calls": {
            (key[0].agent_id, key[1]): entry
            for key, entry in host._broker.ledger.snapshot().items()
        },
        "seen": list(host._intake.seen),  # message ids a repeat would be refused for (H9)
    }


def lenient_parse(message: Any) -> Any:
    """What an agent meant, read as loosely as Python's json allows (for the expected answer)."""
    if isinstance(message, (bytes, bytearray)):
        message = bytes(message).decode("utf-8", "replace")
    if isinstance(message, str):
        try:
            return json.loads(message)
        except (ValueError, RecursionError):
            return None
    return message


def readable_sender(message: Any) -> str:
    """The agent id a message names, as the host reads it for the scope of its call_id
    (H27), or "" when it names none readably."""
    parsed = lenient_parse(message)
    sender = parsed.get("sender") if isinstance(parsed, dict) else None
    named = sender.get("id") if isinstance(sender, dict) else None
    return named if isinstance(named, str) and _ID.fullmatch(named) else ""


def readable_call_id(message: Any) -> str | None:
    parsed = lenient_parse(message)
    if not isinstance(parsed, dict) or parsed.get("type") != "lineup.v1.app.call":
        return None
    payload = parsed.get("payload")
    call_id = payload.get("call_id") if isinstance(payload, dict) else None
    return call_id if isinstance(call_id, str) and _ID.fullmatch(call_id) else None


def assert_ijson(value: Any, depth: int = 1, path: str = "$") -> None:
    """Independently of the host's parser: ``value`` is exactly I-JSON (H2).

    ``depth`` is the level ``value`` would be at if it is an array or object; only those count.
    """
    if isinstance(value, (dict, list)):
        assert depth <= rules.MAX_JSON_DEPTH, f"{path} is nested {depth} levels deep"
    if isinstance(value, dict):
        for key, item in value.items():
            assert isinstance(key, str) and key != "__proto__", f"key {key!r} in {path}"
            key.encode("utf-8")  # raises on a lone surrogate
            assert_ijson(item, depth + 1, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            assert_ijson(item, depth + 1, f"{path}[{index}]")
    elif isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, float):
        assert math.isfinite(value), f"{value} at {path}"
    else:
        assert value is None or isinstance(value, (bool, int)), f"{type(value)} at {path}"


def assert_states_are_ijson(host: Host) -> None:
    """What the host accepted is what a browser can read: every state is I-JSON (H2, U4)."""
    for instance_id, instance in host.surfaces.items():
        # The envelope and its payload are the first two levels of the message that set it.
        assert_ijson(instance._state, depth=3, path=f"surfaces[{instance_id!r}].state")


def assert_error_payload(error: dict[str, Any]) -> None:
    assert error["code"] in rules.ERROR_CODES, error
    assert error["rule"] in rules.RULES, error
    assert error["path"].startswith("$"), error


def receive_and_check(fx: Fixture, message: Any) -> ProtocolError | None:
    """``fx.host.receive(message)``, asserting the whole contract; returns what it returned."""
    host, before, sent_before = fx.host, snapshot(fx.host), len(fx.sent)
    history_before = len(host.history)
    result = host.receive(message)  # must not raise, whatever ``message`` is
    answers = fx.sent[sent_before:]
    for answer in answers:
        validate_envelope(answer)  # raises ProtocolError when the host emits an invalid one
    assert_states_are_ijson(host)
    if result is None:
        return None
    assert isinstance(result, ProtocolError), repr(result)
    assert_error_payload(result.to_payload())
    assert result.code != "internal", f"an unexpected exception inside the host: {result}"
    assert len(answers) == 1, f"a refusal gets exactly one answer, got {len(answers)}"
    (answer,) = answers
    after = snapshot(host)
    call_id = readable_call_id(message)
    scope = (readable_sender(message), call_id)
    # Text over the message limit is never read (H2, H44: the history keeps an excerpt), so
    # its call_id is not known: the refusal is a plain lineup.v1.error.
    unread = result.code == "too_large" and result.rule == "H2" and type(message) is not dict
    burns_call_id = (
        call_id is not None
        and scope not in before["calls"]
        and result.code not in _NOT_A_CALL_HERE
        and not unread
    )
    if burns_call_id:
        assert answer["type"] == "lineup.v1.app.result", answer
        assert answer["payload"]["call_id"] == call_id
        assert answer["payload"]["status"] == "failed"
        reported = answer["payload"]["error"]
        # The failed result is remembered, so the call_id keeps its one answer (C12).
        assert after["calls"].pop(scope) == ("refused", answer["payload"])
    else:
        assert answer["type"] == "lineup.v1.error", answer
        reported = answer["payload"]
        assert_error_payload(reported)
    assert (reported["code"], reported["rule"], reported["path"]) == (
        result.code,
        result.rule,
        result.path,
    )
    assert after == before, "a refused message changed the host"
    # One record of the refused message, one of the answer.
    assert len(host.history) == history_before + 2
    assert host.history[-2].kind == "refused"
    return result
