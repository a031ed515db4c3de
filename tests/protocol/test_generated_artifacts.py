"""The generated, committed artifacts: in sync with the models and rules, and correct.

lineup.v1.schema.json and js/protocol.generated.js are written by
``python -m lineup_jupyter.protocol._codegen`` from the pydantic models and _rules.py; a
stale copy would let the browser or an agent's tooling check different rules than the kernel.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lineup_jupyter.protocol import _codegen, rules

ENVELOPES = Path(__file__).parents[1] / "fixtures" / "envelopes"
EXPECTED = ENVELOPES / "expected.json"
# What the schema cannot express, checked by the host only: I-JSON (rule H2: duplicate keys,
# NaN, depth, __proto__), byte sizes (U3, U9, H7), a type's direction against its sender (M2).
HOST_ONLY_RULES = {"H2"}
HOST_ONLY_CODES = {"too_large", "wrong_direction"}
# Cross-field checks of the component models (H12, H14) that the generated schema does not
# write: uniqueness of option ids by their `id` and value <= total are beyond JSON Schema; a
# pattern that is not a regular expression ("format": "regex" only annotates); an answered
# question's value and a text input's number bounds could be if/then, the generator has none.
# test_schema_cannot_express_these keeps the list honest.
SCHEMA_CANNOT_EXPRESS = {
    "component-answer-answered-without-value.json",
    "component-answer-cancelled-with-value.json",
    "component-show-choice-duplicate-option-ids.json",
    "component-show-input-bad-pattern.json",
    "component-show-input-min-with-text-type.json",
    "component-show-progress-above-total.json",
}


def _load_golden() -> dict[str, dict[str, Any]]:
    if not EXPECTED.exists():
        return {}
    golden: dict[str, dict[str, Any]] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return golden


GOLDEN = _load_golden()
VALID = sorted(name for name, e in GOLDEN.items() if e["verdict"] == "valid")
SCHEMA_REFUSED = sorted(
    name
    for name, e in GOLDEN.items()
    if e["verdict"] != "valid"
    and e["code"] not in HOST_ONLY_CODES
    and e["rule"] not in HOST_ONLY_RULES
    and name not in SCHEMA_CANNOT_EXPRESS
)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(_codegen.SCHEMA_PATH.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


@pytest.mark.parametrize("path", sorted(_codegen.artifacts()), ids=lambda p: p.name)
def test_committed_artifact_matches_generator(path: Path) -> None:
    """The committed file is exactly what the generator writes now (M1, S4)."""
    assert path.read_text(encoding="utf-8") == _codegen.artifacts()[path], (
        f"{path.name} is stale: run python -m lineup_jupyter.protocol._codegen"
    )


def test_check_mode_reports_no_drift() -> None:
    """``--check`` exits 0 on a clean tree, so CI can run it without writing."""
    assert _codegen.main(["--check"]) == 0


def test_schema_is_valid_draft_2020_12() -> None:
    """The schema is valid JSON Schema with its $schema, $id and one branch per type (M2)."""
    schema = _codegen.envelope_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == _codegen.SCHEMA_ID
    assert len(schema["oneOf"]) == len(rules.AGENT_TO_CLIENT) + len(rules.CLIENT_TO_AGENT)


def test_js_constants_cover_every_rule_value() -> None:
    """Every public constant of _rules.py is exported to the browser (S4)."""
    text = _codegen.JS_PATH.read_text(encoding="utf-8")
    names = [name for name in vars(rules) if name.isupper() and not name.startswith("_")]
    assert names
    for name in names:
        assert f"export const {name} = " in text


def test_golden_envelopes_exist() -> None:
    """The schema tests below have golden envelopes to run on (M1)."""
    if not GOLDEN:
        pytest.skip(f"{EXPECTED} does not exist yet: no golden envelopes to check the schema with")
    assert VALID
    assert SCHEMA_REFUSED
    assert all((ENVELOPES / name).exists() for name in GOLDEN)


@pytest.mark.parametrize("name", VALID)
def test_schema_accepts_valid_golden_envelope(
    name: str, validator: jsonschema.Draft202012Validator
) -> None:
    """Every envelope the host accepts is valid under the schema (M1, M2)."""
    validator.validate(json.loads((ENVELOPES / name).read_bytes()))


@pytest.mark.parametrize("name", SCHEMA_REFUSED)
def test_schema_refuses_invalid_golden_envelope(
    name: str, validator: jsonschema.Draft202012Validator
) -> None:
    """An envelope the host refuses for a rule JSON Schema can express is refused by the schema
    too (M1, M2, M3, U1-U10, C4-C11, H1, H4, H5); H2, sizes and direction are host-only."""
    assert not validator.is_valid(json.loads((ENVELOPES / name).read_bytes()))


@pytest.mark.parametrize("name", sorted(SCHEMA_CANNOT_EXPRESS))
def test_schema_cannot_express_these(name: str, validator: jsonschema.Draft202012Validator) -> None:
    """Each fixture set aside above is refused by the host but passes the schema; once the
    generator expresses its rule, this fails and the name comes off the list (H12, H14)."""
    assert GOLDEN[name]["verdict"] == "invalid"
    assert validator.is_valid(json.loads((ENVELOPES / name).read_bytes()))


def _seed_open() -> dict[str, Any]:
    return {
        "v": 1,
        "id": "msg_ui_01",
        "type": "lineup.v1.ui.open",
        "conversation_id": "conv_01",
        "sender": {"kind": "agent", "id": "agent_hermes_main"},
        "payload": {
            "instance_id": "weather.dashboard.01",
            "app": {"id": "com.lineup.weather.dashboard", "version": "1.0.0", "html": "<p>hi</p>"},
            "state": {"city": "上海"},
        },
    }


def _with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    message = copy.deepcopy(_seed_open())
    target = message
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return message


MUTATIONS = {
    "U1 instance_id with a space": (("payload", "instance_id"), "weather dashboard"),
    "U1 instance_id of 129 characters": (("payload", "instance_id"), "x" * 129),
    "U2 app id not reverse-domain": (("payload", "app", "id"), "Weather"),
    "U2 version not SemVer": (("payload", "app", "version"), "1.0"),
    "U4 state not an object": (("payload", "state"), [1, 2]),
    "M1 v is 2": (("v",), 2),
    "M1 id empty": (("id",), ""),
    "H1 unknown envelope field": (("conversationId",), "conv_01"),
    "H1 sender kind unknown": (("sender", "kind"), "robot"),
    "M2 unknown type": (("type",), "lineup.v1.chat.message"),
}


def test_schema_accepts_the_seed_open(validator: jsonschema.Draft202012Validator) -> None:
    """The seed's ui.open, the base of the mutations below, is valid (M1, U1)."""
    validator.validate(_seed_open())


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_schema_refuses_mutated_seed(case: str, validator: jsonschema.Draft202012Validator) -> None:
    """One broken field of a valid ui.open makes it invalid under the schema (rule in the id)."""
    path, value = MUTATIONS[case]
    assert not validator.is_valid(_with(path, value))
