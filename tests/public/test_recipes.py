"""docs/architecture.md's recipes, walked ("Where a new piece goes"): each adds a throwaway
piece exactly as its recipe says, touching exactly the files it names, and the tests that
cover that piece pass; the controls show those tests fail while a named step is missing.

The component kind, the built-in capability and the view message are added to a copy of the
repository (their declarations are read at import), and its tests run there in a child
process; the transport is a module of its own, loaded here, as the recipe's is."""

from __future__ import annotations

import ast
import filecmp
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lineup_jupyter import Host
from lineup_jupyter.agents._remote import RemoteAgent
from lineup_jupyter.host._host import session_port

from ..conftest import view_sends

pytestmark = pytest.mark.recipe

ROOT = Path(__file__).resolve().parents[2]
COPIED = ("lineup_jupyter", "js", "tests", "pyproject.toml", "package.json")
GENERATED = {"js/protocol.generated.js", "lineup_jupyter/protocol/lineup.v1.schema.json"}


def copy_of_the_repository(into: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "node_modules", "static", "*.pyc")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=ignore)
        else:
            shutil.copy2(source, into / name)
    return into


def edit(copy: Path, path: str, after: str, insert: str) -> None:
    """Insert ``insert`` after the one occurrence of ``after`` in ``path``."""
    file = copy / path
    text = file.read_text("utf-8")
    assert text.count(after) == 1, f"{path}: the recipe's anchor {after!r} moved"
    file.write_text(text.replace(after, after + insert), "utf-8")


