"""The open MCP apps of one host, and what their views send (docs/mcp-apps.md).

Skeleton of the registry the widget talks to: every change is one feed op
(_view_protocol.py FEED_OPS) told to the watchers, in order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..runtime._watchers import Watchers

__all__ = ["McpApps"]

Op = dict[str, Any]
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
REFUSED = -32000


class McpApps:
    """The MCP apps open in one host, by ``app_id``; each change is a feed op to the views."""

    def __init__(self) -> None:
        self._watchers: Watchers[[Op]] = Watchers("mcp app")

    def watch(self, watcher: Callable[[Op], None]) -> Callable[[], None]:
        return self._watchers.add(watcher)

    def _emit(self, op: Op) -> None:
        self._watchers.notify(op)

    def specs(self) -> list[dict[str, Any]]:
        return []

    # ---- what the views send (widgets/_widget.py) ------------------------------------

    def request(self, app_id: str, request_id: Any, method: str, params: dict[str, Any]) -> None:
        self._emit(
            {
                "op": "mcp_response",
                "app_id": app_id,
                "id": request_id,
                "error": {"code": INVALID_PARAMS, "message": f"no MCP app {app_id!r} is open"},
            }
        )

    def traffic(self, app_id: str, items: list[Any]) -> None:
        pass

    def refused(self, app_id: str, report: dict[str, Any]) -> None:
        pass

    def grant(self, app_id: str, directive: str, domain: str, allow: bool) -> None:
        pass

    def close(self, app_id: str) -> None:
        pass
