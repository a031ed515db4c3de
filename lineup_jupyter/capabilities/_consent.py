"""What the host's views show of the broker, and what they may ask of it (js/prompts.js).

The kernel holds the truth: the calls waiting for the user, the session's grants, the last
few answers. A view that is drawn asks for all of it (``consent_sync``, answered ``consent``),
so a re-rendered cell or a second view shows the same cards and the first decision to reach
the kernel wins; after that each change goes to every view alone (``consent_delta``: the cards
added, the call ids gone, the grants and recent answers when they changed), so the 700th
waiting card costs its own bytes, not the 699 before it. Both are numbered (``seq``): a view
that misses one asks again. It is never a synced trait: a notebook reopened without its kernel
has no card that could be clicked.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any, Literal, Protocol

from ..core._ports import HostPort
from ..core._view_protocol import ConsentDecide, ConsentRevoke, ConsentSync
from ..protocol._envelopes import utc_now
from ..protocol._errors import UsageError
from ..runtime._watchers import Watchers
from ._capabilities import Policy

__all__ = ["ConsentSource", "ConsentViews"]

logger = logging.getLogger("lineup_jupyter")


class _Card(Protocol):
    def spec(self, now: datetime) -> dict[str, Any]: ...


class ConsentSource(Protocol):
    """What the views need of the broker (_broker.py satisfies it; no import of it here)."""

    @property
    def host(self) -> HostPort: ...

    @property
    def pending(self) -> Mapping[str, _Card]: ...

    @property
    def recent(self) -> Iterable[dict[str, Any]]: ...

    @property
    def policy(self) -> Policy: ...

    def decide(
        self,
        call_id: str,
        decision: Literal["allow", "deny", "cancel"],
        *,
        remember: bool = False,
        typed_name: str | None = None,
        outcome: dict[str, Any] | None = None,
    ) -> dict[str, Any]: ...


class ConsentViews:
    """The broker's side of the consent cards; the widget relays both ways."""

    def __init__(self, broker: ConsentSource) -> None:
        self._broker = broker
        self._watchers: Watchers[[]] = Watchers("consent")
        self._refusal: dict[str, str] | None = None  # a view's decision the kernel refused
        self._seq = 0
        self._whole = True  # the next message carries everything (a view asked for it)
        self._sent: dict[str, None] = {}  # the call ids of the cards the views have
        self._sent_remembered: list[dict[str, Any]] = []
        self._sent_recent: list[dict[str, Any]] = []

    def watch(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` after every change a view shows; returns an unwatch function."""
        return self._watchers.add(watcher)

    def changed(self) -> None:
        self._watchers.notify()

    def update(self) -> dict[str, Any] | None:
        """The message that brings the views up to date: ``consent`` with everything after a
        ``consent_sync``, else ``consent_delta`` with what changed (None: nothing did). The
        one host view calls it on every change."""
        broker = self._broker
        remembered = broker.policy.remembered
        recent = list(broker.recent)
        if self._whole:
            self._whole = False
            message = {"kind": "consent", **self.state()}
            self._sent = dict.fromkeys(broker.pending)
        else:
            now = utc_now()
            added = [
                call.spec(now) for key, call in broker.pending.items() if key not in self._sent
            ]
            removed = [key for key in self._sent if key not in broker.pending]
            for key in removed:
                del self._sent[key]
            self._sent.update(dict.fromkeys(spec["call_id"] for spec in added))
            message = {"kind": "consent_delta", "added": added, "removed": removed}
            if remembered != self._sent_remembered:
                message["remembered"] = remembered
            if recent != self._sent_recent:
                message["recent"] = recent
            if self._refusal is not None:
                message["refused"] = self._refusal
            if len(message) == 3 and not added and not removed:
                return None
        self._sent_remembered, self._sent_recent = remembered, recent
        self._seq += 1
        message["seq"] = self._seq
        return message

    def state(self) -> dict[str, Any]:
        """The ``consent`` message: pending call specs, remembered grants, recent answers."""
        broker = self._broker
        now = utc_now()
        state: dict[str, Any] = {
            "pending": [call.spec(now) for call in broker.pending.values()],
            "remembered": broker.policy.remembered,
            "recent": list(broker.recent),
        }
        if self._refusal is not None:
            state["refused"] = self._refusal
        return state

    def message(self, content: ConsentSync | ConsentDecide | ConsentRevoke) -> None:
        """What a view sent: consent_sync, consent_decide or consent_revoke."""
        broker = self._broker
        kind = content.get("kind")
        with broker.host.lock:
            try:
                if kind == "consent_sync":
                    self._whole = True
                elif kind == "consent_decide":
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
                    session = content.get("session")
                    broker.policy.revoke(
                        str(content.get("capability")),
                        session if type(session) is int else None,
                    )
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
