"""H38, H2, H3: nothing a view sends, and no Python object given to Host.receive, raises in
the kernel. Each input is handled or refused with a precise reason, never ``internal``.

The view's side is fuzzed at the widgets' message handlers (the comm's entry points) with
messages shaped like each kind the views send, fields of any JSON type, numbers past a
double and NaN included (Python's json reads NaN from a comm). Host.receive is fuzzed with
objects whose types are subclasses of dict, list, str and int with methods that raise.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lineup_jupyter import Host, ProtocolError

from ..conftest import envelope, examples, open_payload, view_sends

FUZZ = settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck))

NUMBERS = st.one_of(
    st.integers(),
    st.sampled_from([10**308 * 2, -(10**400), 10**401, 2**1024]),
    st.floats(allow_nan=True, allow_infinity=True),
)
IDS = st.sampled_from(["w", "q", "c1", "missing", "com.lineup.svg-canvas"])
LEAVES = st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=8), IDS)
JSON = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
FIELDS = [
    "instance_id",
    "message",
    "items",
    "component_id",
    "status",
    "value",
    "code",
    "rule",
    "path",
    "call_id",
    "decision",
    "remember",
    "typed_name",
    "outcome",
    "capability",
    "app_id",
]
KINDS = [
    "sync",
    "event",
    "events",
    "close",
    "refused",
    "answer",
    "consent_sync",
    "consent_decide",
    "consent_revoke",
    "states",
    "export",
    "refresh",
    "verify",
    "enable",
    "disable",
    "rollback",
    "nope",
]
SURFACE_EVENT = st.fixed_dictionaries(
    {"namespace": st.just("lineup.surface.v1"), "type": st.just("event")},
    optional={"event": st.one_of(st.just("go"), JSON), "data": JSON},
)
VIEW_MESSAGES = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"kind": st.one_of(st.sampled_from(KINDS), JSON)},
        optional={
            **{name: st.one_of(IDS, JSON) for name in FIELDS},
            "message": st.one_of(SURFACE_EVENT, JSON),
            "status": st.one_of(st.sampled_from(["answered", "cancelled"]), JSON),
            "decision": st.one_of(st.sampled_from(["allow", "deny", "cancel"]), JSON),
        },
    ),
)


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> tuple[Host, list[Any]]:
    """One host with a surface, a number question and the three widgets, their sends kept."""
    host = Host("conv_01", data_dir=tmp_path_factory.mktemp("views"))
    agent = host.connect_agent("a")
    agent.open("w", html="<p>")
    widgets = [host.widget, host.inspector, host.apps.widget]
    for widget in widgets:
        widget.send = lambda content, buffers=None: None
    return host, widgets


def no_internal(host: Host, caplog: pytest.LogCaptureFixture) -> None:
    internal = [r for r in host.history if r.error and r.error.get("code") == "internal"]
    assert internal == []
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []


@FUZZ
@given(content=VIEW_MESSAGES)
def test_h38_nothing_a_view_sends_raises_in_the_kernel(
    views: tuple[Host, list[Any]], content: Any, caplog: pytest.LogCaptureFixture
) -> None:
    host, widgets = views
    agent = host.connect_agent("a")
    if host.components.get("q") is None or not host.components.get("q").pending:  # type: ignore[union-attr]
        agent.ask_input("n?", input_type="number", component_id="q", min=0, max=10)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="lineup_jupyter"):
        for widget in widgets:
            view_sends(widget, content)
    no_internal(host, caplog)


def test_h38_the_reported_examples_are_refused_precisely(
    views: tuple[Host, list[Any]], caplog: pytest.LogCaptureFixture
) -> None:
    """The issue's three: a 401-digit answer (was OverflowError), report_refused with
    code=[] (was TypeError), straight to the widget's port too."""
    host, (widget, *_) = views
    question = host.connect_agent("a").ask_input("n?", input_type="number")
    before = len(host.history)
    with pytest.raises(ProtocolError) as refused:
        host.answer(question.component_id, "answered", 10**401)
    error = refused.value
    assert (error.code, error.rule, error.path) == (
        "invalid_json",
        "H2",
        "$.payload.value",
    )
    port = host._views  # what the widget reports with (the port only it is given)
    assert port.report_refused("w", {"code": [], "rule": {}, "path": 5}).code == "invalid"
    view_sends(widget, {"kind": "refused", "instance_id": "w", "code": []})
    assert [r.error["path"] for r in list(host.history)[before:] if r.error] == [
        "$.payload.value",
        "5",
        "$.code",
    ]
    no_internal(host, caplog)


