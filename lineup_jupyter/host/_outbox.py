"""What the client sends: one client->agent envelope, stamped with the conversation, the
client's id and the time (H1), on the bus. The Host hands ``Outbox.send`` to every part that
sends (the broker, the intake, the inventory, the user's acts) as their ``Send`` (_ports.py)."""

from __future__ import annotations

from typing import Any

from ..core._bus import Bus, Subscription
from ..protocol._envelopes import new_envelope, now_iso

__all__ = ["Outbox"]


class Outbox:
    """Client->agent envelopes of one conversation, as one client."""

    def __init__(self, bus: Bus, conversation_id: str, client_id: str) -> None:
        self._bus = bus
        self._conversation_id = conversation_id
        self._client_id = client_id

    def send(
        self,
        type_: str,
        payload: dict[str, Any],
        *,
        to: str | None,
        endpoint: object = None,
        only: Subscription | None = None,
    ) -> dict[str, Any]:
        """Send to agent ``to`` (None: every agent), through ``endpoint`` only when given
        (H41), to one subscription ``only`` when given (a new subscriber's inventory, C1)."""
        message = new_envelope(
            type_,
            payload,
            conversation_id=self._conversation_id,
            sender=("client", self._client_id),
            target=None if to is None else ("agent", to),
            ts=now_iso(),
        )
        self._bus.send(message, endpoint=endpoint, only=only)
        return message
