"""The open surface instances of one conversation: open, replace, patch, close, with revisions.

Every operation checks everything first and changes state last, so a refused request leaves
the registry exactly as it was. The kernel's copy is the truth the browser is fed from
(after a reload, an unmounted cell, a second view), so state is numbered: each instance's
``revision`` goes up by one on every change and never goes back, even across a replace.
"""

from __future__ import annotations

import json
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Literal, NamedTuple

from ..protocol import InlineApp, UiClosePayload, UiOpenPayload, UiPatchPayload, rules, size
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._validate import Limits
from ..runtime._watchers import Watchers

__all__ = [
    "StateRevision",
    "SurfaceChange",
    "SurfaceInstance",
    "Surfaces",
    "SurfacesView",
    "merge_patch",
    "merged_size",
    "shared_state",
]

_INSTANCES_REMEMBERED = 50  # instances whose state history is kept (the oldest go first)


class SurfaceInstance:
    """A read-only snapshot of one open surface. ``state`` is a copy: changing it changes
    nothing. (A slotted class, not a frozen dataclass: one is made on every patch.)"""

    __slots__ = ("_app", "_generation", "_instance_id", "_owner", "_revision", "_state")

    def __init__(
        self,
        instance_id: str,
        owner: str,
        app: InlineApp,
        revision: int,
        generation: int,
        state: dict[str, Any],
    ) -> None:
        self._instance_id = instance_id
        self._owner = owner
        self._app = app
        self._revision = revision
        self._generation = generation
        self._state = state

    @property
    def instance_id(self) -> str:
        return self._instance_id

    @property
    def owner(self) -> str:
        """The agent that opened it (H8)."""
        return self._owner

    @property
    def app(self) -> InlineApp:
        """The bundle it runs: an installed app's too (the host resolves it before opening)."""
        return self._app

    @property
    def revision(self) -> int:
        """1 on open, +1 on every change, never back, even across a replace (H6)."""
        return self._revision

    @property
    def generation(self) -> int:
        """Bumped by every ui.open, so a view knows to rebuild the frame."""
        return self._generation

    @property
    def state(self) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self._state))
        return copied

    def __repr__(self) -> str:
        return (
            f"SurfaceInstance(instance_id={self._instance_id!r}, owner={self._owner!r}, "
            f"app={self._app.id!r}, revision={self._revision})"
        )


def shared_state(instance: SurfaceInstance) -> dict[str, Any]:
    """The instance's state itself, not a copy, for a reader in the package that never
    changes it: the view's feed, for which a copy of a 250 KiB state on every patch is the
    cost it exists to avoid."""
    return instance._state


class StateRevision(NamedTuple):
    """One state a surface had: after its ``revision``-th change, at ``time`` (epoch seconds).
    ``state`` is a copy when read through ``Host.state_history``."""

    revision: int
    time: float
    state: dict[str, Any]


class SurfaceChange(NamedTuple):
    """One change to an open instance, as a watcher is told it (``host.watch_surfaces``)."""

    kind: Literal["open", "patch", "close"]
    instance: SurfaceInstance
    reason: str | None = None
    # The merge patch a ``patch`` applied (None: the state was replaced), so a view can be
    # sent the change instead of the whole state.
    merge: dict[str, Any] | None = None


Watcher = Callable[[SurfaceChange], None]


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7396 JSON Merge Patch: objects merge key by key, null deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def merged_size(target: Any, target_size: int, patch: Any) -> int:
    """``size(merge_patch(target, patch))`` knowing ``size(target)``: the compact JSON of an
    object is the sum of its members' (plus braces and commas), so only the members the patch
    touches are measured, and a one-field patch of a 250 KiB state costs one field."""
    if not isinstance(patch, dict):
        return size(patch)
    if not isinstance(target, dict):
        target, target_size = {}, 2
    total, count = target_size, len(target)
    for key, value in patch.items():
        present = key in target
        old = size(target[key]) if present else 0
        if value is None:
            if present:
                total -= size(key) + 1 + old
                count -= 1
            continue
        new = merged_size(target[key] if present else None, old, value)
        if present:
            total += new - old
        else:
            total += size(key) + 1 + new
            count += 1
    return total + max(count - 1, 0) - max(len(target) - 1, 0)


