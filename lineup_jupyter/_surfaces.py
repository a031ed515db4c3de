"""The open surface instances of one conversation: open, replace, patch, close, with revisions.

Every operation checks everything first and changes state last, so a refused request leaves
the registry exactly as it was. The kernel's copy is the truth the browser is fed from
(after a reload, an unmounted cell, a second view), so state is numbered: each instance's
``revision`` goes up by one on every change and never goes back, even across a replace.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ._errors import ProtocolError
from .protocol import AppRef, InlineApp, UiClosePayload, UiOpenPayload, UiPatchPayload, rules, size
from .protocol._validate import Limits

__all__ = ["SurfaceChange", "SurfaceInstance", "Surfaces", "merge_patch"]

logger = logging.getLogger("lineup_jupyter")


@dataclass(frozen=True)
class SurfaceInstance:
    """A snapshot of one open surface. ``state`` is a copy: changing it changes nothing."""

    instance_id: str
    owner: str
    app: InlineApp | AppRef
    revision: int
    generation: int  # bumped by every ui.open, so a view knows to rebuild the frame
    _state: dict[str, Any]

    @property
    def state(self) -> dict[str, Any]:
        copied: dict[str, Any] = json.loads(json.dumps(self._state))
        return copied


@dataclass(frozen=True)
class SurfaceChange:
    kind: Literal["open", "patch", "close"]
    instance: SurfaceInstance
    reason: str | None = None


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


class Surfaces(Mapping[str, SurfaceInstance]):
    """Instances by id (U1). Read it like a dict; change it through the host."""

    def __init__(self, limits: Limits) -> None:
        self._limits = limits
        self._instances: dict[str, SurfaceInstance] = {}
        self._generation = 0
        self._watchers: list[Watcher] = []
        self._lock = threading.RLock()

    def __getitem__(self, instance_id: str) -> SurfaceInstance:
        return self._instances[instance_id]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._instances))

    def __len__(self) -> int:
        return len(self._instances)

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call ``watcher(change)`` after every open, patch and close; returns an unwatch."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def _owned(self, owner: str, instance_id: str, path: str) -> SurfaceInstance | None:
        current = self._instances.get(instance_id)
        if current is not None and current.owner != owner:
            raise ProtocolError(
                "not_owner",
                "H8",
                path,
                f"instance {instance_id!r} was opened by agent {current.owner!r}, not "
                f"{owner!r}. {rules.RULES['H8']}",
            )
        return current

    def _existing(self, owner: str, instance_id: str) -> SurfaceInstance:
        current = self._owned(owner, instance_id, "$.payload.instance_id")
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
        with self._lock:
            current = self._owned(owner, payload.instance_id, "$.payload.instance_id")
            self._generation += 1
            instance = SurfaceInstance(
                payload.instance_id,
                owner,
                payload.app,
                current.revision + 1 if current else 1,
                self._generation,
                payload.state,
            )
            self._instances[payload.instance_id] = instance
        self._notify(SurfaceChange("open", instance))
        return instance

    def patch(self, owner: str, payload: UiPatchPayload) -> SurfaceInstance:
        """Replace the state, or merge into it (H6); U5: the bundle never changes here."""
        with self._lock:
            current = self._existing(owner, payload.instance_id)
            state = merge_patch(current._state, payload.state) if payload.merge else payload.state
            if payload.merge and (n := size(state)) > self._limits.max_state_bytes:
                raise ProtocolError(
                    "too_large",
                    "H7",
                    "$.payload.state",
                    f"after the merge the state would be {n} bytes; the limit is "
                    f"{self._limits.max_state_bytes}. {rules.RULES['H7']}",
                )
            instance = SurfaceInstance(
                current.instance_id,
                owner,
                current.app,
                current.revision + 1,
                current.generation,
                state,
            )
            self._instances[payload.instance_id] = instance
        self._notify(SurfaceChange("patch", instance))
        return instance

    def close(self, owner: str | None, payload: UiClosePayload) -> SurfaceInstance:
        """Remove an instance; ``owner`` None means the user closed it (U10)."""
        with self._lock:
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
        self._notify(SurfaceChange("close", current, payload.reason))
        return current

    def _notify(self, change: SurfaceChange) -> None:
        # The change has happened; a watcher that fails (a view, say) must not undo or hide it.
        for watcher in list(self._watchers):
            try:
                watcher(change)
            except Exception:
                logger.exception(
                    "[lineup] a surface watcher failed on %s of %r",
                    change.kind,
                    change.instance.instance_id,
                )
