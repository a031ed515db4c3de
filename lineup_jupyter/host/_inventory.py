"""The client.inventory (C1, C2, C4): what this client offers agents, under a revision.

Made on first use; remade under a new revision, and sent to every agent, when the apps or
the capabilities an agent may see change after an agent saw it. The revision comes from the
app center, persisted and never reused (H36).
"""

from __future__ import annotations

import json
from typing import Any

from ..appcenter._apps import AppCenter
from ..capabilities._broker import Broker
from ..core._ports import Send
from ..protocol._json import dumps
from ..protocol._models import COMPONENT_VERSIONS

__all__ = ["Inventory"]


class Inventory:
    """The latest client.inventory payload of one host."""

    def __init__(self, apps: AppCenter, broker: Broker, send: Send) -> None:
        self._apps = apps
        self._broker = broker
        self._send = send
        self._made: dict[str, Any] | None = None

    def current(self) -> dict[str, Any]:
        """A copy of the latest payload, remade first when the app center's entries differ
        from those it was made with."""
        if self._made is None or self._made["applications"] != self._apps.inventory_entries():
            self._made = self._make()
        return json.loads(dumps(self._made))  # type: ignore[no-any-return]

    def capabilities_changed(self) -> None:
        """A capability appeared, went or was hidden: agents that saw the inventory get the
        new one, under a new revision (C4)."""
        if (
            self._made is not None
            and self._made["capabilities"] != self._broker.inventory_entries()
        ):
            self._resend()

    def apps_changed(self) -> None:
        """The app center changed: agents that saw the inventory get a new one (C1)."""
        if self._made is not None:
            self._resend()

    def _resend(self) -> None:
        self._made = self._make()
        self._send("lineup.v1.client.inventory", self.current(), to=None)

    def _make(self) -> dict[str, Any]:
        return {
            "revision": str(self._apps.next_revision()),  # C2: persisted, never reused (H36)
            "standard_components": [
                {"id": kind, "version": version} for kind, version in COMPONENT_VERSIONS.items()
            ],
            "applications": self._apps.inventory_entries(),  # C5: enabled and verified
            "capabilities": self._broker.inventory_entries(),  # C7: after policy
        }
