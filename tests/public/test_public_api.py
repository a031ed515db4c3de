"""The public surface is exactly what __all__ says (httpx's discipline)."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import lineup_jupyter
import lineup_jupyter.protocol
import lineup_jupyter.testing
from lineup_jupyter.core._components import ComponentChange, Components

PUBLIC = {
    "AppResource",
    "Component",
    "ComponentChange",
    "ComponentsView",
    "InlineApp",
    "McpApps",
    "OpenedSurface",
    "Problem",
    "Problems",
    "Question",
    "SurfacesView",
    "TextStream",
    "Agent",
    "AppCenter",
    "AppInfo",
    "AppVerification",
    "Audit",
    "AuditTable",
    "AuditVerification",
    "BundleTrust",
    "CallHandle",
    "CallResult",
    "Capabilities",
    "Capability",
    "CapabilityError",
    "History",
    "Host",
    "Limits",
    "LineUpError",
    "McpApp",
    "McpServer",
    "McpTool",
    "PendingCall",
    "Policy",
    "ProcessAgent",
    "ProtocolError",
    "Record",
    "RemoteAgent",
    "SigningKey",
    "StateRevision",
    "Subscription",
    "Surface",
    "SurfaceChange",
    "SurfaceEvent",
    "SurfaceInstance",
    "SurfaceWatcher",
    "UsageError",
    "WebSocketAgent",
    "WebSocketListener",
    "__version__",
    "bundle_integrity",
    "render_markdown",
    "shipped_apps",
    "validate_envelope",
}


def test_top_level_all_is_exactly_the_public_surface() -> None:
    assert set(lineup_jupyter.__all__) == PUBLIC
    assert len(lineup_jupyter.__all__) == len(PUBLIC)


def test_every_public_name_is_exported_and_nothing_else() -> None:
    for module in (lineup_jupyter, lineup_jupyter.protocol, lineup_jupyter.testing):
        exported = set(module.__all__)
        for name in exported:
            assert hasattr(module, name), name
        public = {
            n
            for n, v in vars(module).items()
            if not n.startswith("_") and n != "annotations" and not isinstance(v, types.ModuleType)
        }
        assert public <= exported, public - exported


def test_the_testing_kit_is_two_names() -> None:
    """lineup_jupyter.testing, for agent authors' tests (docs/agents.md)."""
    assert lineup_jupyter.testing.__all__ == ["ScriptedModel", "ScriptedUser"]


def test_the_contract_names_exist() -> None:
    """ARCHITECTURE (contract): Host(conversation_id=...), Host.receive, Host.subscribe."""
    host = lineup_jupyter.Host(conversation_id="c")
    assert callable(host.receive) and callable(host.subscribe)


# ---- every type a public call returns is importable from lineup_jupyter --------------------

# What a public object hands the user besides its plain methods' results: what iterating or
# indexing it gives, and what `with` binds.
_HANDED = ("__iter__", "__getitem__", "__enter__")


def _package_classes() -> dict[str, set[type]]:
    """Every class of the package by name: annotations name types imported for type checking
    only, which a module's globals do not hold."""
    classes: dict[str, set[type]] = {}
    for info in pkgutil.walk_packages(lineup_jupyter.__path__, "lineup_jupyter."):
        if info.name.endswith("__main__"):
            continue
        for name, value in vars(importlib.import_module(info.name)).items():
            if inspect.isclass(value) and value.__module__.startswith("lineup_jupyter."):
                classes.setdefault(name, set()).add(value)
    return classes


def _names(annotation: str) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(annotation, mode="eval")):
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found |= _names(node.value)
    return found


def _handed_types(cls: type, classes: dict[str, set[type]]) -> Iterator[tuple[str, type]]:
    """(call, class) for each class of the package that a public call of ``cls`` returns,
    or that a callback it takes (a watcher) is called with."""
    for attr, member in inspect.getmembers(cls):
        if attr.startswith("_") and attr not in _HANDED:
            continue
        function = member.fget if isinstance(member, property) else member
        annotations = getattr(function, "__annotations__", None)
        if not callable(function) or not isinstance(annotations, dict):
            continue
        texts = [annotations.get("return")]
        texts += [text for name, text in annotations.items() if "Callable[" in str(text)]
        for text in texts:
            if not isinstance(text, str):
                continue
            module_globals = getattr(function, "__globals__", {})
            for name in _names(text):
                if name in module_globals and inspect.isclass(module_globals[name]):
                    candidates = {module_globals[name]}
                else:
                    candidates = classes.get(name, set())
                for found in candidates:
                    if found.__module__.startswith("lineup_jupyter."):
                        yield f"{cls.__name__}.{attr}", found


def _not_exported(roots: list[type]) -> dict[str, list[str]]:
    """Each class reachable from ``roots`` through what their public calls hand the user,
    that is not importable from lineup_jupyter, with the calls that hand it over."""
    classes = _package_classes()
    exported = {id(getattr(lineup_jupyter, name)) for name in lineup_jupyter.__all__}
    missing: dict[str, list[str]] = {}
    seen: set[type] = set()
    todo = list(roots)
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for call, found in _handed_types(cls, classes):
            if id(found) not in exported:
                missing.setdefault(f"{found.__module__}.{found.__name__}", []).append(call)
            todo.append(found)
    return missing


def test_every_type_a_public_call_returns_is_exported() -> None:
    """Walks the return annotations of every exported class's public calls (and properties,
    iteration, watchers' arguments), then of the classes they return, and so on: each class
    of the package met is importable from lineup_jupyter."""
    roots = [getattr(lineup_jupyter, name) for name in lineup_jupyter.__all__]
    assert _not_exported([root for root in roots if inspect.isclass(root)]) == {}


def test_the_host_attributes_are_of_exported_types(tmp_path: Path) -> None:
    """The attributes a Host sets (host.apps, host.problems, host.limits...) are public calls
    too, without annotations to walk: their classes are exported."""
    with lineup_jupyter.Host("c", data_dir=tmp_path) as host:
        for name, value in vars(host).items():
            if not name.startswith("_") and type(value).__module__.startswith("lineup_jupyter."):
                assert type(value).__name__ in lineup_jupyter.__all__, name


class _Leaky:
    """The control: a public class whose calls return a private class of the package."""

    def registry(self) -> Components:
        raise NotImplementedError

    def watch(self, watcher: Callable[[ComponentChange], None]) -> None:
        raise NotImplementedError


def test_the_walk_finds_a_returned_type_that_is_not_exported(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Control: the walk sees a private class returned (Components), and one a watcher is
    called with once it is not exported (ComponentChange)."""
    monkeypatch.setattr(
        lineup_jupyter, "__all__", [n for n in lineup_jupyter.__all__ if n != "ComponentChange"]
    )
    missing = _not_exported([_Leaky])
    assert missing["lineup_jupyter.core._components.Components"] == ["_Leaky.registry"]
    assert "_Leaky.watch" in missing["lineup_jupyter.core._components.ComponentChange"]
