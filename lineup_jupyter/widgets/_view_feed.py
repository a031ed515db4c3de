"""What the host's views are fed: each change alone, numbered, and the whole picture on request.

The widget's synced ``surfaces`` and ``components`` lists hold the whole picture (what a
reloaded page gets from the kernel, what a saved notebook keeps), but assigning a synced trait
sends its whole value to every view, so a patch of one field of a 250 KiB state would cost
250 KiB, and the 1 000th component the 999 before it. Instead this feed edits those lists in
place (traitlets sends nothing for an in-place change, and ipywidgets reads the current value
whenever a page asks for the state) and sends each change alone as a custom message:

``{kind: "feed", seq, ops: [...]}``, each op one of _view_protocol.py's FEED_OPS: a surface
opened or replaced (a new ``generation``: a new frame), closed, its state replaced, or merge
patches (RFC 7396) from revision ``base``; a component whole, removed, or ``splice``d: its
``html`` (markdown) or ``text`` loses its last ``cut`` UTF-16 units and gets ``add``, so a
streamed answer costs its new text, not all of it.

``seq`` goes up by one per message; a view that sees a gap (a message the server's rate
limiter dropped) asks for ``sync`` and gets ``{kind: "snapshot", seq, surfaces, components}``.
Surface changes go out once per event-loop tick, component changes at most every
``interval`` seconds, each as one message whatever the number of changes in it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from typing import Any

from ..core._components import Component, ComponentChange
from ..core._surfaces import SurfaceChange, SurfaceInstance, shared_state
from ..mcp._apps import NOTES_KEPT
from ..runtime._threads import Pacer

__all__ = ["ViewFeed", "common_prefix", "utf16_length"]

# Merge patches kept for one surface between two sends; past this the state goes whole,
# which bounds a message by the state's size however many patches one tick makes.
MAX_PATCHES_PER_SEND = 16

Send = Callable[[dict[str, Any]], None]


def spec_of(instance: SurfaceInstance) -> dict[str, Any]:
    """An open surface as a view builds its frame from: bundle, state, revision."""
    app = instance.app
    return {
        "instance_id": instance.instance_id,
        "owner": instance.owner,  # its header names the agent (js/surface_heading.js)
        "generation": instance.generation,
        "revision": instance.revision,
        "app": {"id": app.id, "version": app.version, "name": app.name},
        "html": app.html,
        "css": app.css,
        "js": app.js,
        "state": shared_state(instance),
    }


def utf16_length(text: str) -> int:
    """What a browser's ``string.length`` says of ``text``."""
    return len(text) if text.isascii() else len(text.encode("utf-16-le")) // 2


def common_prefix(a: str, b: str, start: int = 0) -> int:
    """The length of the longest common prefix of ``a`` and ``b``, known to be at least
    ``start``: a binary search of slice comparisons, so the cost is that of comparing the
    part after ``start`` a few times at memory speed, not a Python loop per character."""
    low, high = start, min(len(a), len(b))
    if a[low:high] == b[low:high]:
        return high
    while low < high:  # a[:low] == b[:low] holds; a[:high+1] != b[:high+1] would not
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


class _PendingState:
    __slots__ = ("base", "patches")

    def __init__(self, base: int, patches: list[dict[str, Any]] | None) -> None:
        self.base = base
        self.patches = patches  # None: the state goes whole


