"""Fuzzing Host.receive: whatever arrives, the contract in ``receive_contract`` holds (H2, H3, M1).

Two kinds of input: arbitrary JSON values (as Python objects, as JSON text, as bytes), and valid
envelopes of every agent->client type with random mutations. A failure prints a
``@reproduce_failure`` blob; paste it above the test to replay that exact example.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from lineup_jupyter.protocol import ENVELOPE_ADAPTER

from ..conftest import examples
from ..receive_contract import (
    AGENT,
    ANSWERED_CALL,
    OPEN_INSTANCE,
    fresh_host,
    receive_and_check,
    valid_envelopes,
)

FUZZ = settings(
    max_examples=examples(400),
    deadline=None,  # a 1 MiB message legitimately takes milliseconds
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- arbitrary JSON values ---------------------------------------------------------------

# Every code point, lone surrogates and control characters included (Cs is excluded by default).
ANY_CHAR = st.characters(exclude_categories=())
# Past 4300 digits Python cannot repr an int, so neither can Hypothesis report one: the
# 5000-digit case lives in test_robustness.
HUGE_INTS = st.sampled_from([2**53 + 1, 2**64, -(2**63) - 1, 10**400, -(10**4000)])
NUMBERS = st.one_of(st.integers(), HUGE_INTS, st.floats(allow_nan=True, allow_infinity=True))
STRINGS = st.text(alphabet=ANY_CHAR, max_size=40)
# Keys the host looks at, and the one it must refuse, mixed with arbitrary ones.
KEYS = st.one_of(
    STRINGS,
    st.sampled_from(
        ["__proto__", "v", "id", "type", "sender", "payload", "state", "instance_id", "call_id"]
    ),
)
JSON_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), NUMBERS, STRINGS),
    lambda children: st.one_of(
        st.lists(children, max_size=5), st.dictionaries(KEYS, children, max_size=5)
    ),
    max_leaves=30,
)
ALL_TYPES = [
    f"lineup.v1.{t}"
    for t in (
        "ui.open",
        "ui.patch",
        "ui.close",
        "app.call",
        "ui.event",
        "client.inventory",
        "app.list",
        "app.result",
        "error",
        "ui.frobnicate",
        "app.teleport",
    )
] + [
    "lineup.v2.ui.open",
    "LINEUP.V1.UI.OPEN",
    "lineup.v1.ui.opn",
    "ui.open",
    "",
    " lineup.v1.ui.open",
]
# Random values shaped like an envelope reach further into validation than random dicts.
ENVELOPE_SHAPED = st.fixed_dictionaries(
    {},
    optional={
        "v": st.one_of(st.just(1), JSON_VALUES),
        "id": st.one_of(st.just("msg_1"), JSON_VALUES),
        "type": st.one_of(st.sampled_from(ALL_TYPES), JSON_VALUES),
        "conversation_id": st.one_of(st.just("conv_01"), JSON_VALUES),
        "sender": st.one_of(st.just({"kind": "agent", "id": AGENT}), JSON_VALUES),
        "payload": JSON_VALUES,
    },
)


def as_text(value: Any, ensure_ascii: bool) -> str:
    try:
        return json.dumps(value, allow_nan=True, ensure_ascii=ensure_ascii)
    except ValueError:  # defensive: Python refuses to write ints past 4300 digits
        assume(False)
        raise


@FUZZ
@given(value=st.one_of(JSON_VALUES, ENVELOPE_SHAPED))
def test_any_json_value_as_a_python_object_keeps_the_contract(value: Any) -> None:
    """H2, H3, M1: any dict, list, scalar, NaN or lone surrogate: refused or accepted, no raise."""
    receive_and_check(fresh_host(), value)


@FUZZ
@given(value=st.one_of(JSON_VALUES, ENVELOPE_SHAPED), ensure_ascii=st.booleans())
def test_any_json_value_as_text_keeps_the_contract(value: Any, ensure_ascii: bool) -> None:
    """H2, H3: the same values as JSON text; NaN and raw surrogates as Python writes them."""
    receive_and_check(fresh_host(), as_text(value, ensure_ascii))


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=300), STRINGS.map(lambda s: s.encode("utf-8", "surrogatepass"))
    )
)
def test_any_bytes_keep_the_contract(data: bytes) -> None:
    """H2: random bytes (not UTF-8, CESU-8 surrogates, BOMs by chance) are refused, never raised."""
    receive_and_check(fresh_host(), data)


# ---- mutated valid envelopes -------------------------------------------------------------

Path = tuple[Any, ...]


def paths(value: Any, path: Path = ()) -> list[Path]:
    """Every location inside ``value`` (not the root itself)."""
    found: list[Path] = []
    items = (
        value.items()
        if isinstance(value, dict)
        else (enumerate(value) if isinstance(value, list) else ())
    )
    for key, item in items:
        found.append((*path, key))
        found.extend(paths(item, (*path, key)))
    return found


def at(value: Any, path: Path) -> Any:
    for key in path:
        value = value[key]
    return value


def nested(inner: Any, depth: int, in_list: bool) -> Any:
    for _ in range(depth):
        inner = [inner] if in_list else {"k": inner}
    return inner


def mutate(data: st.DataObject, env: dict[str, Any]) -> None:
    """Apply one random mutation to ``env`` in place."""
    every = paths(env)
    members = [p for p in every if isinstance(at(env, p[:-1]), dict)]
    dicts = [(), *(p for p in every if isinstance(at(env, p), dict))]
    strings = [p for p in every if isinstance(at(env, p), str)]
    payload = env.get("payload")
    kind = data.draw(
        st.sampled_from(
            [
                "delete",
                "replace",
                "add_key",
                "type",
                "sender_kind",
                "deep_nest",
                "grow_string",
                "reuse_id",
                "reuse_call_id",
            ]
        ),
        label="mutation",
    )
    if kind == "delete" and members:
        path = data.draw(st.sampled_from(members))
        del at(env, path[:-1])[path[-1]]
    elif kind == "replace" and every:
        path = data.draw(st.sampled_from(every))
        at(env, path[:-1])[path[-1]] = data.draw(JSON_VALUES)
    elif kind == "add_key":
        at(env, data.draw(st.sampled_from(dicts)))[data.draw(KEYS)] = data.draw(JSON_VALUES)
    elif kind == "type":
        env["type"] = data.draw(st.sampled_from(ALL_TYPES))
    elif kind == "sender_kind":
        sender = env.get("sender")
        kind_now = sender.get("kind") if isinstance(sender, dict) else None
        env["sender"] = {"kind": "client" if kind_now == "agent" else "agent", "id": AGENT}
    elif kind == "deep_nest" and isinstance(payload, dict):
        key = "arguments" if "arguments" in payload else "state"
        payload[key] = nested(
            payload.get(key, {}), data.draw(st.integers(1, 80)), data.draw(st.booleans())
        )
    elif kind == "grow_string" and strings:
        path = data.draw(st.sampled_from(strings))
        length = data.draw(st.sampled_from([65, 129, 1025, 4097, 170_000, 270_000, 1_100_000]))
        seed = at(env, path) or "x"
        at(env, path[:-1])[path[-1]] = (seed * (length // len(seed) + 1))[:length]
    elif kind == "reuse_id":
        env["id"] = data.draw(st.sampled_from(["msg_setup_open", "msg_setup_call", "msg_patch_1"]))
    elif kind == "reuse_call_id" and isinstance(payload, dict):
        payload["call_id"] = ANSWERED_CALL


def in_form(data: st.DataObject, env: dict[str, Any]) -> Any:
    form = data.draw(st.sampled_from(["dict", "text", "bytes", "model"]), label="form")
    if form == "model":
        try:  # an in-kernel agent may hand over a model; pydantic alone checks less than H2
            return ENVELOPE_ADAPTER.validate_python(env)
        except (ValidationError, ValueError, TypeError):
            return env
    if form == "dict":
        return env
    text = as_text(env, data.draw(st.booleans(), label="ensure_ascii"))
    return text if form == "text" else text.encode("utf-8", "surrogatepass")


@FUZZ
@given(data=st.data())
def test_mutated_valid_envelopes_keep_the_contract(data: st.DataObject) -> None:
    """H1-H9, M1-M3, U1-U5, C9, C12: 1-3 mutated envelopes in a row; refusals change nothing."""
    fx = fresh_host()
    templates = valid_envelopes()
    for _ in range(data.draw(st.integers(1, 3), label="messages")):
        env = copy.deepcopy(templates[data.draw(st.sampled_from(sorted(templates)))])
        for _ in range(data.draw(st.integers(1, 3), label="mutations")):
            mutate(data, env)
        receive_and_check(fx, in_form(data, env))


# ---- the unmutated envelopes are accepted, in every form ---------------------------------


@pytest.mark.parametrize("form", ["dict", "text", "bytes"])
@pytest.mark.parametrize("type_", sorted(valid_envelopes()))
def test_each_valid_envelope_is_accepted(type_: str, form: str) -> None:
    """M2: the fuzzer's starting points really are valid, so its refusals come from mutations."""
    fx = fresh_host()
    env = valid_envelopes()[type_]
    text = json.dumps(env)
    message = {"dict": env, "text": text, "bytes": text.encode()}[form]
    answers_before = len(fx.sent)
    assert receive_and_check(fx, message) is None
    answers = [a["type"] for a in fx.sent[answers_before:]]
    # C10: an app.call is answered (unsupported: weather.lookup is not declared); ui.* are not.
    assert answers == (["lineup.v1.app.result"] if type_ == "app.call" else [])
    if type_ == "ui.patch":
        assert fx.host.surfaces[OPEN_INSTANCE].state == env["payload"]["state"]
    if type_ == "ui.close":
        assert OPEN_INSTANCE not in fx.host.surfaces
