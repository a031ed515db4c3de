"""_ports.py: the layers below the Host depend on a small interface, never on the Host.

The broker is built and driven here on a stand-in (no Host, no kernel), and the modules below
the Host are read to prove none imports it or reaches into a private name of another object.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import lineup_jupyter
from lineup_jupyter import Capability, ProtocolError, validate_envelope
from lineup_jupyter.capabilities._audit import Audit
from lineup_jupyter.capabilities._broker import Broker
from lineup_jupyter.core._identity import KERNEL, Identity
from lineup_jupyter.core._ports import HostPort
from lineup_jupyter.core._surfaces import Surfaces, SurfacesView
from lineup_jupyter.protocol import AppCall, Limits
from lineup_jupyter.runtime._problems import Problems

from ..capabilities.test_broker import call
from ..conftest import AGENT, CONVERSATION

PACKAGE = Path(lineup_jupyter.__file__).parent
# Below the Host (issue 17): they get what they need of it through _ports, never the class
# (that they never import it is the layers' import contract, pyproject.toml, in ./dev lint).
LAYERS_BELOW = ("protocol", "runtime", "core", "capabilities", "appcenter", "agents", "mcp")
BELOW_THE_HOST = tuple(
    path.relative_to(PACKAGE).with_suffix("").as_posix()
    for layer in LAYERS_BELOW
    for path in sorted((PACKAGE / layer).glob("*.py"))
)
# Names that were reached into from below: the Host's, and the broker's behind the Host.
PRIVATE = {"_lock", "_send", "_bus", "_broker", "_track", "_connection_changed", "_state"}
PRIVATE |= {"_capabilities_changed", "_identities", "_host"}


@dataclass
class StandIn:
    """Everything HostPort asks for, and nothing else."""

    lock: Any = field(default_factory=threading.RLock)
    conversation_id: str = CONVERSATION
    limits: Limits = field(default_factory=Limits)
    surfaces: SurfacesView = field(default_factory=lambda: Surfaces(Limits()).view())
    problems: Problems = field(default_factory=Problems)


def app_call(call_id: str, arguments: dict[str, Any], id_: str) -> AppCall:
    model = validate_envelope(call(call_id, "demo.confirm", arguments, id_=id_))
    assert isinstance(model, AppCall)
    return model


def test_the_broker_runs_on_a_stand_in_for_the_host(tmp_path: Path) -> None:
    """C10, C12, H22 through the port alone: what it sends, and when it says to re-inventory."""
    port: HostPort = StandIn()
    sent: list[tuple[str, dict[str, Any], str | None]] = []
    visibility: list[None] = []

    def send(
        type_: str, payload: dict[str, Any], *, to: str | None, endpoint: object = None
    ) -> dict[str, Any]:
        sent.append((type_, payload, to))
        return {}

    broker = Broker(
        port,
        Audit(tmp_path / "audit.sqlite3"),
        send=send,
        on_visibility_changed=lambda: visibility.append(None),
    )
    broker.capabilities.declare(Capability("demo.confirm", "user_confirmation", handler=dict))
    assert visibility  # a new capability: the host is told to send a new inventory (C4)

    first = app_call("c1", {"n": 1}, "m1")
    sender = Identity(AGENT, 0, KERNEL, "the kernel")
    broker.check(first.payload, sender)
    broker.receive(first, sender)
    assert list(broker.pending) == ["c1"] and sent == []  # waits for the user
    repeat = app_call("c1", {"n": 1}, "m2")
    broker.check(repeat.payload, sender)
    broker.receive(repeat, sender)  # while the first waits: owed the same answer (H22)
    with pytest.raises(ProtocolError) as conflict:
        broker.check(app_call("c1", {"n": 2}, "m3").payload, sender)
    assert conflict.value.rule == "C12"

    answer = broker.decide("c1", "allow")
    assert answer == {"call_id": "c1", "status": "completed", "result": {"n": 1}}
    assert sent == [("lineup.v1.app.result", answer, AGENT)] * 2  # one per app.call received
    broker.audit.close()


def _is_host(node: ast.expr) -> bool:
    """``host``, ``self.host``, ``self._host``: an expression that names the Host."""
    if isinstance(node, ast.Name):
        return node.id == "host"
    return isinstance(node, ast.Attribute) and node.attr in ("host", "_host")


def _reach_ins(tree: ast.Module) -> list[ast.Attribute]:
    """A private name read on the Host (a module's own objects' privates are its business)."""
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE and _is_host(node.value)
    ]


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (name, ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8")))
        for name in BELOW_THE_HOST
    ]


@pytest.mark.parametrize(("name", "tree"), _modules(), ids=BELOW_THE_HOST)
def test_nothing_below_the_host_reaches_into_its_private_names(name: str, tree: ast.Module) -> None:
    reached = [f"line {node.lineno}: .{node.attr}" for node in _reach_ins(tree)]
    assert reached == []


def test_the_detector_sees_a_reach_in() -> None:
    """The control: the test above would catch what _broker did before issue 17."""
    tree = ast.parse("with self._host._lock:\n    self._host._send('t', {}, to=None)\n")
    assert {node.attr for node in _reach_ins(tree)} == {"_lock", "_send"}
    other = ast.parse("with host._lock:\n    session._lock\n    self._state\n")
    assert [node.attr for node in _reach_ins(other)] == ["_lock"]  # the host's, not its own


def test_the_threading_module_imports_nothing_of_the_package() -> None:
    tree = ast.parse((PACKAGE / "runtime" / "_threads.py").read_text(encoding="utf-8"))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level > 0]


PARTS = tuple(f"lineup_jupyter.host.{part}" for part in ("_intake", "_inventory", "_user_acts"))


def _imports_of_host_parts(path: Path) -> list[str]:
    """The Host's parts (host/_intake.py, _inventory.py, _user_acts.py) a module imports, its
    relative imports resolved."""
    package = ["lineup_jupyter", *path.relative_to(PACKAGE).parent.parts]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names = [module, *(f"{module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found += [name for name in names if name in PARTS]
    return found


def test_the_hosts_parts_are_used_by_the_host_alone() -> None:
    """Issue 17: the intake, the inventory and the user's acts are the composition root's
    parts: nothing outside host/ imports them (the Host's public methods are the way in)."""
    outside = {
        path.relative_to(PACKAGE).as_posix(): _imports_of_host_parts(path)
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.parent != PACKAGE / "host"
    }
    assert {module: names for module, names in outside.items() if names} == {}
    # The control: the detector sees the Host's own imports of them.
    assert _imports_of_host_parts(PACKAGE / "host" / "_host.py")


def test_the_views_come_from_above_and_only_when_first_shown(tmp_path: Path) -> None:
    """No layer imports the widgets (the import contract); the package's __init__ provides
    them to core/_views.py, imported when a view is first asked for, not before."""
    import subprocess
    import sys

    code = (
        "import sys; import lineup_jupyter as lj\n"
        "assert 'lineup_jupyter.widgets._widget' not in sys.modules, 'imported early'\n"
        "assert 'anywidget' not in sys.modules, 'anywidget imported early'\n"
        f"host = lj.Host('conv_01', data_dir={str(tmp_path)!r})\n"
        "host.connect_agent('a1').open('w1', html='<p>x</p>', state={})\n"
        "assert 'anywidget' not in sys.modules, 'anywidget imported by a host'\n"
        "kinds = type(host.widget), type(host.apps.widget), type(host.inspector)\n"
        "assert [k.__name__ for k in kinds] == ['HostWidget', 'AppCenterWidget', "
        "'InspectorWidget'], kinds\n"
        "assert 'anywidget' in sys.modules  # the control: the check above sees an import\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
