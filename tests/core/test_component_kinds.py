"""A standard component kind is declared once (L2, H12, H14, C4): protocol/_models.py
COMPONENT_KINDS. Everything that lists the kinds derives from it; these tests catch what a
contributor could forget: a renderer missing on the Python side (the saved notebook's view;
js/tests/components.test.js checks the browser's), a question without its answer check, a
generated JS file not regenerated (tests/protocol/test_generated_artifacts.py)."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from lineup_jupyter import Host, ProtocolError
from lineup_jupyter.core import _components
from lineup_jupyter.protocol import validate_envelope
from lineup_jupyter.protocol._models import (
    COMPONENT_KINDS,
    COMPONENT_RENDERERS,
    COMPONENT_VERSIONS,
    QUESTION_KINDS,
    ComponentAnswerPayload,
    ComponentKind,
    ComponentShow,
    ComponentSpec,
    MarkdownComponent,
    _Component,
)
from lineup_jupyter.widgets import _static

from ..conftest import AGENT, envelope
from .test_components import SPECS, payload, show


def test_L2_the_declaration_is_the_one_list_of_kinds() -> None:
    """L2, C4, H14: the union, the versions, the question kinds and the renderers' names are
    the declaration's, in its order; no kind is declared twice."""
    kinds = [kind.kind for kind in COMPONENT_KINDS]
    assert len(set(kinds)) == len(kinds)
    union = get_args(get_args(ComponentSpec)[0])
    assert [get_args(member)[0] for member in union] == [kind.model for kind in COMPONENT_KINDS]
    assert list(COMPONENT_VERSIONS) == kinds == list(COMPONENT_RENDERERS)
    assert set(SPECS) == set(kinds)  # tests/core/test_components.py has a payload of each
    assert tuple(kind.kind for kind in COMPONENT_KINDS if kind.question) == QUESTION_KINDS
    answer_kinds = get_args(ComponentAnswerPayload.model_fields["kind"].annotation)
    assert answer_kinds == QUESTION_KINDS


def test_H12_an_undeclared_kind_is_refused_naming_the_declared_ones() -> None:
    """H12: the refusal lists exactly the declared kinds."""
    with pytest.raises(ProtocolError) as refused:
        validate_envelope(envelope("component.show", {"component_id": "x", "kind": "chart"}))
    assert refused.value.rule == "H12"
    assert ", ".join(COMPONENT_VERSIONS) in refused.value.message
    assert isinstance(validate_envelope(envelope("component.show", payload("text"))), ComponentShow)


def test_every_declared_renderer_is_registered_for_the_saved_view() -> None:
    """Drift: a declared renderer name with no static renderer, or one no kind names."""
    assert set(COMPONENT_RENDERERS.values()) == set(_static.STATIC_RENDERERS)


@pytest.mark.parametrize("kind", list(COMPONENT_VERSIONS))
def test_each_kind_has_a_saved_view_body(host: Host, kind: str) -> None:
    show(host, payload(kind))
    text, html = _static.component_line(host.components.get(f"{kind}_1"))
    assert text.startswith(f"{kind} from ") and text != f"{kind} from : "
    assert html.strip() not in ("", "<p></p>")


def test_a_kind_without_a_static_renderer_is_an_error_never_an_empty_body(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: a kind declared with a renderer the saved view never registered. Its body
    must not come out empty: component_line raises, naming the kind and where to register.
    Control: the same component draws while its renderer is registered."""
    show(host, payload("status"))
    component = host.components.get("status_1")
    assert (
        _static.component_line(component)[0]
        == f"status from {AGENT}: working: " + (SPECS["status"]["label"])
    )
    monkeypatch.setattr(
        _static, "COMPONENT_RENDERERS", {**COMPONENT_RENDERERS, "status": "unregistered"}
    )
    with pytest.raises(
        LookupError, match=r"'status' \(renderer 'unregistered'\).*STATIC_RENDERERS"
    ):
        _static.component_line(component)


def test_H14_every_question_kind_has_its_answer_check_and_only_those() -> None:
    assert set(_components.ANSWER_CHECKS) == set(QUESTION_KINDS)


def test_H14_a_question_kind_without_an_answer_check_refuses_every_answer(
    host: Host, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: a question kind declared without its check. No answer may pass unchecked.
    Control: with the check, a good answer passes."""
    show(host, payload("confirm"))
    spec: Any = host.components.get("confirm_1").spec
    assert _components._problem_with(spec, True) is None
    monkeypatch.delitem(_components.ANSWER_CHECKS, "confirm")
    assert _components._problem_with(spec, True) == "this host cannot check an answer to a confirm"


def test_a_kind_declared_without_its_literal_is_refused_at_once() -> None:
    """A model that does not name its kind cannot be declared (it would have no tag in the
    union); the error says what to write. Control: a model that names it is declared."""

    class Nameless(_Component):
        pass

    with pytest.raises(TypeError, match=r"Nameless must name its kind: kind: Literal\['name'\]"):
        ComponentKind(Nameless)
    assert ComponentKind(MarkdownComponent).kind == "markdown"
