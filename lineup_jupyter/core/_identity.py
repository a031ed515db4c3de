"""Which endpoint speaks for which agent id (H41), and who the host knows a sender is (H27, H28).

An endpoint is where envelopes come from: the kernel (``KERNEL``: every in-kernel agent and
any code calling ``Host.receive``), or one connection outside it (a ``RemoteAgent``: a
process, a WebSocket the host dialled, a connection to a listener, one in memory). An id is
bound to the first endpoint that claims it: the kernel's ids for the kernel's life
(in-kernel agents' ids are reserved), a connection's until it ends (then whoever claims it
next, a reconnecting agent, gets its surfaces). Any other endpoint's claim is refused
``agent_conflict``. What the host addresses to an id therefore reaches one endpoint only.

An agent id is a label its requester chose. What the host knows is the binding: each one is
an ``Identity`` the host numbers itself (H27). The kernel's own agents are session 0 (each
in-kernel agent id is one identity, for the kernel's life: they are the notebook's own code);
every connection's binding and every MCP server session gets a new number, so a namesake that
comes later (the same id on another connection, another server calling itself ``diary``)
is another identity. Call ledgers, remembered decisions, MCP domain grants and resource
caches key on the Identity, never on the label.

Reserved ids (H28): ``mcp`` and ``mcp.*`` name the MCP servers the host connects, and the
host's client id is the host's own name; no agent, in the kernel or outside it, may claim
them (``reserved_id``). Only the host binds a reserved id, for one session of its own
(``attach_session``), and frees it when the session ends.

The host's lock guards this table; it has no lock of its own.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from ..protocol._errors import ProtocolError

__all__ = ["KERNEL", "NOBODY", "Identities", "Identity", "host_bound", "reserved_why"]

MCP_NAMESPACE: Final = "mcp"


class _Kernel:
    describe = "the kernel"

    def __repr__(self) -> str:
        return "KERNEL"


KERNEL: Final = _Kernel()


@dataclass(frozen=True)
class Identity:
    """Who sent a message, as the host knows it (H27): the label the sender chose
    (``agent_id``) and the host's number for the binding (``session``: 0 for the kernel's
    own agents, else one connection or one MCP server session). Equal only to itself and to
    the same binding: a namesake on another connection is another Identity."""

    agent_id: str
    session: int
    endpoint: object = field(compare=False, repr=False)  # where its answers may go (H41)
    via: str = field(compare=False)  # what the host knows of it, for the card

    def view(self) -> dict[str, object]:
        """What a card says of it: the label, the host's number, how it is connected."""
        return {"agent": self.agent_id, "session": self.session, "via": self.via}


# Whom a refusal of a message with no sender the host could bind is recorded for (H27): a
# scope of its own, so such a call_id is burned for no agent.
NOBODY: Final = Identity("", -1, None, "a sender the host could not name")


def host_bound(agent_id: str) -> bool:
    """Whether only the host binds ``agent_id`` for a session of its own (an MCP server's)."""
    return agent_id == MCP_NAMESPACE or agent_id.startswith(MCP_NAMESPACE + ".")


def reserved_why(agent_id: str, client_id: str) -> str | None:
    """Why ``agent_id`` is the host's (H28), or None when any agent may claim it."""
    if host_bound(agent_id):
        return "ids mcp and mcp.* name the MCP servers this host connects (host.connect_mcp)"
    if agent_id == client_id:
        return "it is this host's own client id, the sender of everything the host says"
    return None


