"""The Host is a composition root (issue 25): it builds the parts and hands each what it
needs; what they do lives in them. Its class stays small, and the calls only its widget makes
are the widget's port (host/_view_port.py), not the Host's public API."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host
from lineup_jupyter.host import _host

from ..conftest import view_sends

MAX_HOST_LINES = 400


def test_the_host_class_is_at_most_400_lines() -> None:
    tree = ast.parse(Path(inspect.getfile(_host)).read_text("utf-8"))
    (host,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Host"]
    assert host.end_lineno is not None
    assert host.end_lineno - host.lineno + 1 <= MAX_HOST_LINES


def test_the_widgets_own_calls_go_through_its_port_without_a_warning(host: Host) -> None:
    """A surface's refusal reported by the view reaches the history through the widget's
    port: no deprecated Host call runs (pytest turns a DeprecationWarning into an error)."""
    agent = host.connect_agent("agent_a")
    agent.open("w1", html="<p>one</p>", state={})
    widget: Any = host.widget
    widget.send = lambda content, buffers=None: None
    view_sends(widget, {"kind": "refused", "instance_id": "w1", "code": "csp_violation"})
    (record,) = host.history.select(kind="refused")
    assert record.instance_id == "w1" and record.error is not None
    assert record.error["code"] == "csp_violation"


@pytest.mark.parametrize("name", ["report_refused", "watch_connections"])
def test_the_widgets_old_names_on_the_host_warn_and_still_work(host: Host, name: str) -> None:
    """A rename of something public comes with a deprecation: the old names still work, with
    a DeprecationWarning saying they are the widget's."""
    host.connect_agent("agent_a").open("w1", html="<p>one</p>", state={})
    arguments: dict[str, tuple[Any, ...]] = {
        "report_refused": ("w1", {"code": "csp_violation"}),
        "watch_connections": (lambda: None,),
    }
    with pytest.warns(DeprecationWarning, match=f"Host.{name} is the host widget's own call"):
        result = getattr(host, name)(*arguments[name])
    if name == "report_refused":
        assert result.code == "csp_violation"
        assert len(host.history.select(kind="refused")) == 1
    else:
        assert callable(result)
