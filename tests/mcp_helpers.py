"""What the MCP tests share: the feed ops as a view gets them, waited for on a signal."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from lineup_jupyter import Host

from .conftest import feed, view_sends

Op = dict[str, Any]
DEADLINE = 30.0  # seconds a test waits for a signal at most (never a duration it asserts)


class View:
    """The host's widget as a view sees it: every message it was sent (``sent``), the MCP
    feed ops among them (``ops``), and ``wait`` for an op to arrive (a condition, no sleep)."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self.widget = feed(host)
        self._changed = threading.Condition()
        sent: list[Any] = self.widget.sent

        def send(content: Any, buffers: Any = None) -> None:
            with self._changed:
                sent.append(json.loads(json.dumps(content)))
                self._changed.notify_all()

        self.widget.send = send
        self.sent = sent

    @property
    def ops(self) -> list[Op]:
        with self._changed:
            return [
                op
                for message in self.sent
                if message["kind"] == "feed"
                for op in message["ops"]
                if op["op"].startswith("mcp_")
            ]

    def wait(self, match: Callable[[Op], bool], count: int = 1) -> list[Op]:
        def found() -> list[Op]:
            return [op for op in self.ops if match(op)]

        with self._changed:
            assert self._changed.wait_for(lambda: len(found()) >= count, DEADLINE), self.ops
        return found()

    def responses(self, app_id: str, request_id: Any) -> list[Op]:
        return [
            op
            for op in self.ops
            if op["op"] == "mcp_response" and op["app_id"] == app_id and op["id"] == request_id
        ]

    def wait_response(self, app_id: str, request_id: Any) -> Op:
        (response,) = self.wait(
            lambda op: (
                op["op"] == "mcp_response" and op["app_id"] == app_id and op["id"] == request_id
            )
        )
        return response

    def request(self, app_id: str, request_id: Any, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {
            "kind": "mcp_request",
            "app_id": app_id,
            "id": request_id,
            "method": method,
        }
        if params is not None:
            message["params"] = params
        view_sends(self.widget, message)

    def send(self, message: dict[str, Any]) -> None:
        view_sends(self.widget, message)
