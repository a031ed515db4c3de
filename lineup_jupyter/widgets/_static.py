"""What a saved notebook shows where no widget can be drawn: GitHub, nbviewer, nbconvert, and
JupyterLab opening an untrusted notebook (it then draws only safe MIME types).

The host, the app center and the inspector each add a ``text/plain`` and a ``text/html`` view
beside the widget's own: each surface's title, app, instance, owner and a summary of its state;
the standard components as drawn (Markdown as the kernel already sanitized it, H15); questions
with their answer or "waiting"; capability calls waiting for consent as "waiting". Every agent
string goes in escaped and cut (docs/agents.md, "Demos that travel").
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from html import escape
from typing import TYPE_CHECKING, Any

from ..protocol._models import COMPONENT_RENDERERS

if TYPE_CHECKING:
    from ..appcenter._apps import AppCenter
    from ..core._components import Component
    from ..host._host import Host

__all__ = [
    "STATIC_RENDERERS",
    "apps_static",
    "component_line",
    "host_static",
    "inspector_static",
]

CUT = 200  # characters of one agent string or state summary
LISTED = 50  # lines of one kind; the rest is counted


def cut(text: str, limit: int = CUT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _state_summary(state: dict[str, Any]) -> str:
    return cut(json.dumps(state, ensure_ascii=False, separators=(", ", ": ")))


# ---- each component kind's static renderer, registered under its declared name -------------
# ComponentKind.renderer (protocol/_models.py COMPONENT_KINDS) names the one that draws a kind;
# js/components.js registers the browser's under the same names. A declared name with no
# renderer here is an error (component_line), and tests/core/test_component_kinds.py catches it.

StaticRenderer = Callable[["Component"], tuple[str, str]]
"""(text, html) of one component's body, everything in it escaped and cut."""


def _plain(text: str) -> tuple[str, str]:
    body = cut(text)
    return body, f"<p>{escape(body)}</p>"


def _markdown(component: Component) -> tuple[str, str]:
    # the kernel already sanitized it (H15); the text view shows the source, cut
    return cut(getattr(component.spec, "markdown", "")), component.html or ""


def _question(component: Component) -> tuple[str, str]:
    prompt = cut(getattr(component.spec, "prompt", ""))
    answer = component.answer
    if answer is None:
        outcome = "waiting for the user"
    elif answer.status != "answered":
        outcome = answer.status
    else:
        outcome = f"answered: {cut(json.dumps(answer.value, ensure_ascii=False))}"
    return f"{prompt} ({outcome})", f"<p><b>{escape(prompt)}</b> <i>({escape(outcome)})</i></p>"


def _status(component: Component) -> tuple[str, str]:
    spec = component.spec
    return _plain(f"{getattr(spec, 'state', '')}: {getattr(spec, 'label', '')}")


def _progress(component: Component) -> tuple[str, str]:
    spec = component.spec
    label = getattr(spec, "label", None) or "progress"
    return _plain(f"{label} {getattr(spec, 'value', None)}/{getattr(spec, 'total', '')}")


def _error(component: Component) -> tuple[str, str]:
    spec = component.spec
    return _plain(f"{getattr(spec, 'code', '')}: {getattr(spec, 'message', '')}")


def _text(component: Component) -> tuple[str, str]:
    return _plain(str(getattr(component.spec, "text", "")))


STATIC_RENDERERS: dict[str, StaticRenderer] = {
    "markdown": _markdown,
    "text": _text,
    "status": _status,
    "progress": _progress,
    "error": _error,
    "question": _question,
}


def component_line(component: Component) -> tuple[str, str]:
    """(text, html) of one standard component as the view draws it."""
    kind = component.spec.kind
    name = COMPONENT_RENDERERS.get(kind)
    renderer = STATIC_RENDERERS.get(name) if name is not None else None
    if renderer is None:  # a contributor's half-added kind: never an empty body
        raise LookupError(
            f"no static renderer for component kind {kind!r} (renderer {name!r}): declare the "
            "kind in protocol/_models.py COMPONENT_KINDS and register its renderer in "
            "widgets/_static.py STATIC_RENDERERS"
        )
    text, html = renderer(component)
    return f"{kind} from {component.owner}: {text}", html


def _listed(lines: list[tuple[str, str]]) -> Iterable[tuple[str, str]]:
    yield from lines[:LISTED]
    if len(lines) > LISTED:
        more = f"… and {len(lines) - LISTED} more"
        yield more, f"<p>{escape(more)}</p>"


def host_static(host: Host) -> tuple[str, str]:
    """The host as text and as sanitized HTML."""
    surfaces = list(host.surfaces.values())
    components = list(host.components.values())
    waiting = host.pending_calls
    head = (
        f"lineup host · conversation {host.conversation_id} · "
        f"{_plural(len(surfaces), 'surface')}, {_plural(len(components), 'component')}, "
        f"{_plural(len(waiting), 'call')} waiting for consent"
    )
    # Taken when the cell displayed the host: a later update of this picture would draw the
    # live view again (every surface frame reloaded), so it says when it was taken instead.
    taken = (
        f"A picture taken when this cell ran ({time.strftime('%Y-%m-%d %H:%M:%S %Z')}): what "
        "changed later is not in it. Run the notebook to see it live."
    )
    text = [head, taken]
    html = [
        '<div class="lineup-static" style="font-family: sans-serif">',
        f"<p><b>{escape(head)}</b><br><small>{escape(taken)}</small></p>",
    ]
    surface_lines = []
    for surface in surfaces:
        app = surface.app
        title = app.name or app.id
        line = (
            f"surface {surface.instance_id}: {title} ({app.id} {app.version}), "
            f"agent {surface.owner}, state revision {surface.revision}: "
            f"{_state_summary(surface.state)}"
        )
        surface_lines.append(
            (
                line,
                f'<div style="border: 1px solid #ccc; border-radius: 6px; padding: 4px 8px; '
                f'margin: 4px 0"><b>{escape(cut(title))}</b> · {escape(surface.instance_id)} · '
                f"{escape(app.id)} {escape(app.version)} · agent {escape(surface.owner)}<br>"
                f"<small>state (revision {surface.revision}): "
                f"<code>{escape(_state_summary(surface.state))}</code></small></div>",
            )
        )
    component_lines = [component_line(component) for component in components]
    call_lines = []
    for call in waiting:
        line = (
            f"waiting: {call.capability.name} ({call.capability.risk}) asked by {call.agent}: "
            f"{cut(call.reason)}"
        )
        call_lines.append((line, f"<p>⏳ {escape(line)}</p>"))
    for lines in (call_lines, component_lines, surface_lines):
        for line_text, line_html in _listed(lines):
            text.append(line_text)
            html.append(line_html)
    html.append("</div>")
    return "\n".join(text), "\n".join(html)


def apps_static(center: AppCenter) -> tuple[str, str]:
    apps = center.list()
    head = f"lineup app center · {_plural(len(apps), 'app')} installed"
    rows = [f"{app.id} {app.version} ({'enabled' if app.enabled else 'disabled'})" for app in apps]
    html = "".join(f"<li>{escape(row)}</li>" for row in rows[:LISTED])
    return "\n".join([head, *rows[:LISTED]]), f"<p><b>{escape(head)}</b></p><ul>{html}</ul>"


def inspector_static(host: Host) -> tuple[str, str]:
    history = host.history
    refused = sum(1 for record in history if record.kind in ("refused", "handler_error"))
    head = (
        f"lineup inspector · conversation {host.conversation_id} · "
        f"{_plural(len(history), 'message')}, {refused} refused or failed"
    )
    return head, f"<p><b>{escape(head)}</b></p>"
