"""An MCP server's tools as this host sees them (docs/mcp-apps.md), from its ``tools/list``.

Each tool an app may call (``_meta.ui.visibility`` has ``"app"``; absent means model and app)
gets a capability name, ``mcp.<name>.<tool>``, which the server declares for its own agent.
Annotations are the server's claims, not proof (``risk_of``): only a tool that says it is
read-only and does not also say it is destructive is ``user_confirmation`` (may be
pre-allowed, or remembered for this session); every other tool, one without annotations
included (the spec's default is destructive), is ``system_permission``: asked every time.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..capabilities._capabilities import Risk
from ..protocol import rules

__all__ = ["MAX_DESCRIPTION", "MAX_TITLE", "McpTool", "fit_name", "preview", "risk_of", "tools_of"]

_SEGMENT = 63  # a capability name's segment, at most (rules.CAPABILITY_NAME_PATTERN)
# Characters of a server's strings the host keeps and shows (sent to the view on every open)
MAX_TITLE = 200  # a tool's title, the server's version
MAX_DESCRIPTION = 2000  # a tool's description

# Declares one tool for its apps: (capability, the tool's name, its listing, its risk) -> the
# capability it was declared under, or None when it was refused (its apps may not call it).
Declare = Callable[[str, str, dict[str, Any], Risk], "str | None"]


def risk_of(annotations: dict[str, Any]) -> Risk:
    """A tool's risk from its annotations, which are the server's claims (issue 22): only
    ``readOnlyHint: true`` without ``destructiveHint: true`` may be remembered
    (user_confirmation); contradictory hints, no hints, or anything else is asked every time
    (system_permission), as the spec's defaults (destructiveHint true) say."""
    read_only = annotations.get("readOnlyHint") is True
    destructive = annotations.get("destructiveHint") is True
    return "user_confirmation" if read_only and not destructive else "system_permission"


def fit_name(text: str) -> str:
    """``text`` as one segment of a capability name: lower case, [a-z0-9_-], a letter first."""
    name = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    if not name or not name[0].isalpha():
        name = "x" + name
    return name[:_SEGMENT]


@dataclass(frozen=True)
class McpTool:
    """A tool of an MCP server as this host sees it. ``capability`` is the name an app's
    call of it goes through the broker under, None when apps may not call it."""

    name: str
    title: str | None
    description: str | None
    resource_uri: str | None  # _meta.ui.resourceUri: its app, if it has one
    visibility: tuple[str, ...]  # "model", "app"
    read_only: bool  # the server's claims (annotations), not proof
    destructive: bool
    risk: Risk | None  # how the host asks for an app's call of it (``risk_of``); None: never
    capability: str | None

    @property
    def has_app(self) -> bool:
        return self.resource_uri is not None


def tools_of(listed: list[dict[str, Any]], prefix: str, declare: Declare) -> list[McpTool]:
    """Each listed tool as an McpTool; those an app may call handed to ``declare`` under a
    capability name of ``prefix`` and one segment (two tools whose names fit to the same
    segment are told apart by a count)."""
    room = rules.CAPABILITY_NAME_MAX_LENGTH - len(prefix)
    taken: set[str] = set()
    tools = []
    for raw in listed:
        name = str(raw.get("name", ""))
        meta = raw.get("_meta")
        ui = meta.get("ui") if isinstance(meta, dict) else None
        ui = ui if isinstance(ui, dict) else {}
        uri = ui.get("resourceUri")
        visibility = ui.get("visibility")
        shown = (
            tuple(v for v in visibility if v in ("model", "app"))
            if isinstance(visibility, list)
            else ("model", "app")
        )
        annotations = raw.get("annotations")
        annotations = annotations if isinstance(annotations, dict) else {}
        risk = risk_of(annotations)
        base = segment = fit_name(name)[: max(1, room)]
        for count in itertools.count(2):
            if segment not in taken:
                break
            segment = f"{base[: max(1, room - 5)]}-{count}"
        taken.add(segment)
        capability = declare(prefix + segment, name, raw, risk) if "app" in shown else None
        title, description = raw.get("title"), raw.get("description")
        tools.append(
            McpTool(
                name=name,
                title=title[:MAX_TITLE] if isinstance(title, str) else None,
                description=description[:MAX_DESCRIPTION] if isinstance(description, str) else None,
                resource_uri=uri if isinstance(uri, str) else None,
                visibility=shown,
                read_only=annotations.get("readOnlyHint") is True,  # what the server claims
                destructive=annotations.get("destructiveHint") is True,
                risk=risk if capability is not None else None,
                capability=capability,
            )
        )
    return tools


def preview(value: Any) -> Any:
    """A listing as the history keeps it: each string cut at MAX_DESCRIPTION characters (a
    4 MiB title is kept, and shown, as its start)."""
    if isinstance(value, str):
        return value if len(value) <= MAX_DESCRIPTION else value[:MAX_DESCRIPTION] + "…"
    if isinstance(value, list):
        return [preview(item) for item in value]
    if isinstance(value, dict):
        return {key: preview(item) for key, item in value.items()}
    return value
