"""Hostile and edge-case messages, one test each, with the exact refusal asserted (H2, H7, U3, M1).

Every message goes through ``receive_and_check``, so each test also checks the whole receive
contract: no exception, one valid answer, nothing changed by a refusal.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest

from lineup_jupyter import ProtocolError
from lineup_jupyter.protocol import UiPatch, rules, size

from ..receive_contract import (
    OPEN_INSTANCE,
    Fixture,
    envelope,
    fresh_host,
    receive_and_check,
    snapshot,
    valid_envelopes,
)

STATE = "$.payload.state"
# The envelope and its payload are two of the MAX_JSON_DEPTH levels a message may have.
STATE_DEPTH_LIMIT = rules.MAX_JSON_DEPTH - 2
MAX_STATE = rules.DEFAULT_MAX_STATE_BYTES
MAX_BUNDLE = rules.DEFAULT_MAX_BUNDLE_BYTES


def patch(state: Any, id_: str = "msg_robust") -> dict[str, Any]:
    return envelope("ui.patch", {"instance_id": OPEN_INSTANCE, "state": state}, id_)


def patch_text(raw_state: str) -> str:
    """A ui.patch as JSON text whose state is ``raw_state`` verbatim (tokens json won't write)."""
    text = json.dumps(patch({}))
    assert '"state": {}' in text
    return text.replace('"state": {}', f'"state": {raw_state}')


def open_with(html: str) -> dict[str, Any]:
    env = valid_envelopes()["ui.open"]
    env["payload"]["app"].update(html=html, css="", js="")
    return env


def refusal(message: Any) -> tuple[str, str, str]:
    error = receive_and_check(fresh_host(), message)
    assert error is not None, "the message was accepted"
    return error.code, error.rule, error.path


def accepted(message: Any) -> Fixture:
    fx = fresh_host()
    error = receive_and_check(fx, message)
    assert error is None, f"refused: {error}"
    return fx


def nested_state(levels: int, in_list: bool = False) -> dict[str, Any]:
    """A state object ``levels`` levels deep, counting the state object itself."""
    inner: Any = {}
    for _ in range(levels - 1):
        inner = [inner] if in_list else {"k": inner}
    return {"k": inner} if in_list else inner


# ---- depth (H2: at most MAX_JSON_DEPTH levels in the whole message) ----------------------


@pytest.mark.parametrize("form", ["dict", "text"])
@pytest.mark.parametrize("levels", [STATE_DEPTH_LIMIT - 1, STATE_DEPTH_LIMIT])
def test_h2_state_nested_up_to_the_limit_is_accepted(levels: int, form: str) -> None:
    """H2: a state 61 or 62 levels deep makes a message of 63 or 64 levels: accepted."""
    state = nested_state(levels)
    fx = accepted(patch(state) if form == "dict" else json.dumps(patch(state)))
    assert fx.host.surfaces[OPEN_INSTANCE].state == state


@pytest.mark.parametrize("form", ["dict", "text"])
@pytest.mark.parametrize("levels", [STATE_DEPTH_LIMIT + 1, STATE_DEPTH_LIMIT + 2, 65])
def test_h2_state_nested_past_the_limit_is_refused_where_it_breaks(levels: int, form: str) -> None:
    """H2: states 63, 64, 65 deep; the path names level 65 of the message: state + 62 keys."""
    message = patch(nested_state(levels))
    expected_path = STATE + ".k" * STATE_DEPTH_LIMIT
    assert refusal(message if form == "dict" else json.dumps(message)) == (
        "invalid_json",
        "H2",
        expected_path,
    )


def test_h2_nested_arrays_count_like_objects() -> None:
    """H2: arrays are levels too; the path names the first array past the limit."""
    message = patch(nested_state(STATE_DEPTH_LIMIT + 1, in_list=True))
    expected_path = STATE + ".k" + "[0]" * (STATE_DEPTH_LIMIT - 1)
    assert refusal(message) == ("invalid_json", "H2", expected_path)


@pytest.mark.parametrize("form", ["str", "bytes"])
def test_h2_100000_levels_of_text_are_refused(form: str) -> None:
    """H2: 100000 nested arrays as text: no RecursionError, path $."""
    text = "[" * 100_000 + "]" * 100_000
    outcome = refusal(text if form == "str" else text.encode())
    assert outcome == ("invalid_json", "H2", "$")


def test_h2_100000_levels_inside_the_state_as_text_are_refused() -> None:
    """H2: the same depth inside a real envelope; the parser gives up before any path exists."""
    assert refusal(patch_text('{"k": ' + "[" * 100_000 + "]" * 100_000 + "}")) == (
        "invalid_json",
        "H2",
        "$",
    )


def test_h2_100000_levels_as_a_python_dict_are_refused_without_recursion_error() -> None:
    """H2: an agent's 100000-deep dict is refused at level 65, and the refusal itself survives."""
    outcome = refusal(patch(nested_state(100_000)))
    assert outcome == ("invalid_json", "H2", STATE + ".k" * STATE_DEPTH_LIMIT)


# ---- sizes (H2 message, H7 state, U3 bundle) ---------------------------------------------


@pytest.mark.parametrize("form", ["dict", "text", "bytes"])
def test_h2_a_2_mib_string_makes_the_message_too_large(form: str) -> None:
    """H2: a message over 1 MiB is too_large before anything else is read."""
    message = patch({"blob": "x" * (2 * 1024 * 1024)})
    text = json.dumps(message)
    shaped = {"dict": message, "text": text, "bytes": text.encode()}[form]
    assert refusal(shaped) == ("too_large", "H2", "$")


def state_of_size(n: int) -> dict[str, Any]:
    state = {"s": "x" * (n - len('{"s":""}'))}
    assert size(state) == n
    return state


def test_h7_state_exactly_at_256_kib_is_accepted() -> None:
    """H7: the limit is inclusive, counted in compact UTF-8 JSON."""
    state = state_of_size(MAX_STATE)
    assert accepted(patch(state)).host.surfaces[OPEN_INSTANCE].state == state


@pytest.mark.parametrize("form", ["dict", "text"])
def test_h7_state_one_byte_over_256_kib_is_too_large(form: str) -> None:
    """H7: one byte more is refused, naming the state."""
    message = patch(state_of_size(MAX_STATE + 1))
    assert refusal(message if form == "dict" else json.dumps(message)) == ("too_large", "H7", STATE)


def test_h7_a_merge_that_grows_the_state_past_256_kib_is_refused() -> None:
    """H6, H7: each merge patch is small, the merged state is not; refused, nothing changes."""
    fx = fresh_host()
    half = MAX_STATE // 2
    assert receive_and_check(fx, patch({"a": "x" * half}, "msg_first_half")) is None
    grow = envelope(
        "ui.patch",
        {"instance_id": OPEN_INSTANCE, "state": {"b": "y" * half}, "merge": True},
        "msg_second_half",
    )
    error = receive_and_check(fx, grow)
    assert error is not None
    assert (error.code, error.rule, error.path) == ("too_large", "H7", STATE)


@pytest.mark.parametrize("unit", ["x", "é"], ids=["ascii", "two-byte"])
def test_u3_bundle_exactly_at_160_kib_is_accepted(unit: str) -> None:
    """U3: the bundle limit counts UTF-8 bytes of html + css + js, inclusive."""
    html = unit * (MAX_BUNDLE // len(unit.encode()))
    assert len(html.encode()) == MAX_BUNDLE
    accepted(open_with(html))


@pytest.mark.parametrize("unit", ["x", "é"], ids=["ascii", "two-byte"])
def test_u3_bundle_one_byte_over_160_kib_is_too_large(unit: str) -> None:
    """U3: one byte more is refused, naming the app."""
    html = unit * (MAX_BUNDLE // len(unit.encode())) + "x"
    assert refusal(open_with(html)) == ("too_large", "U3", "$.payload.app")


# ---- bytes that are not UTF-8 I-JSON (H2) -----------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [b"\xff", b"\xe9", b"\xc0\xaf", b"\xed\xa0\x80"],
    ids=["ff", "latin-1", "overlong", "cesu-surrogate"],
)
def test_h2_non_utf8_bytes_are_invalid_json(bad: bytes) -> None:
    """H2: one bad sequence inside an otherwise valid envelope refuses the whole message."""
    raw = json.dumps(patch({"city": "PLACE"})).encode().replace(b"PLACE", bad)
    assert refusal(raw) == ("invalid_json", "H2", "$")


def test_h2_utf16_is_not_utf8() -> None:
    """H2: the same envelope in UTF-16 (with its BOM) is not UTF-8."""
    assert refusal(json.dumps(patch({})).encode("utf-16")) == ("invalid_json", "H2", "$")


@pytest.mark.parametrize("form", ["str", "bytes"])
def test_h2_one_utf8_bom_is_ignored(form: str) -> None:
    """H2, RFC 8259 section 8.1: a parser may ignore a leading byte order mark; this host does."""
    text = "\ufeff" + json.dumps(patch({"ok": True}))
    accepted(text if form == "str" else text.encode())


def test_h2_a_second_bom_is_content_not_a_bom() -> None:
    """H2: only one BOM may be ignored; a second U+FEFF is not JSON whitespace."""
    text = "\ufeff\ufeff" + json.dumps(patch({"ok": True}))
    assert refusal(text.encode()) == ("invalid_json", "H2", "$")


# ---- numbers (H2: finite, I-JSON) --------------------------------------------------------


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"])
def test_h2_non_finite_numbers_in_text_are_invalid_json(token: str) -> None:
    """H2: Python's json reads these; a browser's JSON.parse does not, so the host refuses."""
    assert refusal(patch_text('{"x": ' + token + "}")) == ("invalid_json", "H2", "$")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_h2_non_finite_floats_in_a_dict_are_refused_at_their_path(value: float) -> None:
    """H2: an in-kernel agent's NaN is refused, not written as NaN."""
    assert refusal(patch({"x": value})) == ("invalid_json", "H2", STATE + ".x")


def test_h2_a_5000_digit_integer_in_text_is_invalid_json() -> None:
    """H2: like 1e400, an integer beyond any double is not I-JSON (Python can't even read it)."""
    assert refusal(patch_text('{"n": 1' + "0" * 5000 + "}")) == ("invalid_json", "H2", "$")


def test_h2_a_5000_digit_integer_in_a_dict_is_refused() -> None:
    """H2: the same integer from an in-kernel agent: refused at its path, never raised."""
    assert refusal(patch({"n": 10**5000})) == ("invalid_json", "H2", STATE + ".n")


# ---- duplicate keys and __proto__ (H2) ---------------------------------------------------


def test_h2_a_duplicate_top_level_key_is_invalid_json() -> None:
    """H2: the last duplicate must not silently win."""
    text = json.dumps(patch({})).replace('"v": 1,', '"v": 1, "v": 1,')
    assert refusal(text) == ("invalid_json", "H2", "$")


def test_h2_a_duplicate_key_deep_in_the_state_is_invalid_json() -> None:
    """H2: duplicates are found at any depth (the parser reports them at $)."""
    deep = '{"a": ' * 10 + '{"x": 1, "x": 2}' + "}" * 10
    assert refusal(patch_text(deep)) == ("invalid_json", "H2", "$")


def test_h2_a_very_long_duplicate_key_still_gets_a_valid_error_envelope() -> None:
    """H2, H3: the refusal quotes the key, but its message must stay within 4096 characters."""
    key = "k" * 5000
    assert refusal(patch_text(f'{{"{key}": 1, "{key}": 2}}')) == ("invalid_json", "H2", "$")


def test_h2_proto_key_in_text_is_refused() -> None:
    """H2: __proto__ can rewrite a JavaScript object's prototype."""
    text = json.dumps(patch({})).replace('{"v"', '{"__proto__": {}, "v"')
    assert refusal(text) == ("invalid", "H2", "$")


@pytest.mark.parametrize("form", ["dict", "text"])
def test_h2_proto_key_in_the_state_is_refused_at_its_object(form: str) -> None:
    """H2: the path names the object holding the key."""
    message = patch({"chart": {"__proto__": {"polluted": True}}})
    assert refusal(message if form == "dict" else json.dumps(message)) == (
        "invalid",
        "H2",
        STATE + ".chart",
    )


def test_h2_proto_key_written_with_a_unicode_escape_is_refused_too() -> None:
    """H2: "\\u005f_proto__" is the same key once parsed; JSON.parse builds __proto__ from it."""
    text = patch_text('{"chart": {"\\u005f_proto__": {"polluted": true}}}')
    assert refusal(text) == ("invalid", "H2", STATE + ".chart")


def test_h2_proto_as_a_value_is_fine() -> None:
    """H2: only the key is dangerous; the string value is ordinary text."""
    accepted(patch({"label": "__proto__"}))


# ---- lone surrogates (H2) ----------------------------------------------------------------


@pytest.mark.parametrize("escape", ["\\ud800", "\\uDBFF", "\\udc00"])
def test_h2_escaped_lone_surrogate_in_text_is_refused(escape: str) -> None:
    """H2: a lone surrogate is not Unicode text; the path names the string."""
    assert refusal(patch_text('{"x": "a' + escape + 'b"}')) == ("invalid_json", "H2", STATE + ".x")


def test_h2_escaped_surrogate_pair_is_an_ordinary_character() -> None:
    """H2: a high + low pair is one character (no false positive)."""
    fx = accepted(patch_text('{"x": "\\ud83d\\ude00"}'))
    assert fx.host.surfaces[OPEN_INSTANCE].state == {"x": "\U0001f600"}


def test_h2_lone_surrogate_in_a_python_str_is_refused() -> None:
    """H2: an in-kernel agent's str with a lone surrogate."""
    assert refusal(patch({"x": "a\ud800b"})) == ("invalid_json", "H2", STATE + ".x")


def test_h2_lone_surrogate_in_a_key_is_refused() -> None:
    """H2: keys are strings too; the path names their object."""
    assert refusal(patch({"chart": {"\udc00": 1}})) == ("invalid_json", "H2", STATE + ".chart")


def test_h2_raw_lone_surrogate_in_json_text_is_refused() -> None:
    """H2: a str of JSON text holding the surrogate itself (not its escape) is not Unicode text;
    it is refused at the path of the string that holds it."""
    text = json.dumps(patch({"x": "a\ud800b"}), ensure_ascii=False)
    assert "\\ud800" not in text
    assert refusal(text) == ("invalid_json", "H2", "$.payload.state.x")


# ---- Python values that are not JSON: refused, never converted (H2) ----------------------


class Widget:
    """A custom object an agent might put in a state by mistake."""


NOT_JSON_VALUES = {
    "tuple": (1, 2),
    "set": {1, 2},
    "frozenset": frozenset({1}),
    "bytes": b"x",
    "bytearray": bytearray(b"x"),
    "complex": 1j,
    "decimal": Decimal("1.5"),
    "object": Widget(),
}


@pytest.mark.parametrize("name", sorted(NOT_JSON_VALUES))
def test_h2_non_json_python_values_are_refused_not_converted(name: str) -> None:
    """H2: json.dumps would turn a tuple into a list; the host refuses instead."""
    assert refusal(patch({"x": NOT_JSON_VALUES[name]})) == ("invalid", "H2", STATE + ".x")


@pytest.mark.parametrize("key", [1, 1.5, True, None, ("a",)], ids=repr)
def test_h2_non_string_keys_are_refused_not_converted(key: Any) -> None:
    """H2: json.dumps would write 1 as "1"; the host refuses, naming the object."""
    assert refusal(patch({"chart": {key: "v"}})) == ("invalid", "H2", STATE + ".chart")


class Unprintable:
    """An object whose repr fails: the refusal must not depend on printing the message."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("message", [Unprintable(), {"x": Unprintable()}], ids=["bare", "in-dict"])
def test_h2_an_object_whose_repr_raises_is_refused(message: Any) -> None:
    """H2, H3: receive never raises, whatever the object does."""
    code, rule, _ = refusal(message)
    assert (code, rule) == ("invalid", "H2")


# ---- a message must be an object (M1) ----------------------------------------------------


@pytest.mark.parametrize(
    "text", ["[]", '["lineup.v1.ui.patch"]', '"ui.patch"', "3", "-0.5", "null", "true"]
)
def test_m1_json_text_that_is_not_an_object_is_refused(text: str) -> None:
    """M1: a message is an envelope, a JSON object."""
    assert refusal(text) == ("invalid", "M1", "$")


@pytest.mark.parametrize("value", [[], [patch({})], 3, 2.5, None, True], ids=repr)
def test_m1_python_values_that_are_not_dicts_are_refused(value: Any) -> None:
    """M1: the same from an in-kernel agent (a str would be read as JSON text)."""
    assert refusal(value) == ("invalid", "M1", "$")


@pytest.mark.parametrize("empty", ["", b"", "   "], ids=repr)
def test_h2_empty_text_is_invalid_json(empty: str | bytes) -> None:
    """H2: nothing is not a JSON value."""
    assert refusal(empty) == ("invalid_json", "H2", "$")


def test_m2_a_type_that_is_not_a_string_is_refused() -> None:
    """M2: a list as type must be an ordinary refusal, not a crash on an unhashable key."""
    message = patch({})
    message["type"] = ["lineup.v1.ui.patch"]
    assert refusal(message) == ("invalid", "M2", "$.type")


def test_m2_a_very_long_unknown_type_still_gets_a_valid_error_envelope() -> None:
    """M2, H3: the refusal quotes the type, but its message must stay within 4096 characters."""
    message = patch({})
    message["type"] = "lineup.v1.x" + "y" * 5000
    assert refusal(message) == ("unknown_type", "M2", "$.type")


def test_h2_a_depth_error_with_long_keys_still_gets_a_valid_error_envelope() -> None:
    """H2, H3: the path of 62 keys of 64 characters is over 1024 characters; it must be cut."""
    state: Any = {}
    for _ in range(STATE_DEPTH_LIMIT + 1):
        state = {"k" * 64: state}
    code, rule, path = refusal(patch(state))
    assert (code, rule) == ("invalid_json", "H2")
    assert path.startswith(STATE)


@pytest.mark.parametrize("bad_id", ["bad id!", "", "x" * 129], ids=["space", "empty", "long"])
def test_m1_an_invalid_id_is_not_echoed_as_refused_id(bad_id: str) -> None:
    """M1, H3: the error names the refused message only by an id that is itself valid."""
    assert refusal(patch({}, bad_id)) == ("invalid", "M1", "$.id")


@pytest.mark.parametrize("form", ["dict", "text"])
def test_c10_an_app_call_with_nan_arguments_gets_a_failed_result_in_every_form(form: str) -> None:
    """C10, H3: its call_id is readable either way, so both forms get app.result 'failed'."""
    fx = fresh_host()
    call = valid_envelopes()["app.call"]
    call["payload"]["arguments"]["n"] = float("nan")
    error = receive_and_check(fx, call if form == "dict" else json.dumps(call))
    assert error is not None
    assert (fx.sent[-1]["type"], fx.sent[-1]["payload"]["status"]) == (
        "lineup.v1.app.result",
        "failed",
    )


# ---- aliasing: the host keeps its own copy (U4, H6) --------------------------------------


def test_u4_agent_mutating_its_dict_after_an_accepted_open_changes_nothing() -> None:
    """U4: the state shown is the state sent, whatever the agent's dict becomes later."""
    fx = fresh_host()
    message = valid_envelopes()["ui.open"]
    assert receive_and_check(fx, message) is None
    instance = message["payload"]["instance_id"]
    expected = snapshot(fx.host)
    message["payload"]["state"]["days"][0]["t"] = -40
    message["payload"]["state"]["days"].append({"t": 99})
    message["payload"]["app"]["html"] = "<script>evil()</script>"
    assert snapshot(fx.host) == expected
    assert fx.host.surfaces[instance].state["days"] == [{"t": 21.5, "rain": False}]


def test_h6_agent_mutating_its_dict_after_an_accepted_merge_patch_changes_nothing() -> None:
    """H6: a merged state shares nothing with the patch that produced it."""
    fx = fresh_host()
    message = envelope(
        "ui.patch",
        {"instance_id": OPEN_INSTANCE, "state": {"filters": {"region": ["EU"]}}, "merge": True},
        "msg_merge",
    )
    assert receive_and_check(fx, message) is None
    expected = snapshot(fx.host)
    message["payload"]["state"]["filters"]["region"].append("US")
    assert snapshot(fx.host) == expected


def test_u4_agent_mutating_a_model_after_receive_changes_nothing() -> None:
    """U4: a pydantic model is frozen, but the dicts inside it are the agent's own."""
    fx = fresh_host()
    series = [1, 2, 3]
    model = UiPatch.model_validate(patch({"series": series}))
    assert receive_and_check(fx, model) is None
    series.append(4)
    assert fx.host.surfaces[OPEN_INSTANCE].state == {"series": [1, 2, 3]}


MODEL_STATES = {
    "tuple": ({"point": (1, 2)}, ("invalid", "H2", STATE + ".point")),
    "int-key": ({"by_id": {7: "seven"}}, ("invalid", "H2", STATE + ".by_id")),
    "proto-key": ({"__proto__": {"polluted": True}}, ("invalid", "H2", STATE)),
    "too-deep": (
        nested_state(STATE_DEPTH_LIMIT + 1),
        ("invalid_json", "H2", STATE + ".k" * STATE_DEPTH_LIMIT),
    ),
}


@pytest.mark.parametrize("name", sorted(MODEL_STATES))
def test_h2_a_model_is_checked_like_the_same_dict(name: str) -> None:
    """H2: pydantic's Any lets a tuple, an int key, __proto__ or any depth through a model."""
    state, expected = MODEL_STATES[name]
    assert refusal(UiPatch.model_validate(patch(state))) == expected


def test_c12_a_subscriber_editing_its_app_result_cannot_change_the_remembered_answer() -> None:
    """C12: a repeated call_id gets the same answer, even if an agent edited its copy."""
    fx = fresh_host()

    def tamper(sent: dict[str, Any]) -> None:
        if sent["type"] == "lineup.v1.app.result":
            sent["payload"]["status"] = "completed"

    fx.host.subscribe(tamper)
    call = valid_envelopes()["app.call"]
    assert receive_and_check(fx, copy.deepcopy(call)) is None
    repeat = copy.deepcopy(call)
    repeat["id"] = "msg_call_again"
    assert receive_and_check(fx, repeat) is None
    sent = [r.envelope for r in fx.host.history if r.direction == "to_agent"]
    statuses = [e["payload"]["status"] for e in sent if e["type"] == "lineup.v1.app.result"]
    assert statuses[-2:] == ["unsupported", "unsupported"]  # as the host sent them


def test_h3_what_one_subscriber_does_to_its_envelope_no_one_else_sees() -> None:
    """H3: every agent and the history get the answer as sent, whatever an earlier agent did."""
    fx = fresh_host()  # its recorder subscribed first; the vandal comes second, a reader third

    def vandal(sent: dict[str, Any]) -> None:
        sent["payload"]["status"] = "completed"

    read_after: list[str] = []
    fx.host.subscribe(vandal)
    fx.host.subscribe(lambda sent: read_after.append(sent["payload"]["status"]))
    assert receive_and_check(fx, valid_envelopes()["app.call"]) is None
    assert read_after == ["unsupported"]
    assert fx.host.history[-1].envelope["payload"]["status"] == "unsupported"


def test_h3_a_watcher_failure_never_reports_a_refusal_for_an_applied_change() -> None:
    """H3: if the host says 'refused', nothing changed; a failing watcher must not split the two."""
    fx = fresh_host()

    def broken_watcher(change: object) -> None:
        raise RuntimeError("a view's bug")

    fx.host.watch_surfaces(broken_watcher)
    before = snapshot(fx.host)
    result = fx.host.receive(patch({"city": "Rome"}))
    changed = snapshot(fx.host) != before
    assert isinstance(result, (ProtocolError, type(None)))
    assert changed == (result is None), f"changed={changed} but receive returned {result!r}"