def run(copy: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        argv, cwd=copy, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def pytest_in(copy: Path, *tests: str) -> subprocess.CompletedProcess[str]:
    args = ("-q", "-p", "no:cacheprovider", "-m", "not browser", *tests)
    return run(copy, sys.executable, "-m", "pytest", *args)


def passed(result: subprocess.CompletedProcess[str]) -> bool:
    return result.returncode == 0


def changed(copy: Path) -> set[str]:
    """The files of the copy that differ from the repository's, or are new."""
    differ = set()
    for name in COPIED:
        for file in [copy / name] if (copy / name).is_file() else (copy / name).rglob("*"):
            if file.is_dir() or "__pycache__" in file.parts:
                continue
            relative = file.relative_to(copy)
            original = ROOT / relative
            if not original.exists() or not filecmp.cmp(file, original, shallow=False):
                differ.add(relative.as_posix())
    return differ


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    copied = copy_of_the_repository(tmp_path)
    found = run(
        copied, sys.executable, "-c", "import lineup_jupyter; print(lineup_jupyter.__file__)"
    )
    assert found.stdout.strip() == str(copied / "lineup_jupyter" / "__init__.py"), found
    return copied


# ---- a component kind ----------------------------------------------------------------------

GAUGE_MODEL = """

class GaugeComponent(_Component):
    kind: Literal["gauge"] = _rule("H12")
    label: Label = _rule("H12")
    value: Annotated[Number, Field(ge=0, le=1)] = _rule("H12")
"""
GAUGE_STATIC = """

def _gauge(component: Component) -> tuple[str, str]:
    spec = component.spec
    return _plain(f"{getattr(spec, 'label', '')}: {getattr(spec, 'value', '')}")
"""
GAUGE_JS = """
  gauge(card, view) {
    const meter = /** @type {HTMLMeterElement} */ (element("meter", "lineup-gauge"));
    meter.value = Number(view.value);
    card.append(element("span", "lineup-label", String(view.label)), meter);
  },"""


def test_the_component_kind_recipe(copy: Path) -> None:
    """A kind named 'gauge': its model and declaration, its payload in the tests, then the
    generator. Control: with its renderers missing, both sides' drift tests fail; with
    them, the component tests pass, and only the named files (and the generated) changed."""
    models = "lineup_jupyter/protocol/_models.py"
    edit(copy, models, '    message: Prompt = _rule("H12")\n', GAUGE_MODEL)
    edit(
        copy, models, "    ComponentKind(ErrorComponent),\n", "    ComponentKind(GaugeComponent),\n"
    )
    edit(
        copy,
        "tests/core/test_components.py",
        '"The forecast service did not answer."},\n',
        '    "gauge": {"label": "Confidence", "value": 0.7},\n',
    )
    assert passed(run(copy, sys.executable, "-m", "lineup_jupyter.protocol._codegen"))

    drift = pytest_in(copy, "tests/core/test_component_kinds.py")
    assert not passed(drift)
    assert "test_every_declared_renderer_is_registered_for_the_saved_view" in drift.stdout
    assert "no static renderer for component kind 'gauge'" in drift.stdout
    assert not passed(run(copy, "node", "--test", "js/tests/components.test.js"))

    static = "lineup_jupyter/widgets/_static.py"
    edit(
        copy, static, '    return _plain(str(getattr(component.spec, "text", "")))\n', GAUGE_STATIC
    )
    edit(
        copy,
        "lineup_jupyter/widgets/_static.py",
        '    "error": _error,\n',
        '    "gauge": _gauge,\n',
    )
    edit(copy, "js/components.js", "  question: drawQuestion,", GAUGE_JS)
    node = run(copy, "node", "--test", "js/tests/components.test.js")
    assert passed(node), node.stdout
    tests = ("tests/core/test_component_kinds.py", "tests/core/test_components.py")
    result = pytest_in(copy, *tests, "tests/protocol/test_generated_artifacts.py")
    assert passed(result), result.stdout[-3000:]
    assert changed(copy) == {
        models,
        "lineup_jupyter/widgets/_static.py",
        "js/components.js",
        "tests/core/test_components.py",
        *GENERATED,
    }
    inventory = json.loads(run(copy, sys.executable, "-c", INVENTORY).stdout)
    assert {"id": "gauge", "version": "1"} in inventory


INVENTORY = """
import json, tempfile
from lineup_jupyter import Host
host = Host("c", data_dir=tempfile.mkdtemp())
print(json.dumps(host.inventory["standard_components"]))
"""


# ---- a built-in capability -----------------------------------------------------------------

CLOCK = """
        ),
        Capability(
            "clock.now",
            "display_only",
            handler=lambda arguments: {"now": "2026-01-01T00:00:00.000Z"},
            description="The host's clock.","""


def test_the_builtin_capability_recipe(copy: Path) -> None:
    """A kernel built-in: its Capability in builtin_capabilities, and the registry's test
    that lists the built-ins. Control: the registry test notices a new built-in."""
    builtins = "lineup_jupyter/capabilities/_builtins.py"
    edit(copy, builtins, 'description="Let the user choose one file to hand to the agent.",', CLOCK)
    registry = "tests/capabilities/test_broker.py::test_c7_app_list_and_inventory_are_the_registry"
    assert not passed(pytest_in(copy, registry))
    edit(
        copy,
        "tests/capabilities/test_broker.py",
        '"clipboard.write", "device.pick_file"',
        ', "clock.now"',
    )
    result = pytest_in(copy, "tests/capabilities/test_broker.py")
    assert passed(result), result.stdout[-3000:]
    assert changed(copy) == {builtins, "tests/capabilities/test_broker.py"}


# ---- a view message ------------------------------------------------------------------------

SEEN = '''

class ProblemsSeen(TypedDict):
    """The user saw the problems: the host forgets them (a recipe's throwaway)."""

    kind: Literal["problems_seen"]
'''


def test_the_view_message_recipe(copy: Path) -> None:
    """A message the host view sends: its TypedDict, in the widget's set, its handler in the
    widget's table, then the generator. Control: without the handler and the generated JS,
    the view protocol's tests fail."""
    protocol = "lineup_jupyter/core/_view_protocol.py"
    edit(copy, protocol, "    mcp_apps: list[McpAppSpec]\n", SEEN)
    edit(copy, protocol, "    ClearProblems,\n    SurfaceProblem,\n", "    ProblemsSeen,\n")
    missing = pytest_in(copy, "tests/widgets/test_view_protocol.py")
    assert not passed(missing)
    assert "test_h38_every_kind_a_widget_takes_is_handled" in missing.stdout
    assert "test_js_view_protocol_is_generated_from_the_definitions" in missing.stdout

    edit(
        copy,
        "lineup_jupyter/widgets/_widget.py",
        '            "answer": self._on_answer,\n',
        '            "problems_seen": lambda _message: self._host.problems.clear(),\n',
    )
    assert passed(run(copy, sys.executable, "-m", "lineup_jupyter.widgets._view_codegen"))
    result = pytest_in(
        copy, "tests/widgets/test_view_protocol.py", "tests/widgets/test_view_messages.py"
    )
    assert passed(result), result.stdout[-3000:]
    assert changed(copy) == {protocol, "lineup_jupyter/widgets/_widget.py", "js/view_protocol.js"}


# ---- a transport ---------------------------------------------------------------------------

LOOPBACK = '''
"""A transport that keeps what the host sends in a list: the recipe's throwaway."""

from lineup_jupyter.agents._transport import Sink


class LoopbackTransport:
    def __init__(self) -> None:
        self.sent: list[str] = []
        self.sink: Sink | None = None

    @property
    def describe(self) -> str:
        return "loopback"

    def start(self, sink: Sink) -> None:
        self.sink = sink
        sink.opened()

    def send(self, text: str) -> bool:
        self.sent.append(text)
        return True

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def hang_up(self, why: str, *, refused: bool = False) -> None:
        if self.sink is not None:
            self.sink.lost(why, final=True)

    def close(self) -> None:
        self.hang_up("closed")
'''
SEAM = {
    "lineup_jupyter.agents._transport",
    "lineup_jupyter.agents._remote",
    "lineup_jupyter.protocol._errors",
}


def test_the_transport_recipe(tmp_path: Path) -> None:
    """A module of its own that imports only the seam, made into a session by
    RemoteAgent(the host's session port, transport): the inventory first (C1), its agent's
    id bound on its first envelope (H41), its surface open, and the view's agents line."""
    source = tmp_path / "loopback_transport.py"
    source.write_text(LOOPBACK, "utf-8")
    imported = {
        node.module
        for node in ast.walk(ast.parse(LOOPBACK))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= SEAM
    spec = importlib.util.spec_from_file_location("loopback_transport", source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    with Host("conv_recipe", data_dir=tmp_path) as host:
        transport: Any = module.LoopbackTransport()
        session = RemoteAgent(session_port(host), transport)
        assert [json.loads(text)["type"] for text in transport.sent] == [
            "lineup.v1.client.inventory"
        ]
        assert transport.sink is not None
        transport.sink.message(json.dumps(OPEN))
        assert session.agent_id == "agent_loop" and session.status == "connected"
        assert host.surfaces["loop.01"].owner == "agent_loop"
        assert host.remote_agents == [session]
        widget: Any = host.widget
        widget.send = lambda content, buffers=None: None
        view_sends(widget, {"kind": "sync"})
        assert widget.agents[0]["via"] == "loopback"
        assert widget.agents[0]["agent_id"] == "agent_loop"


OPEN = {
    "v": 1,
    "id": "m1",
    "type": "lineup.v1.ui.open",
    "conversation_id": "conv_recipe",
    "sender": {"kind": "agent", "id": "agent_loop"},
    "payload": {
        "instance_id": "loop.01",
        "app": {"id": "com.example.loop", "version": "1.0.0", "html": "<p>loop</p>"},
        "state": {},
    },
}
