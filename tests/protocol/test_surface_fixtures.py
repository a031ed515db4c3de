"""The golden surface messages through the kernel's validator (S4, U7, U9, H2).

js/tests/surface_message.test.js runs the same cases through the browser's twin; both must
give the same verdict, code, rule and path, so a surface is refused alike on both sides.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter.protocol import validate_surface_message
from lineup_jupyter.protocol._errors import ProtocolError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "surface_messages.json"
CASES: list[dict[str, Any]] = json.loads(FIXTURES.read_text(encoding="utf-8"))
_BASE = {"namespace": "lineup.surface.v1", "type": "event", "event": "refresh"}
# Python twins of the JS-only cases that a Python value can express (JSON cannot write NaN).
PYTHON_TWINS: dict[str, Any] = {"NaN in data": {**_BASE, "data": {"x": math.nan}}}


def _param(case: dict[str, Any]) -> Any:
    marks = []
    if "xfail_python" in case:
        marks.append(pytest.mark.xfail(reason=case["xfail_python"], strict=True))
    return pytest.param(case, id=f"{case['rule']}: {case['name']}", marks=marks)


def _check(case: dict[str, Any], message: Any) -> None:
    if case["expect"] == "valid":
        event, data = validate_surface_message(message)
        assert (event, data) == (message["event"], message["data"])
        return
    with pytest.raises(ProtocolError) as caught:
        validate_surface_message(message)
    error = caught.value
    assert (error.code, error.rule, error.path) == (case["code"], case["rule"], case["path"])
    assert error.message


@pytest.mark.parametrize("case", [_param(c) for c in CASES if not c.get("skip_python")])
def test_surface_fixture(case: dict[str, Any]) -> None:
    """Each golden case gets the verdict, code, rule and path the fixture states (U7, U9, H2)."""
    _check(case, case["message"])


@pytest.mark.parametrize("name", sorted(PYTHON_TWINS))
def test_surface_fixture_python_twin(name: str) -> None:
    """A JS-only case, rebuilt from Python values, gets the same verdict (H2)."""
    (case,) = [c for c in CASES if c["name"] == name]
    _check(case, PYTHON_TWINS[name])


def test_fixtures_are_well_formed() -> None:
    """Names are unique, every branch of U7, U9 and H2 is covered, both verdicts appear."""
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 30
    for case in CASES:
        assert case["expect"] in {"valid", "invalid"}
        assert ("code" in case) == ("path" in case) == (case["expect"] == "invalid")
        assert ("message_js" in case) == bool(case.get("skip_python"))
    codes = {c.get("code") for c in CASES}
    assert {"invalid", "invalid_json", "too_large"} <= codes