class Surfaces(Mapping[str, SurfaceInstance]):
    """Instances by id (U1). Read it like a dict; change it through the host, whose lock
    serialises every change (so the registry needs none of its own)."""

    def __init__(self, limits: Limits, *, state_history: int = 20) -> None:
        if state_history < 0:
            raise UsageError(f"[lineup] state_history must be 0 or more, not {state_history}")
        self._limits = limits
        self._instances: dict[str, SurfaceInstance] = {}
        self._generation = 0
        self._watchers: Watchers[[SurfaceChange]] = Watchers("surface")
        # The last states of each instance, for the inspector: references, not copies (a
        # patch makes a new state object and none is changed in place), so keeping them
        # costs an append per change. Closed instances are kept too, the oldest evicted.
        self._state_history = state_history
        self._states: OrderedDict[str, deque[StateRevision]] = OrderedDict()
        self._sizes: dict[str, int] = {}  # the state's size (H7), once measured

    def state_history(self, instance_id: str) -> list[StateRevision]:
        """The last states of an instance, open or closed, oldest first (copies)."""
        return [
            StateRevision(r.revision, r.time, json.loads(json.dumps(r.state)))
            for r in self._states.get(instance_id, ())
        ]

    def remembered(self) -> list[tuple[str, int, int]]:
        """``(instance_id, last revision, states kept)`` of each instance with a state
        history, in order of first open (the inspector's list of surfaces)."""
        return [(key, states[-1].revision, len(states)) for key, states in self._states.items()]

    def _remember(self, instance: SurfaceInstance) -> None:
        if not self._state_history:
            return
        states = self._states.get(instance._instance_id)
        if states is None:
            states = self._states[instance._instance_id] = deque(maxlen=self._state_history)
            while len(self._states) > _INSTANCES_REMEMBERED:
                self._states.popitem(last=False)
        states.append(StateRevision(instance._revision, time.time(), instance._state))

    def __getitem__(self, instance_id: str) -> SurfaceInstance:
        return self._instances[instance_id]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._instances))

    def __len__(self) -> int:
        return len(self._instances)

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call ``watcher(change)`` after every open, patch and close; returns an unwatch."""
        return self._watchers.add(watcher)

    def view(self) -> SurfacesView:
        """This registry as its users see it: read, never changed (``host.surfaces``)."""
        return SurfacesView(self)

    def owned(self, owner: str, instance_id: str, path: str) -> SurfaceInstance | None:
        """The open instance ``instance_id``, or None; refused when another agent opened it
        (H8). The host checks this before anything else of a ui.open changes."""
        current = self._instances.get(instance_id)
        if current is not None and current._owner != owner:
            raise ProtocolError(
                "not_owner",
                "H8",
                path,
                f"instance {instance_id!r} was opened by agent {current._owner!r}, not "
                f"{owner!r}. {rules.RULES['H8']}",
            )
        return current

    def _existing(self, owner: str, instance_id: str) -> SurfaceInstance:
        current = self.owned(owner, instance_id, "$.payload.instance_id")
        if current is None:
            raise ProtocolError(
                "unknown_instance",
                "H6",
                "$.payload.instance_id",
                f"no surface instance {instance_id!r} is open in this conversation. "
                + rules.RULES["H6"],
            )
        return current

    def open(self, owner: str, payload: UiOpenPayload) -> SurfaceInstance:
        """Open, or replace an instance with the same id (U1)."""
        if not isinstance(payload.app, InlineApp):
            raise UsageError("[lineup] Surfaces.open takes a bundle; Host resolves installed apps")
        current = self.owned(owner, payload.instance_id, "$.payload.instance_id")
        self._generation += 1
        instance = SurfaceInstance(
            payload.instance_id,
            owner,
            payload.app,
            current._revision + 1 if current else 1,
            self._generation,
            payload.state,
        )
        self._instances[payload.instance_id] = instance
        self._sizes.pop(payload.instance_id, None)
        self._remember(instance)
        if self._watchers:
            self._watchers.notify(SurfaceChange("open", instance))
        return instance

    def patch(self, owner: str, payload: UiPatchPayload) -> SurfaceInstance:
        """Replace the state, or merge into it (H6); U5: the bundle never changes here."""
        current = self._existing(owner, payload.instance_id)
        state = merge_patch(current._state, payload.state) if payload.merge else payload.state
        n = None
        if payload.merge:
            known = self._sizes.get(payload.instance_id)
            if known is None:
                known = size(current._state)
            n = merged_size(current._state, known, payload.state)
        if n is not None and n > self._limits.max_state_bytes:
            raise ProtocolError(
                "too_large",
                "H7",
                "$.payload.state",
                f"after the merge the state would be {n} bytes; the limit is "
                f"{self._limits.max_state_bytes}. {rules.RULES['H7']}",
            )
        instance = SurfaceInstance(
            current._instance_id,
            owner,
            current._app,
            current._revision + 1,
            current._generation,
            state,
        )
        if n is None:  # a replacing patch: measured if a merge comes
            self._sizes.pop(payload.instance_id, None)
        else:
            self._sizes[payload.instance_id] = n
        self._instances[payload.instance_id] = instance
        self._remember(instance)
        if self._watchers:
            merged = payload.state if payload.merge else None
            self._watchers.notify(SurfaceChange("patch", instance, None, merged))
        return instance

    def close(self, owner: str | None, payload: UiClosePayload) -> SurfaceInstance:
        """Remove an instance; ``owner`` None means the user closed it (U10)."""
        if owner is None:
            current = self._instances.get(payload.instance_id)
            if current is None:
                raise ProtocolError(
                    "unknown_instance",
                    "U10",
                    "$.instance_id",
                    f"no surface instance {payload.instance_id!r} is open to close.",
                )
        else:
            current = self._existing(owner, payload.instance_id)
        del self._instances[payload.instance_id]
        self._sizes.pop(payload.instance_id, None)
        if self._watchers:
            self._watchers.notify(SurfaceChange("close", current, payload.reason))
        return current


class SurfacesView(Mapping[str, SurfaceInstance]):
    """The open instances, read-only: what ``host.surfaces`` is. A change goes through the
    host (``receive``, an Agent), which takes its lock, records it in the history and tells
    the agents; a mutator here would skip all three, so there is none."""

    __slots__ = ("_registry",)

    def __init__(self, registry: Surfaces) -> None:
        self._registry = registry

    def __getitem__(self, instance_id: str) -> SurfaceInstance:
        return self._registry[instance_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def remembered(self) -> list[tuple[str, int, int]]:
        """``(instance_id, last revision, states kept)``: see ``Surfaces.remembered``."""
        return self._registry.remembered()

    def __repr__(self) -> str:
        return f"SurfacesView({list(self._registry)})"
