"""What the host's views show of the broker, and what they may ask of it (js/prompts.js).

The kernel holds the truth: the calls waiting for the user, the session's grants, the last
few answers. Every change goes to every view as one message (``consent``), and a view that is
drawn asks for it (``consent_sync``), so a re-rendered cell or a second view shows the same
cards and the first decision to reach the kernel wins. It is never a synced trait: a notebook
reopened without its kernel has no card that could be clicked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from ._errors import UsageError
from ._watchers import Watchers

if TYPE_CHECKING:
    from ._broker import Broker

__all__ = ["ConsentViews"]

logger = logging.getLogger("lineup_jupyter")


class ConsentViews:
    """The broker's side of the consent cards; the widget relays both ways."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._watchers: Watchers[[]] = Watchers("consent")
        self._refusal: dict[str, str] | None = None  # a view's decision the kernel refused

    def watch(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` after every change a view shows; returns an unwatch function."""
        return self._watchers.add(watcher)

    def changed(self) -> None:
        self._watchers.notify()

    def state(self) -> dict[str, Any]:
        """The ``consent`` message: pending call specs, remembered grants, recent answers."""
        broker = self._broker
        now = datetime.now(timezone.utc)
        state: dict[str, Any] = {
            "pending": [call.spec(now) for call in broker.pending.values()],
            "remembered": broker.policy.remembered,
            "recent": list(broker.recent),
        }
        if self._refusal is not None:
            state["refused"] = self._refusal
        return state

    def message(self, content: dict[str, Any]) -> None:
        """What a view sent: consent_sync, consent_decide or consent_revoke."""
        broker = self._broker
        kind = content.get("kind")
        with broker._host._lock:
            try:
                if kind == "consent_decide":
                    outcome = content.get("outcome")
                    typed_name = content.get("typed_name")
                    broker.decide(
                        str(content.get("call_id")),
                        content.get("decision"),  # type: ignore[arg-type]  # decide checks it
                        remember=content.get("remember") is True,
                        typed_name=typed_name if isinstance(typed_name, str) else None,
                        outcome=outcome if isinstance(outcome, dict) else None,
                    )
                elif kind == "consent_revoke":
                    broker.policy.revoke(str(content.get("capability")))
            except UsageError as error:
                # Two views deciding at once: the second finds the call answered, and its
                # card just goes. A card whose call still waits is told why and made usable
                # again, so a refused decision never leaves it stuck.
                logger.info("%s", error)
                self._refusal = {"call_id": str(content.get("call_id")), "message": str(error)}
            try:
                self.changed()
            finally:
                self._refusal = None
