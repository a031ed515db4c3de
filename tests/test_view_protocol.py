"""The view's comm protocol, defined once (_view_protocol.py): the kernel's checks (H38), the
widgets' dispatch tables and js/view_protocol.js all come from the same TypedDicts.

Every kind a widget takes is sent as its definition describes, through the comm, and must be
handled (not refused): a kind without a handler, or a check stricter than the definition, is
refused ``internal`` or ``invalid`` and shows here. The control takes one required field out
of each and finds the precise refusal.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Literal

import pytest
from typing_extensions import TypedDict, get_type_hints, is_typeddict

from lineup_jupyter import Host
from lineup_jupyter.core import _view_protocol as vp
from lineup_jupyter.widgets import _view_codegen as codegen
from lineup_jupyter.widgets import _view_messages as view_messages

from .conftest import view_sends

TAKES = {"host": vp.HOST_TAKES, "inspector": vp.INSPECTOR_TAKES, "apps": vp.APP_CENTER_TAKES}


def example(hint: Any) -> Any:
    """A value of the type a field is declared with."""
    if hint is Any or is_typeddict(hint):
        return {}
    if hint in (str, bool, int, float):
        return {str: "w", bool: True, int: 1, float: 1.0}[hint]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return args[0]
    if origin is list:
        return []
    if origin is dict:
        return {}
    return example(args[0])  # a union: its first member


def minimal(kind: str, message: type) -> dict[str, Any]:
    required = message.__required_keys__  # type: ignore[attr-defined]
    hints = get_type_hints(message)
    return {"kind": kind, **{name: example(hints[name]) for name in required if name != "kind"}}


def widgets(host: Host) -> dict[str, Any]:
    found = {"host": host.widget, "inspector": host.inspector, "apps": host.apps.widget}
    for widget in found.values():
        widget.sent = []
        widget.send = lambda content, buffers=None, w=widget: w.sent.append(content)
    return found


def h38_refusals(host: Host, before: int) -> list[dict[str, Any]]:
    return [r.error for r in list(host.history)[before:] if r.error and r.error["rule"] == "H38"]


@pytest.mark.parametrize("takes", [*TAKES.values(), vp.EVENT_ITEM], ids=lambda s: s.name)
def test_h38_every_field_a_view_sends_has_an_exact_check(takes: vp.MessageSet) -> None:
    """Each field of each kind becomes a check of its JSON types (a type the checks could
    only hold loosely, a Literal or a number, raises instead)."""
    checks = view_messages.fields(takes)
    assert checks.keys() == takes.keys()
    for kind, message in takes.items():
        assert checks[kind].keys() == get_type_hints(message).keys() - {"kind"}


def test_h38_a_field_the_checks_cannot_hold_exactly_is_not_accepted() -> None:
    """The control: a set with a Literal field other than the kind raises at once."""

    class Loose(TypedDict):
        kind: Literal["loose"]
        mode: Literal["a", "b"]

    with pytest.raises(TypeError, match="no exact JSON check"):
        view_messages.fields(vp.MessageSet("Loose", Loose))


@pytest.mark.parametrize(
    ("widget", "kind"), [(name, kind) for name, takes in TAKES.items() for kind in takes]
)
def test_h38_every_kind_a_widget_takes_is_handled(host: Host, widget: str, kind: str) -> None:
    host.connect_agent("a").open("w", html="<p>")
    view = widgets(host)[widget]
    message = minimal(kind, TAKES[widget][kind])
    before = len(host.history)
    view_sends(view, message)
    assert h38_refusals(host, before) == []


@pytest.mark.parametrize(
    ("kind", "field"),
    [
        (kind, field)
        for kind, message in vp.HOST_TAKES.items()
        for field in sorted(message.__required_keys__)  # type: ignore[attr-defined]
        if field != "kind"
    ],
)
def test_h38_a_missing_required_field_is_refused_precisely(
    host: Host, kind: str, field: str
) -> None:
    """The control: the same message without one field its definition requires."""
    message = minimal(kind, vp.HOST_TAKES[kind])
    del message[field]
    before = len(host.history)
    view_sends(widgets(host)["host"], message)
    (error,) = h38_refusals(host, before)
    assert (error["code"], error["path"]) == ("invalid", f"$.{field}")


def declared(message: dict[str, Any], sends: vp.MessageSet) -> None:
    """``message`` is of a kind ``sends`` declares, with every field its TypedDict requires,
    and none it does not know."""
    definition = sends[message[sends.key]]
    fields = get_type_hints(definition)
    assert definition.__required_keys__ <= message.keys() <= fields.keys(), message  # type: ignore[attr-defined]


def test_what_the_kernel_sends_is_declared(host: Host) -> None:
    """Every message the three widgets sent in a session, and every feed op, is one their
    sets declare, with the fields its TypedDict says (json round trip: as a view gets it)."""
    views = widgets(host)
    agent = host.connect_agent("a")
    agent.open("w", html="<p>", state={"n": 1})
    agent.patch("w", {"n": 2})
    agent.patch("w", {"n": 3}, merge=True)
    with agent.stream("s") as stream:
        stream.write("Hello")
        stream.write(", world")
    agent.say("*hi*", component_id="m")
    agent.remove("m")
    agent.close("w")
    view_sends(views["host"], {"kind": "sync"})
    view_sends(views["host"], {"kind": "consent_sync"})
    view_sends(views["host"], {"kind": "answer", "component_id": "nope", "status": "answered"})
    for kind in ("sync", "export"):
        view_sends(views["inspector"], {"kind": kind})
    view_sends(views["inspector"], {"kind": "states", "instance_id": "w"})
    view_sends(views["apps"], {"kind": "rollback", "app_id": "com.example.none"})
    sent = {name: json.loads(json.dumps(view.sent)) for name, view in views.items()}
    kinds = {name: {message["kind"] for message in messages} for name, messages in sent.items()}
    assert kinds["host"] >= {"snapshot", "feed", "consent", "answer_refused"}
    assert kinds["inspector"] == {"reset", "states", "export", "records"}
    assert kinds["apps"] == {"notice"}
    ops = set()
    for name, sends in (("host", vp.HOST_SENDS), ("inspector", vp.INSPECTOR_SENDS)):
        for message in sent[name]:
            declared(message, sends)
            for op in message.get("ops", []) if message["kind"] == "feed" else []:
                declared(op, vp.FEED_OPS)
                ops.add(op["op"])
    declared(sent["apps"][0], vp.APP_CENTER_SENDS)
    # The MCP apps' ops: tests/test_mcp.py, with a server.
    assert ops == {op for op in vp.FEED_OPS if not op.startswith("mcp_")}


def test_js_view_protocol_is_generated_from_the_definitions() -> None:
    """js/view_protocol.js is what the generator writes now (the browser's typedefs and the
    kernel's checks cannot drift apart)."""
    assert codegen.JS_PATH.read_text(encoding="utf-8") == codegen.js_text(), (
        "js/view_protocol.js is stale: run python -m lineup_jupyter.widgets._view_codegen"
    )
    assert codegen.main(["--check"]) == 0
