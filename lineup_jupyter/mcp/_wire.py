"""What this host asks of one MCP server, recorded, and where the answers are acted on.

Every request to the server and every answer is one record of the host's history (the
inspector's MCP traffic, McpApps.record). The server's answers arrive on the connection's
loop thread; what they change in the host and its view happens on the host's side
(``when_done``: the kernel's loop in a notebook, else the server's worker thread), in order,
never on the MCP loop. A tool's answer is held to H2 and to MAX_RESULT_BYTES before anyone
sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..protocol._json import dumps
from ._connection import McpConnection, McpFailure, json_of
from ._stdio import MAX_LINE_BYTES

if TYPE_CHECKING:
    from ..runtime._threads import HostThread
    from ._apps import McpApp, McpApps

__all__ = ["MAX_RESULT_BYTES", "Wire"]

MAX_RESULT_BYTES = 4 * 1024 * 1024  # a tool's result as JSON, at most (to the app, the history)
_ANSWER_BYTES = 2 * MAX_LINE_BYTES  # parsed before its size is told (HTTP: not bounded before)


class Wire:
    """One server's requests and answers: started on its connection, recorded in the history
    under ``server_name`` (known once the server said who it is), acted on at ``home``."""

    def __init__(self, connection: McpConnection, apps: McpApps, home: HostThread) -> None:
        self.connection = connection
        self._apps = apps
        self._home = home
        self.server_name: str | None = None

    def record(
        self, direction: str, method: str, message: dict[str, Any], app_id: str | None = None
    ) -> None:
        self._apps.record(app_id, direction, method, message, server=self.server_name)

    def when_done(
        self, future: Future[Any], work: Callable[[Future[Any]], None], what: str
    ) -> None:
        """``work(future)`` once it is done, on the host's side (``home``)."""
        future.add_done_callback(lambda done: self._home.call(lambda: work(done), what))

    def call_tool(
        self,
        tool: str,
        arguments: dict[str, Any],
        app: McpApp | None,
        timeout: float | None = None,
    ) -> Future[dict[str, Any]]:
        """``tools/call``, recorded both ways; its answer checked (H2, MAX_RESULT_BYTES) or
        its failure, as an McpFailure."""
        app_id = None if app is None else app.app_id
        params = {"name": tool, "arguments": arguments}
        self.record("to_server", "tools/call", {"method": "tools/call", "params": params}, app_id)
        raw = self.connection.request(lambda client: client.call_tool(tool, arguments), timeout)
        result: Future[dict[str, Any]] = Future()

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                self.record("from_server", "response", {"error": str(error)}, app_id)
                result.set_exception(
                    error if isinstance(error, McpFailure) else McpFailure(str(error))
                )
                return
            try:  # H2, as a LineUp message: nothing changed silently on the way to the app
                answer = json_of(future.result(), max_bytes=_ANSWER_BYTES)
            except McpFailure as refused:
                self.record("from_server", "response", {"error": str(refused)}, app_id)
                result.set_exception(refused)
                return
            answer.pop("resultType", None)
            size = len(dumps(answer))
            if size > MAX_RESULT_BYTES:  # the history, the feed and the page would hold it
                failure = f"the result is {size} bytes as JSON, over this host's {MAX_RESULT_BYTES}"
                self.record("from_server", "response", {"error": failure}, app_id)
                result.set_exception(McpFailure(failure))
                return
            self.record("from_server", "response", {"result": answer}, app_id)
            result.set_result(answer)

        raw.add_done_callback(done)
        return result
