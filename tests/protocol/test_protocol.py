"""The protocol models: every golden fixture's verdict, and each checkable rule on its own."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lineup_jupyter import ProtocolError
from lineup_jupyter.protocol import (
    AppCall,
    Limits,
    UiOpen,
    bundle_bytes,
    bundle_integrity,
    rules,
    validate_envelope,
)

from ..conftest import ENVELOPES, EXPECTED, envelope, golden, open_payload


def refusal(value: Any, **kwargs: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as caught:
        validate_envelope(value, **kwargs)
    return caught.value


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_golden_fixture_verdicts(name: str) -> None:
    """Each golden envelope (the seed's examples among them) gets its expected verdict."""
    expected = EXPECTED[name]
    raw = (ENVELOPES / name).read_bytes()
    if expected["verdict"] == "valid":
        assert validate_envelope(raw).type.startswith("lineup.v1.")
        return
    error = refusal(raw)
    assert (error.code, error.rule, error.path) == (
        expected["code"],
        expected["rule"],
        expected["path"],
    )
    assert error.rule in rules.RULES and error.code in rules.ERROR_CODES
    assert rules.RULES[error.rule] in error.message or error.rule == "H2"


def test_every_fixture_file_has_an_expected_verdict() -> None:
    files = {p.name for p in ENVELOPES.glob("*.json")} - {"expected.json"}
    assert files == set(EXPECTED)


def test_fixtures_cover_every_checkable_rule() -> None:
    """M1-M3, U1-U5, U9, U10, C4, C7-C9, C11 and the H-rules each have a failing fixture."""
    covered = {x["rule"] for x in EXPECTED.values() if x["verdict"] != "valid"}
    assert {
        "M1",
        "M2",
        "M3",
        "U1",
        "U2",
        "U3",
        "U4",
        "U5",
        "U9",
        "U10",
        "C4",
        "C7",
        "C8",
        "C9",
        "C11",
        "H1",
        "H2",
        "H4",
        "H5",
    } <= covered


def test_seed_ui_open_round_trips() -> None:
    """M1: the seed's ui.open parses into the model and back without losing a field."""
    seed = golden("seed-ui-open.json")
    model = validate_envelope(seed)
    assert isinstance(model, UiOpen)
    assert model.to_wire() == seed


def test_input_forms_agree() -> None:
    """A dict, JSON text, UTF-8 bytes and a model are the same message."""
    seed = golden("seed-app-call.json")
    text = json.dumps(seed, ensure_ascii=False)
    models = [validate_envelope(x) for x in (seed, text, text.encode(), validate_envelope(seed))]
    assert all(isinstance(m, AppCall) and m == models[0] for m in models)


@pytest.mark.parametrize("instance_id", ["a", "A.b_c:d-1", "x" * 128])
def test_u1_instance_id_accepts_its_alphabet(instance_id: str) -> None:
    """U1: [A-Za-z0-9._:-]{1,128}."""
    validate_envelope(envelope("ui.open", open_payload(instance_id)))


@pytest.mark.parametrize("instance_id", ["", "x" * 129, "a b", "a/b", "é", "a\n"])
def test_u1_instance_id_refuses_anything_else(instance_id: str) -> None:
    """U1: the trailing-newline case guards against Python's `$` matching before a newline."""
    error = refusal(envelope("ui.open", open_payload(instance_id)))
    assert (error.rule, error.path) == ("U1", "$.payload.instance_id")


@pytest.mark.parametrize("app_id", ["com.example", "com.lineup.svg-canvas", "io.3m.app-x"])
def test_u2_reverse_domain_ids(app_id: str) -> None:
    payload = open_payload()
    payload["app"]["id"] = app_id
    validate_envelope(envelope("ui.open", payload))


@pytest.mark.parametrize(
    "app_id", ["example", "Com.Example", "com..x", ".com.x", "com.x.", "com.-x"]
)
def test_u2_refuses_non_reverse_domain_ids(app_id: str) -> None:
    payload = open_payload()
    payload["app"]["id"] = app_id
    assert refusal(envelope("ui.open", payload)).rule == "U2"


@pytest.mark.parametrize("version", ["0.0.1", "1.0.0-alpha.1", "2.3.4+build.5", "10.20.30-rc.1+x"])
def test_u2_semver_accepted(version: str) -> None:
    payload = open_payload()
    payload["app"]["version"] = version
    validate_envelope(envelope("ui.open", payload))


@pytest.mark.parametrize("version", ["1", "1.0", "01.0.0", "1.0.0-", "v1.0.0", "1.0.0-01"])
def test_u2_semver_refused(version: str) -> None:
    payload = open_payload()
    payload["app"]["version"] = version
    error = refusal(envelope("ui.open", payload))
    assert (error.rule, error.path) == ("U2", "$.payload.app.version")


def _bundle_of(size_bytes: int) -> dict[str, Any]:
    payload = open_payload()
    payload["app"].update(
        html="", css="é" * (size_bytes // 4), js="x" * (size_bytes - size_bytes // 4 * 2)
    )
    return payload


def test_u3_bundle_limit_counts_utf8_bytes_of_all_three_parts() -> None:
    """U3: 160 KiB by default, html + css + js, in UTF-8 bytes (é is two)."""
    limit = rules.DEFAULT_MAX_BUNDLE_BYTES
    validate_envelope(envelope("ui.open", _bundle_of(limit)))
    error = refusal(envelope("ui.open", _bundle_of(limit + 1)))
    assert (error.code, error.rule, error.path) == ("too_large", "U3", "$.payload.app")


def test_u3_bundle_limit_is_configurable() -> None:
    small = Limits(max_bundle_bytes=1000)
    assert refusal(envelope("ui.open", _bundle_of(1001)), limits=small).rule == "U3"
    validate_envelope(envelope("ui.open", _bundle_of(1000)), limits=small)


@pytest.mark.parametrize("state", [[], "x", 1, None, True])
def test_u4_state_must_be_an_object(state: Any) -> None:
    payload = open_payload()
    payload["state"] = state
    error = refusal(envelope("ui.open", payload))
    assert (error.rule, error.path) == ("U4", "$.payload.state")


@pytest.mark.parametrize("field", ["html", "css", "js", "app"])
def test_u5_patch_never_carries_code(field: str) -> None:
    error = refusal(envelope("ui.patch", {"instance_id": "w", "state": {}, field: "x"}))
    assert (error.rule, error.path) == ("U5", f"$.payload.{field}")


@pytest.mark.parametrize("name", ["a", "refresh", "Draw.line:2-b_c", "a" + "b" * 63])
def test_u9_event_names_accepted(name: str) -> None:
    validate_envelope(
        envelope("ui.event", {"instance_id": "w", "event": name, "data": {}}, kind="client")
    )


@pytest.mark.parametrize("name", ["", "1a", "_a", "a b", "a" * 65, "a/b", "é"])
def test_u9_event_names_refused(name: str) -> None:
    error = refusal(
        envelope("ui.event", {"instance_id": "w", "event": name, "data": {}}, kind="client")
    )
    assert (error.rule, error.path) == ("U9", "$.payload.event")


def _event_with_data_of(n: int) -> dict[str, Any]:
    overhead = len('{"t":""}')
    return envelope(
        "ui.event",
        {"instance_id": "w", "event": "e", "data": {"t": "x" * (n - overhead)}},
        kind="client",
    )


def test_u9_event_data_must_be_under_16_kib() -> None:
    """U9: under 16 KiB means 16383 bytes pass and 16384 do not."""
    validate_envelope(_event_with_data_of(16383))
    error = refusal(_event_with_data_of(16384))
    assert (error.code, error.rule, error.path) == ("too_large", "U9", "$.payload.data")


def test_u10_close_needs_a_reason() -> None:
    assert refusal(envelope("ui.close", {"instance_id": "w"})).rule == "U10"
    assert refusal(envelope("ui.close", {"instance_id": "w", "reason": ""})).rule == "U10"


def _call(**changes: Any) -> dict[str, Any]:
    payload = {
        "call_id": "c1",
        "capability": "app.open_url",
        "reason": "docs",
        "expires_at": "2026-08-02T12:10:00Z",
        "arguments": {"url": "https://example.com"},
    }
    payload.update(changes)
    return envelope("app.call", payload)


@pytest.mark.parametrize(
    "when",
    ["2026-08-02T12:10:00Z", "2026-08-02t12:10:00.5+08:00", "2026-08-02T12:10:00.123456789-05:30"],
)
def test_c9_expires_at_rfc3339(when: str) -> None:
    validate_envelope(_call(expires_at=when))


@pytest.mark.parametrize(
    "when",
    [
        "2026-08-02T12:10:00",
        "2026-08-02",
        "1785000000",
        "2026-13-02T12:10:00Z",
        "2026-02-30T00:00:00Z",
        "tomorrow",
    ],
)
def test_c9_expires_at_refused(when: str) -> None:
    error = refusal(_call(expires_at=when))
    assert (error.rule, error.path) == ("C9", "$.payload.expires_at")


def test_c9_expired_is_computed_from_the_offset() -> None:
    from datetime import datetime, timezone

    call = validate_envelope(_call(expires_at="2026-08-02T12:10:00+08:00"))
    assert isinstance(call, AppCall)
    assert call.payload.expires() == datetime(2026, 8, 2, 4, 10, tzinfo=timezone.utc)
    assert call.payload.expired(datetime(2026, 8, 2, 4, 10, 1, tzinfo=timezone.utc))
    assert not call.payload.expired(datetime(2026, 8, 2, 4, 9, 59, tzinfo=timezone.utc))


@pytest.mark.parametrize("field", ["call_id", "capability", "reason", "expires_at", "arguments"])
def test_c9_every_call_field_is_required(field: str) -> None:
    payload = _call()["payload"]
    del payload[field]
    error = refusal(envelope("app.call", payload))
    assert (error.rule, error.path) == ("C9", f"$.payload.{field}")


@pytest.mark.parametrize("risk", rules.RISKS)
def test_c8_each_risk_accepted(risk: str) -> None:
    validate_envelope(
        envelope(
            "app.list",
            {"capabilities": [{"name": "x.y", "version": "1.0", "risk": risk, "input_schema": {}}]},
            kind="client",
        )
    )


@pytest.mark.parametrize("status", rules.STATUSES)
def test_c11_each_status_accepted(status: str) -> None:
    validate_envelope(envelope("app.result", {"call_id": "c1", "status": status}, kind="client"))


def test_m3_unknown_ui_and_app_types_are_unsupported() -> None:
    for kind in ("ui.toast", "app.install"):
        error = refusal(envelope(kind, {}))
        assert (error.code, error.rule, error.path) == ("unsupported", "M3", "$.type")


def test_m2_unknown_type_suggests_the_near_one() -> None:
    error = refusal(envelope("client.inventry", {}, kind="client"))
    assert error.code == "unknown_type" and "lineup.v1.client.inventory" in error.message


def test_h1_unknown_field_suggests_the_near_one() -> None:
    payload = open_payload()
    payload["instanceId"] = payload.pop("instance_id")
    error = refusal(envelope("ui.open", payload))
    assert error.path == "$.payload.instanceId"
    assert "'instance_id'" in error.message


def test_h1_envelope_fields_come_before_the_payload() -> None:
    """A bad envelope field is reported even when the payload is also wrong."""
    bad = envelope("ui.open", {"nonsense": 1})
    bad["v"] = 2
    assert refusal(bad).path == "$.v"


def test_refusals_name_the_refused_message() -> None:
    """H3: the refusal carries the refused message's id and type when they can be read."""
    error = refusal(envelope("ui.patch", {"instance_id": "w"}, id_="msg_77"))
    assert (error.refused_id, error.refused_type) == ("msg_77", "lineup.v1.ui.patch")
    payload = error.to_payload()
    assert payload["refused_id"] == "msg_77" and payload["rule"] == "U4"


def test_h4_integrity_is_over_framed_bytes() -> None:
    """H4: lengths frame each part, so moving text between parts changes the digest."""
    assert bundle_bytes("<p>", "a{}", "") == (
        b"lineup-bundle-v1\nhtml\n3\n<p>\ncss\n3\na{}\njs\n0\n\n"
    )
    assert bundle_integrity("ab", "c") != bundle_integrity("a", "bc")
    assert bundle_integrity("é") == bundle_integrity("é", "", "")
    digest = bundle_integrity("<p>hi</p>")
    assert digest.startswith("sha256-") and len(digest) == 51


def test_h4_assets_are_framed_in_path_order() -> None:
    one = bundle_integrity("x", assets={"b.svg": b"1", "a.png": b"2"})
    two = bundle_integrity("x", assets={"a.png": b"2", "b.svg": b"1"})
    assert one == two != bundle_integrity("x", assets={"a.png": b"1", "b.svg": b"2"})
