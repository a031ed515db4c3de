"""protocol._envelopes: the one builder of lineup.v1 envelopes and of the protocol's timestamps."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from lineup_jupyter.protocol import parse_rfc3339, rules, validate_envelope
from lineup_jupyter.protocol._envelopes import new_envelope, now_iso, stamp, utc_now

STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def test_stamp_is_utc_milliseconds_and_z() -> None:
    moment = datetime(2026, 12, 4, 15, 54, 21, 123456, tzinfo=timezone.utc)
    assert stamp(moment) == "2026-12-04T15:54:21.123Z"
    assert STAMP.match(now_iso())


def test_stamp_writes_other_zones_in_utc() -> None:
    paris = timezone(timedelta(hours=1))
    assert stamp(datetime(2026, 12, 4, 16, 54, 21, tzinfo=paris)) == "2026-12-04T15:54:21.000Z"


def test_stamp_refuses_a_naive_datetime() -> None:
    with pytest.raises(ValueError, match="aware"):
        stamp(datetime(2026, 12, 4, 15, 54, 21))  # naive: the point of the test


def test_stamp_round_trips_through_the_protocols_parser() -> None:
    """C9: what we write is RFC 3339 and reads back as the same moment (to the millisecond)."""
    moment = utc_now()
    text = stamp(moment)
    assert re.match(rules.RFC3339_PATTERN, text)
    assert parse_rfc3339(text) == moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def test_envelope_from_the_client_validates_with_ts_and_target() -> None:
    """H1: a client's envelope, stamped and addressed, passes the protocol's validation."""
    message = new_envelope(
        "lineup.v1.ui.event",
        {"instance_id": "weather.dashboard.01", "event": "refresh", "data": {}},
        conversation_id="conv_1",
        sender=("client", "jupyter"),
        target=("agent", "weather"),
        ts=now_iso(),
    )
    parsed = validate_envelope(message)
    assert parsed.type == "lineup.v1.ui.event"
    assert parsed.sender.kind == "client" and parsed.sender.id == "jupyter"
    assert parsed.target is not None and parsed.target.id == "weather"
    assert parsed.ts == message["ts"]
    assert message["v"] == rules.ENVELOPE_VERSION
    assert message["id"].startswith("msg_")


def test_envelope_leaves_out_what_was_not_given() -> None:
    """``ts`` and ``target`` are optional on the wire: absent, not null, when not given."""
    message = new_envelope(
        "lineup.v1.ui.close",
        {"instance_id": "weather.dashboard.01", "reason": "done"},
        conversation_id="conv_1",
        sender=("agent", "weather"),
        message_id="m1",
    )
    assert message == {
        "v": 1,
        "id": "m1",
        "type": "lineup.v1.ui.close",
        "conversation_id": "conv_1",
        "sender": {"kind": "agent", "id": "weather"},
        "payload": {"instance_id": "weather.dashboard.01", "reason": "done"},
    }
    assert validate_envelope(message).id == "m1"


def test_fresh_envelopes_get_fresh_ids() -> None:
    """H9: two messages never share an id unless the caller says so."""
    made = [
        new_envelope("lineup.v1.ui.close", {}, conversation_id="c", sender=("agent", "a"))
        for _ in range(2)
    ]
    assert made[0]["id"] != made[1]["id"]
