"""Shared fixtures: golden envelopes and small builders for valid messages."""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# jsonschema, when it finds rfc3987_syntax installed (JupyterLab pulls it in), builds that
# package's Lark grammars at import: 2-3 s of CPU in each test worker that checks a schema
# (core/_schemas.py says why the package imports jsonschema lazily). Nothing here asserts a
# format (the host checks none, and no test uses an "iri" format), so the test workers import
# jsonschema without it: an import of a module set to None in sys.modules fails, and jsonschema
# then leaves its iri formats out.
sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from lineup_jupyter import Host  # noqa: E402

pytest_plugins = ["tests.leaks"]

FIXTURES = Path(__file__).parent / "fixtures"
ENVELOPES = FIXTURES / "envelopes"
EXPECTED: dict[str, dict[str, str]] = json.loads((ENVELOPES / "expected.json").read_text())
CONVERSATION = "conv_01"
AGENT = "agent_hermes_main"

# ./dev quick loads this profile (--hypothesis-profile=quick): property tests run a tenth of the
# examples they run in the whole suite, so the quick tier stays quick and still runs every test.
settings.register_profile("quick", max_examples=10)


def examples(full: int) -> int:
    """A property test's example count: ``full`` in the whole suite, a tenth in ./dev quick."""
    return max(1, full * settings().max_examples // settings.get_profile("default").max_examples)


def golden(name: str) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((ENVELOPES / name).read_text("utf-8"))
    return value


def envelope(
    type_: str,
    payload: dict[str, Any],
    *,
    id_: str = "m1",
    sender: str = AGENT,
    kind: str = "agent",
    conversation: str = CONVERSATION,
) -> dict[str, Any]:
    return {
        "v": 1,
        "id": id_,
        "type": f"lineup.v1.{type_}",
        "conversation_id": conversation,
        "sender": {"kind": kind, "id": sender},
        "payload": copy.deepcopy(payload),
    }


def open_payload(instance_id: str = "weather.dashboard.01", **state: Any) -> dict[str, Any]:
    return {
        "instance_id": instance_id,
        "app": {
            "id": "com.lineup.weather.dashboard",
            "version": "1.0.0",
            "html": "<main><button id='refresh'>refresh</button></main>",
        },
        "state": state or {"city": "Beijing", "temperature": 22},
    }


class Recorder:
    """Collects what a host sends to agents."""

    def __init__(self, host: Host) -> None:
        self.sent: list[dict[str, Any]] = []
        host.subscribe(self.sent.append)
        # C1: a new subscriber hears the current inventory first, at once; kept here, so
        # that `sent` is what the host sent in answer to what a test does next.
        (first,) = self.sent
        assert first["type"] == "lineup.v1.client.inventory" and "target" not in first
        self.inventory = self.sent.pop()

    def types(self) -> list[str]:
        return [e["type"].removeprefix("lineup.v1.") for e in self.sent]

    def last(self) -> dict[str, Any]:
        return self.sent[-1]


@pytest.fixture(autouse=True)
def lineup_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's audit database (and any kernel it starts) lives in a temp dir, never in
    the user's data dir; and the default artifacts folder (the cwd's) is a temp dir too."""
    home = tmp_path_factory.mktemp("lineup-home")
    monkeypatch.setenv("LINEUP_JUPYTER_HOME", str(home))
    monkeypatch.chdir(home)
    return home


@pytest.fixture
def host() -> Iterator[Host]:
    """A host closed after its test: what it started (agents, servers, listeners) ends too."""
    with Host(conversation_id=CONVERSATION) as host:
        yield host


@pytest.fixture
def sent(host: Host) -> Recorder:
    return Recorder(host)


def feed(host: Host) -> Any:
    """The host's widget with its comm replaced by ``widget.sent``: each message as a view
    gets it (a JSON round trip, so no Python object is shared with the kernel)."""
    widget = host.widget
    widget.sent = []
    widget.send = lambda content, buffers=None: widget.sent.append(json.loads(json.dumps(content)))
    return widget


@pytest.fixture
def fed(host: Host) -> Any:
    """``feed(host)`` for the test's host."""
    return feed(host)


def view_sends(widget: Any, content: Any) -> None:
    """``content`` as ``widget``'s view sends it: a custom comm message, handed to the
    widget's comm the way the kernel hands it one from the browser (ipywidgets reads it and
    calls the widget's message handler, which checks it first, H38)."""
    widget.comm.handle_msg(
        {"content": {"data": {"method": "custom", "content": content}}, "buffers": []}
    )


def consent_state(widget: Any) -> dict[str, Any]:
    """The consent cards as a view (re)drawn gets them: it sends ``consent_sync`` and the
    widget (a ``fed`` one) answers with the whole ``consent`` message."""
    view_sends(widget, {"kind": "consent_sync"})
    message: dict[str, Any] = widget.sent[-1]
    assert message["kind"] == "consent"
    return message