class Raising(Exception):
    pass


def _raise(*_args: Any, **_kwargs: Any) -> Any:
    raise Raising("a hostile method")


# Subclasses of every JSON container and scalar whose every method the host might call raises.
HOSTILE = {
    base: type(
        f"Hostile{base.__name__.title()}",
        (base,),
        {
            name: _raise
            for name in (
                "items",
                "keys",
                "values",
                "get",
                "__iter__",
                "__getitem__",
                "__len__",
                "__eq__",
                "__hash__",
                "__repr__",
                "__str__",
                "isascii",
                "encode",
                "__index__",
                "__int__",
                "__float__",
                "__bool__",
                "__contains__",
            )
            if hasattr(base, name)
        },
    )
    for base in (dict, list, str, int)
}


def hostile(value: Any) -> Any:
    """The same value as a hostile subclass (the constructors do not call the overrides)."""
    for base, cls in HOSTILE.items():
        if type(value) is base:
            return cls(value)
    return value


def with_hostile_nodes(draw: st.DrawFn, value: Any) -> Any:
    if isinstance(value, dict):
        value = {k: with_hostile_nodes(draw, v) for k, v in value.items()}
    elif isinstance(value, list):
        value = [with_hostile_nodes(draw, v) for v in value]
    return hostile(value) if draw(st.integers(0, 3)) == 0 else value


@st.composite
def hostile_envelopes(draw: st.DrawFn) -> Any:
    base = envelope("ui.patch", {"instance_id": "weather.dashboard.01", "state": {"n": [1]}})
    return with_hostile_nodes(draw, base)


@FUZZ
@given(raw=hostile_envelopes())
def test_h2_h3_no_python_object_makes_host_receive_raise(raw: Any) -> None:
    """H2, H3: an envelope with hostile subclasses anywhere is refused (invalid, at the
    hostile node's path) with exactly one answer; the surface is unchanged."""
    host = Host("conv_01")
    sent: list[dict[str, Any]] = []
    assert host.receive(envelope("ui.open", open_payload(), id_="setup")) is None
    state = host.surfaces["weather.dashboard.01"].state
    host.subscribe(sent.append)
    sent.clear()  # the subscriber's first inventory, if any (C1)
    error = host.receive(raw)
    plain = type(raw) is dict and all(type(node) in (dict, list, str, int) for node in _nodes(raw))
    if plain:
        assert error is None
    else:
        assert isinstance(error, ProtocolError) and error.code == "invalid"
        assert host.surfaces["weather.dashboard.01"].state == state
    assert len(sent) == (0 if plain else 1)
    assert [r for r in host.history if r.error and r.error["code"] == "internal"] == []


def _nodes(value: Any) -> list[Any]:
    found = [value]
    if type(value) is dict:
        for key, item in dict.items(value):
            found += [key, *_nodes(item)]
    elif type(value) is list:
        for item in list.__iter__(value):
            found += _nodes(item)
    return found


def test_h2_the_reported_dict_subclass_is_refused_not_raised() -> None:
    """The issue's example: a dict subclass whose items() raises made Host.receive raise."""
    host = Host("conv_01")
    error = host.receive(HOSTILE[dict](envelope("ui.close", {"instance_id": "x", "reason": "r"})))
    assert error is not None and (error.code, error.rule, error.path) == ("invalid", "H2", "$")
    assert "HostileDict is not a JSON value" in error.message
