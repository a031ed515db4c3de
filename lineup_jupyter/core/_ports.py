"""The Host as the layers below it see it: the small typed interfaces they depend on.

The Host is the composition root: it makes the broker, the consent views and the views, and
hands each what it needs of the Host. They depend on these Protocols and callables, never on
the Host class (not even for type checking) nor on its private names, so each can be built and
tested with a stand-in, and a change inside the Host does not break a module that looks
unrelated. What goes in here is what a lower module truly needs; anything else stays the
Host's own.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..protocol._errors import ProtocolError
    from ..protocol._validate import Limits
    from ..runtime._problems import Problems
    from ._bus import History, Subscription
    from ._surfaces import SurfacesView

__all__ = ["AgentHost", "HostPort", "Send"]


class HostPort(Protocol):
    """What a lower module may read of the Host, and its lock. The Host satisfies it."""

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """The Host's re-entrant lock: held, nothing else reaches the Host in between (an
        agent's message, a transport's thread, a timer)."""
        ...

    @property
    def conversation_id(self) -> str: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def surfaces(self) -> SurfacesView: ...

    @property
    def problems(self) -> Problems: ...


class Send(Protocol):
    """How a lower module sends one client->agent envelope through the Host's bus (the Host
    builds the envelope); ``to`` is the target agent, None for every agent; ``endpoint``, when
    given, is the one connection it may reach (H41). Returns the envelope sent."""

    def __call__(
        self, type_: str, payload: dict[str, Any], *, to: str | None, endpoint: object = None
    ) -> dict[str, Any]: ...


class AgentHost(HostPort, Protocol):
    """What an in-kernel ``Agent`` uses of the Host: its public API, never the Host class."""

    @property
    def history(self) -> History: ...

    def receive(self, raw: Any) -> ProtocolError | None: ...

    def send_inventory(self, to: str | None = None) -> dict[str, Any]: ...

    def attach_agent(
        self, agent_id: str, dispatch: Callable[[dict[str, Any]], None]
    ) -> Subscription: ...
