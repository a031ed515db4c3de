"""An app's ``resources/read`` and ``resources/list`` (hostCapabilities.serverResources),
passed to its own server and answered once, bounded (issue 22).

They need no card, so what one app may have read for it is bounded: at most READS_IN_FLIGHT
waiting for its server, READS_PER_SECOND started and READ_BYTES_PER_SECOND answered in any
second; past them a read is refused at once, with the bound, and the app's card says so. An
answer past the server's max_html_bytes (8 MiB by default) is refused: it would cross the
comm to the page whole.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..protocol._json import dumps
from ._apps import REFUSED
from ._resources import over

if TYPE_CHECKING:
    from ._apps import McpApp, McpApps
    from ._wire import Wire

__all__ = [
    "READS_IN_FLIGHT",
    "READS_PER_SECOND",
    "READ_BYTES_PER_SECOND",
    "AppReads",
    "ReadBudget",
    "preview_read",
]

READS_IN_FLIGHT = 2
READS_PER_SECOND = 8
READ_BYTES_PER_SECOND = 4 * 1024 * 1024
_clock = time.monotonic  # the reads' seconds (a test freezes it, never sleeps)


class AppReads:
    """The reads and listings of one server's apps, each app with its ReadBudget."""

    def __init__(self, apps: McpApps, wire: Wire, max_bytes: Callable[[], int]) -> None:
        self._apps = apps
        self._wire = wire
        self._max_bytes = max_bytes  # the server's max_html_bytes
        self._lock = threading.Lock()
        self._budgets: dict[str, ReadBudget] = {}  # app_id -> its budget

    def read(self, app: McpApp, request_id: Any, uri: str) -> None:
        with self._lock:
            budget = self._budgets.setdefault(app.app_id, ReadBudget())
            refused = budget.start(_clock())
        if refused is not None:  # bounded before the server is asked (issue 22)
            if budget.refused == 1:  # once per run of refusals: the card says it, not 30 times
                self._apps.note(app, f"resources/read refused: {refused}")
            self._apps.refuse(
                app,
                request_id,
                REFUSED,
                f"resources/read refused: {refused}",
                {"status": "refused", "reason": refused},
            )
            return
        self._wire.record(
            "to_server",
            "resources/read",
            {"method": "resources/read", "params": {"uri": uri}},
            app.app_id,
        )
        future = self._wire.connection.request(lambda client: client.read_resource(uri))

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                with self._lock:
                    budget.done(_clock(), 0)
                self._apps.refuse(
                    app, request_id, REFUSED, f"could not read {uri[:200]!r}: {error}"
                )
                return
            found = future.result().model_dump(by_alias=True, exclude_none=True, mode="json")
            found.pop("resultType", None)
            self._wire.record("from_server", "response", preview_read(found), app.app_id)
            size = len(dumps(found))
            with self._lock:
                budget.done(_clock(), size)
            self._respond_within(app, request_id, found, size, f"{uri[:200]!r}")

        self._wire.when_done(future, done, "answering an MCP app's resources/read")

    def list(self, app: McpApp, request_id: Any, cursor: str | None) -> None:
        request = {
            "method": "resources/list",
            "params": {} if cursor is None else {"cursor": cursor},
        }
        self._wire.record("to_server", "resources/list", request, app.app_id)
        future = self._wire.connection.request(lambda client: client.list_resources(cursor=cursor))

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                self._apps.refuse(app, request_id, REFUSED, f"could not list resources: {error}")
                return
            found = future.result().model_dump(by_alias=True, exclude_none=True, mode="json")
            found.pop("resultType", None)
            self._wire.record("from_server", "response", found, app.app_id)
            self._respond_within(app, request_id, found, len(dumps(found)), "resources/list")

        self._wire.when_done(future, done, "answering an MCP app's resources/list")

    def forget(self, app: McpApp) -> None:
        """Its card closed: its budget goes with it."""
        with self._lock:
            self._budgets.pop(app.app_id, None)

    def _respond_within(
        self, app: McpApp, request_id: Any, found: dict[str, Any], size: int, what: str
    ) -> None:
        """Answer an app's read or listing, or refuse one past max_html_bytes: it would cross
        the comm to the page whole."""
        limit = self._max_bytes()
        if size > limit:
            self._apps.refuse(
                app, request_id, REFUSED, f"{what} is {size} bytes as JSON, {over(limit)}"
            )
            return
        self._apps.respond(app.app_id, request_id, result=found)


class ReadBudget:
    """One app's resources/read budget (READS_IN_FLIGHT, READS_PER_SECOND,
    READ_BYTES_PER_SECOND); used under AppReads' lock."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.refused = 0  # refusals since the last read that was let through
        self._started: deque[float] = deque()  # when each read of the last second started
        self._answered: deque[tuple[float, int]] = deque()  # (when, bytes) of the last second

    def start(self, now: float) -> str | None:
        """Start a read, or say which bound refuses it (nothing is started then)."""
        while self._started and self._started[0] <= now - 1.0:
            self._started.popleft()
        while self._answered and self._answered[0][0] <= now - 1.0:
            self._answered.popleft()
        answered = sum(size for _, size in self._answered)
        why = None
        if self.in_flight >= READS_IN_FLIGHT:
            why = (
                f"{self.in_flight} reads of this app are waiting for its server, this host's "
                f"bound (READS_IN_FLIGHT); read again once one is answered"
            )
        elif len(self._started) >= READS_PER_SECOND:
            why = f"this app started {len(self._started)} reads in the last second, this host's "
            why += "bound (READS_PER_SECOND); read again in a second"
        elif answered >= READ_BYTES_PER_SECOND:
            why = f"this app was sent {answered} bytes of reads in the last second, over this "
            why += f"host's {READ_BYTES_PER_SECOND} (READ_BYTES_PER_SECOND); read again in a second"
        if why is not None:
            self.refused += 1
            return why
        self.refused = 0
        self.in_flight += 1
        self._started.append(now)
        return None

    def done(self, now: float, size: int) -> None:
        self.in_flight -= 1
        self._answered.append((now, size))


def preview_read(found: dict[str, Any]) -> dict[str, Any]:
    """A resources/read result as the history keeps it: the text cut (the inspector cuts it
    again; the history need not hold megabytes)."""
    contents = []
    for content in found.get("contents", []):
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            text = content["text"]
            content = {**content, "text": text[:4096], "size": len(text)}
        contents.append(content)
    return {"result": {**found, "contents": contents}}