class Identities:
    """agent id -> the endpoint that speaks for it (H41) and its Identity (H27)."""

    def __init__(
        self, client_id: str = "", on_ended: Callable[[Identity], None] | None = None
    ) -> None:
        self._client_id = client_id
        self._bound: dict[str, Identity] = {}
        self._sessions = itertools.count(1)
        self._on_ended = on_ended  # an identity's binding ended: its grants go with it

    def owner(self, agent_id: str) -> object | None:
        bound = self._bound.get(agent_id)
        return None if bound is None else bound.endpoint

    def check(self, agent_id: str, endpoint: object) -> None:
        """Raise ``agent_conflict`` if ``agent_id`` belongs to another endpoint, and
        ``reserved_id`` if it is the host's and not bound to this endpoint by the host."""
        bound = self._bound.get(agent_id)
        if bound is not None and bound.endpoint is not endpoint:
            raise ProtocolError(
                "agent_conflict",
                "H41",
                "$.sender.id",
                f"agent id {agent_id!r} belongs to {_whose(bound.endpoint)}; an agent id is "
                "spoken for by one endpoint at a time, so this message was refused and "
                "nothing it asked for was done (H41).",
            )
        if bound is None:
            self._refuse_reserved(agent_id)

    def claim(self, agent_id: str, endpoint: object) -> Identity:
        """Bind ``agent_id`` to ``endpoint`` (again is fine) and return its Identity, or
        raise ``agent_conflict`` / ``reserved_id``. A reserved id is never claimed, even by
        the endpoint a host session holds it on (an in-kernel Agent named like a connected
        MCP server would otherwise speak as that server)."""
        self._refuse_reserved(agent_id)
        self.check(agent_id, endpoint)
        bound = self._bound.get(agent_id)
        if bound is None:
            bound = self._bound[agent_id] = self._new(agent_id, endpoint)
        return bound

    def peek(self, agent_id: str, endpoint: object) -> Identity | None:
        """The Identity a message from ``endpoint`` in the name of ``agent_id`` comes from,
        binding nothing: its binding there, or for the kernel the one its claim will make
        (a refused message binds nothing); None when that endpoint may not speak for it."""
        bound = self._bound.get(agent_id)
        if bound is not None:
            return bound if bound.endpoint is endpoint else None
        if endpoint is KERNEL and reserved_why(agent_id, self._client_id) is None:
            return Identity(agent_id, 0, KERNEL, KERNEL.describe)
        return None

    def resolve(self, agent_id: str, endpoint: object) -> Identity:
        """``peek`` once ``check`` passed; a connection's unbound id is claimed (as its
        session does before it speaks, _remote.py)."""
        return self.peek(agent_id, endpoint) or self.claim(agent_id, endpoint)

    def attach_session(self, agent_id: str, via: str) -> Identity:
        """The host's own agent in a reserved namespace (an MCP server session): a new
        Identity on the kernel's endpoint, whatever held the id before."""
        if reserved_why(agent_id, self._client_id) is None:
            raise ValueError(f"{agent_id!r} is not a reserved id")
        if agent_id in self._bound:  # only a session of ours can hold a reserved id
            raise ProtocolError(
                "agent_conflict",
                "H41",
                "$.sender.id",
                f"agent id {agent_id!r} is held by another session of this host (H28).",
            )
        bound = self._bound[agent_id] = Identity(agent_id, next(self._sessions), KERNEL, via)
        return bound

    def detach_session(self, identity: Identity) -> None:
        """A host session ended: its reserved id is free, and what was its ends with it."""
        if self._bound.get(identity.agent_id) == identity:
            del self._bound[identity.agent_id]
            self._ended(identity)

    def release(self, endpoint: object) -> None:
        """The endpoint ended: its ids are free for the next claim (a reconnecting agent,
        which is a new Identity: nothing the first one was granted carries over)."""
        for agent_id, bound in list(self._bound.items()):
            if bound.endpoint is endpoint:
                del self._bound[agent_id]
                self._ended(bound)

    def _ended(self, identity: Identity) -> None:
        if self._on_ended is not None:
            self._on_ended(identity)

    def _new(self, agent_id: str, endpoint: object) -> Identity:
        if endpoint is KERNEL:
            return Identity(agent_id, 0, KERNEL, KERNEL.describe)
        via = str(getattr(endpoint, "describe", "a connection"))
        return Identity(agent_id, next(self._sessions), endpoint, via)

    def _refuse_reserved(self, agent_id: str) -> None:
        why = reserved_why(agent_id, self._client_id)
        if why is not None:
            raise ProtocolError(
                "reserved_id",
                "H28",
                "$.sender.id",
                f"agent id {agent_id!r} is reserved for the host: {why}. Choose another id; "
                "this message was refused and nothing it asked for was done (H28).",
            )


def _whose(owner: object) -> str:
    if owner is KERNEL:
        return "an agent in the kernel"
    return f"another connection ({getattr(owner, 'describe', 'an agent')})"
