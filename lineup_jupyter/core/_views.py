"""Where the objects below the widgets get their views, without importing the widgets.

IPython asks an object itself for its view (``_repr_mimebundle_``), so the host, the app
center and an awaiting call each make a widget when first shown. The widgets layer sits above
them: the package's ``__init__`` (above every layer) provides a loader here, and the loader
imports the widgets only when a view is first asked for (anywidget and traitlets cost an
import that an agent process or the CLI never needs). The layers below ask ``views()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol._errors import UsageError
from ..runtime._pending import Pending

__all__ = ["Views", "provide", "views"]


@dataclass(frozen=True)
class Views:
    """The widgets' makers (widgets/_widget.py), as the layers below call them."""

    host: Callable[..., Any]  # HostWidget(host, port, consent, trust=..., **config)
    inspector: Callable[[Any], Any]  # InspectorWidget(host)
    app_center: Callable[[Any], Any]  # AppCenterWidget(center)
    # point_to(kind, target, label, outcome): the awaiting cell shows where the user answers.
    point_to: Callable[[str, str, str, Pending[Any]], object]


_loader: Callable[[], Views] | None = None
_loaded: Views | None = None


def provide(loader: Callable[[], Views]) -> None:
    """Set how the views are loaded (the package's ``__init__`` does, once)."""
    global _loader, _loaded
    _loader, _loaded = loader, None


def views() -> Views:
    """The widgets' makers, loaded on first use."""
    global _loaded
    if _loaded is None:
        if _loader is None:  # only if the package's __init__ did not run to its end
            raise UsageError("[lineup] the views are not provided: import lineup_jupyter first")
        _loaded = _loader()
    return _loaded