class ViewFeed:
    """Kernel side of the feed: one per widget. ``send`` sends one custom message."""

    def __init__(
        self,
        send: Send,
        surfaces: list[dict[str, Any]],
        components: list[dict[str, Any]],
        *,
        interval: float,
    ) -> None:
        self._send = send
        self.surfaces = surfaces
        self.components = components
        self._seq = 0
        self._surface_specs: dict[str, dict[str, Any]] = {}
        self._surface_ops: list[dict[str, Any]] = []
        self._states: dict[str, _PendingState] = {}
        # Surface changes go on the loop's next turn (a burst of patches from one cell is one
        # message), component changes at most every ``interval``; with no loop, at once.
        self._surfaces_pacer = Pacer(0, self._flush_surfaces, "sending surface changes")
        self._component_views: dict[str, dict[str, Any]] = {}
        self._orders: list[int] = []  # the ``order`` of each entry of ``components``
        self._changed: dict[str, Component | None] = {}  # None: removed
        self._components_pacer = Pacer(interval, self._flush_components, "sending components")
        self._stable: dict[str, tuple[Any, int]] = {}  # markdown: (renderer, html kept) sent
        # The MCP apps as the views were told, by app_id: the ops applied in the order sent,
        # so a snapshot agrees with its seq (docs/mcp-apps.md).
        self._mcp_apps: dict[str, dict[str, Any]] = {}

    def start(
        self,
        surfaces: list[SurfaceInstance],
        components: list[Component],
        mcp_apps: Iterable[dict[str, Any]] = (),
    ) -> None:
        """Fill the lists with what is there when the widget is made."""
        for spec in mcp_apps:
            self._mcp_apps[spec["app_id"]] = dict(spec)
        for instance in surfaces:
            self._on_open(instance)
        self._surface_ops.clear()
        for component in components:
            view = self._view(component)
            self._component_views[component.component_id] = view
            self.components.append(view)
            self._orders.append(component.seq)

    # ---- surfaces ----------------------------------------------------------------

    def on_surface(self, change: SurfaceChange) -> None:
        instance = change.instance
        instance_id = instance.instance_id
        if change.kind == "open":
            self._states.pop(instance_id, None)  # the open carries the state
            # As it is now: patches later in this tick edit the listed spec, and go after it.
            self._surface_ops.append({"op": "open", "spec": dict(self._on_open(instance))})
        elif change.kind == "close":
            self._states.pop(instance_id, None)
            spec = self._surface_specs.pop(instance_id, None)
            if spec is not None:
                _remove_identical(self.surfaces, spec)
            self._surface_ops.append({"op": "close", "instance_id": instance_id})
        else:
            spec = self._surface_specs[instance_id]
            pending = self._states.get(instance_id)
            if pending is None:
                pending = self._states[instance_id] = _PendingState(spec["revision"], [])
            if change.merge is None or pending.patches is None:
                pending.patches = None
            elif len(pending.patches) < MAX_PATCHES_PER_SEND:
                pending.patches.append(change.merge)
            else:
                pending.patches = None
            spec["revision"] = instance.revision
            spec["state"] = shared_state(instance)
        self._surfaces_pacer.request()

    def _on_open(self, instance: SurfaceInstance) -> dict[str, Any]:
        spec = spec_of(instance)
        shown = self._surface_specs.get(instance.instance_id)
        if shown is None:
            self._surface_specs[instance.instance_id] = spec
            self.surfaces.append(spec)
        else:  # a replace keeps its place in the list, as in the host's
            shown.clear()
            shown.update(spec)
        return spec

    def flush_surfaces(self) -> None:
        """Send the surface changes waiting for the loop's next turn, now."""
        self._surfaces_pacer.now()

    def _flush_surfaces(self) -> None:
        ops, self._surface_ops = self._surface_ops, []
        states, self._states = self._states, {}
        for instance_id, pending in states.items():
            spec = self._surface_specs[instance_id]
            common: dict[str, Any] = {
                "instance_id": instance_id,
                "generation": spec["generation"],
            }
            if pending.patches is None:
                ops.append(
                    {"op": "state", **common, "revision": spec["revision"], "state": spec["state"]}
                )
            else:
                ops.append(
                    {
                        "op": "patch",
                        **common,
                        "base": pending.base,
                        "revision": spec["revision"],
                        "patches": pending.patches,
                    }
                )
        self._emit(ops)

    # ---- MCP apps ----------------------------------------------------------------

    def on_mcp(self, op: dict[str, Any]) -> None:
        """An MCP app's change (an _view_protocol.py Mcp*Op): kept for the snapshot, sent in
        order with the surfaces' changes, on the loop's next turn."""
        app_id = op["spec"]["app_id"] if op["op"] == "mcp_open" else op["app_id"]
        if op["op"] == "mcp_open":
            self._mcp_apps[app_id] = dict(op["spec"])
        elif op["op"] == "mcp_close":
            self._mcp_apps.pop(app_id, None)
        elif app_id in self._mcp_apps:
            spec = self._mcp_apps[app_id]
            if op["op"] == "mcp_notify" and op["method"] == "ui/notifications/tool-result":
                spec["result"] = op["params"]
            elif op["op"] == "mcp_notify" and op["method"] == "ui/notifications/tool-cancelled":
                spec["cancelled"] = op["params"].get("reason", "cancelled")
            elif op["op"] == "mcp_note":
                spec["notes"] = [*spec["notes"], op["text"]][-NOTES_KEPT:]
        self._surface_ops.append(op)
        self._surfaces_pacer.request()

    # ---- components --------------------------------------------------------------

    def on_component(self, change: ComponentChange) -> None:
        """Changes go out at most every ``interval`` seconds, always ending on the latest:
        a progress bar updated in a tight loop must neither trip the server's rate limiter
        (which drops messages) nor cost a message per update."""
        component = change.component
        self._changed[component.component_id] = None if change.kind == "remove" else component
        self._components_pacer.request()

    def flush_components(self) -> None:
        """Send the component changes waiting for their interval, now."""
        self._components_pacer.now()

    def _flush_components(self) -> None:
        changed, self._changed = self._changed, {}
        ops: list[dict[str, Any]] = []
        for component_id, component in changed.items():
            shown = self._component_views.get(component_id)
            if component is None:
                if shown is not None:
                    self._take_out(shown)
                    del self._component_views[component_id]
                    self._stable.pop(component_id, None)
                    ops.append({"op": "removed", "component_id": component_id})
                continue
            view = self._view(component)
            if shown is None or shown["order"] != view["order"]:
                if shown is not None:
                    self._take_out(shown)
                view["rev"] = shown["rev"] + 1 if shown is not None else 1
                self._component_views[component_id] = view
                self._put_in(view)
                ops.append({"op": "component", "view": view})
            else:
                view["rev"] = shown["rev"] + 1
                ops.append(self._component_op(component, shown, view))
                shown.clear()  # the same dict stays in the list: edited in place
                shown.update(view)
            self._remember_stable(component)
        self._emit(ops)

    def _view(self, component: Component) -> dict[str, Any]:
        view = component.to_view()
        view["order"] = component.seq
        view.setdefault("rev", 1)
        return view

    def _component_op(
        self, component: Component, shown: dict[str, Any], view: dict[str, Any]
    ) -> dict[str, Any]:
        """The change from ``shown`` (what views have) to ``view``: only the new end of a
        text or markdown whose other fields stayed the same, else the whole view."""
        field = {"markdown": "html", "text": "text"}.get(view["kind"])
        if field is None or any(
            shown.get(key) != value for key, value in view.items() if key not in (field, "rev")
        ):
            return {"op": "component", "view": view}
        old, new = shown.get(field, ""), view.get(field, "")
        start = 0
        stable = self._stable.get(component.component_id)
        if stable is not None and stable[0] is component.renderer:
            start = min(stable[1], len(old), len(new))  # closed blocks never change
        keep = common_prefix(old, new, start)
        return {
            "op": "splice",
            "component_id": component.component_id,
            "rev": view["rev"],
            "field": field,
            "cut": utf16_length(old[keep:]),
            "add": new[keep:],
        }

    def _remember_stable(self, component: Component) -> None:
        renderer = component.renderer
        if renderer is not None:
            self._stable[component.component_id] = (renderer, renderer.stable_length)

    def _put_in(self, view: dict[str, Any]) -> None:
        """In the kernel's order (first shown first): nearly always at the end."""
        at = bisect_right(self._orders, view["order"])
        self._orders.insert(at, view["order"])
        self.components.insert(at, view)

    def _take_out(self, view: dict[str, Any]) -> None:
        at = bisect_left(self._orders, view["order"])  # orders are unique: first shown
        del self._orders[at]
        del self.components[at]

    # ---- the whole picture -------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """Everything, after anything still waiting: a view rebuilds from it."""
        self.flush_surfaces()
        self.flush_components()
        return {
            "kind": "snapshot",
            "seq": self._seq,
            "surfaces": self.surfaces,
            "components": self.components,
            "mcp_apps": list(self._mcp_apps.values()),
        }

    def _emit(self, ops: list[dict[str, Any]]) -> None:
        if not ops:
            return
        self._seq += 1
        self._send({"kind": "feed", "seq": self._seq, "ops": ops})


def _remove_identical(items: list[dict[str, Any]], item: dict[str, Any]) -> None:
    """Remove ``item`` itself (not an equal dict: comparing states would cost their size)."""
    for at, candidate in enumerate(items):
        if candidate is item:
            del items[at]
            return
