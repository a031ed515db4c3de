"""Which endpoint speaks for which agent id (H41): one endpoint per id at a time.

An endpoint is where envelopes come from: the kernel (``KERNEL``: every in-kernel agent and
any code calling ``Host.receive``), or one connection outside it (a ``RemoteAgent``: a
process, a WebSocket the host dialled, a connection to a listener, one in memory). An id is
bound to the first endpoint that claims it: the kernel's ids for the kernel's life
(in-kernel agents' ids are reserved), a connection's until it ends (then whoever claims it
next, a reconnecting agent, gets its surfaces). Any other endpoint's claim is refused
``agent_conflict``. What the host addresses to an id therefore reaches one endpoint only.

The host's lock guards this table; it has no lock of its own.
"""

from __future__ import annotations

from typing import Final

from ..protocol._errors import ProtocolError

__all__ = ["KERNEL", "Identities"]


class _Kernel:
    describe = "the kernel"

    def __repr__(self) -> str:
        return "KERNEL"


KERNEL: Final = _Kernel()


class Identities:
    """agent id -> the endpoint that speaks for it (H41)."""

    def __init__(self) -> None:
        self._owners: dict[str, object] = {}

    def owner(self, agent_id: str) -> object | None:
        return self._owners.get(agent_id)

    def check(self, agent_id: str, endpoint: object) -> None:
        """Raise ``agent_conflict`` if ``agent_id`` belongs to another endpoint."""
        owner = self._owners.get(agent_id)
        if owner is not None and owner is not endpoint:
            raise ProtocolError(
                "agent_conflict",
                "H41",
                "$.sender.id",
                f"agent id {agent_id!r} belongs to {_whose(owner)}; an agent id is spoken for "
                "by one endpoint at a time, so this message was refused and nothing it asked "
                "for was done (H41).",
            )

    def claim(self, agent_id: str, endpoint: object) -> None:
        """Bind ``agent_id`` to ``endpoint`` (again is fine), or raise ``agent_conflict``."""
        self.check(agent_id, endpoint)
        self._owners[agent_id] = endpoint

    def release(self, endpoint: object) -> None:
        """The endpoint ended: its ids are free for the next claim (a reconnecting agent)."""
        for agent_id in [i for i, owner in self._owners.items() if owner is endpoint]:
            del self._owners[agent_id]


def _whose(owner: object) -> str:
    if owner is KERNEL:
        return "an agent in the kernel"
    return f"another connection ({getattr(owner, 'describe', 'an agent')})"
