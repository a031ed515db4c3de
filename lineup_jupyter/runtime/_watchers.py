"""Callbacks told of a change after it has happened (a view, a test, the broker's relay).

One that fails is logged and neither undoes the change nor keeps it from the others: a view
that broke must not break the host.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

__all__ = ["Watchers"]

logger = logging.getLogger("lineup_jupyter")

P = ParamSpec("P")


class Watchers(Generic[P]):
    """The watchers of one kind of change (``what`` names it in the log)."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._watchers: list[Callable[P, None]] = []

    def __bool__(self) -> bool:
        """Whether anyone watches (a change need not be described for nobody)."""
        return bool(self._watchers)

    def add(self, watcher: Callable[P, None]) -> Callable[[], None]:
        """Watch; returns the function that stops it."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    def notify(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for watcher in list(self._watchers):
            try:
                watcher(*args, **kwargs)
            except Exception:
                logger.exception("[lineup] a %s watcher failed on %.200r", self._what, args)
