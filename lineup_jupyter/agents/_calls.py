"""What ``agent.call`` returns: a handle on the call's one ``app.result`` (C10).

``await handle`` in a notebook cell (ipykernel 7: widget messages, and so the user's click,
are handled while the cell awaits); ``handle.add_done_callback(fn)``; or ``handle.result()``
from a thread that is not the kernel's event loop (it refuses there, because it would
deadlock, and says to ``await`` instead). _pending.Pending does the thread-safe part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..runtime._pending import Pending

__all__ = ["CallHandle", "CallResult"]


@dataclass(frozen=True)
class CallResult:
    """The app.result of a call: ``status`` (C11), ``result`` when completed, else ``error``."""

    call_id: str
    status: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    envelope: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == "completed"


class CallHandle(Pending[CallResult]):
    """One app.call on its way; resolved once, by its app.result."""

    def __init__(self, call_id: str, capability: str) -> None:
        super().__init__(f"the result of call {call_id!r} ({capability})")
        self.call_id = call_id
        self.capability = capability

    def __repr__(self) -> str:
        state = self.result().status if self.done() else "waiting"
        return f"CallHandle({self.call_id!r}, {self.capability!r}, {state})"
