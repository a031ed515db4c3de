"""An app's calls through the broker (docs/mcp-apps.md): its ``tools/call`` and
``ui/open-link`` as ``app.call`` envelopes from its server's agent, and the calls waiting for
their ``app.result``.

So an app's call gets what any agent's does: its card, the ledger (C12), the audit (C13),
policy. The capability's handler does not wait for the server under the host's lock: it
starts the call on the connection's loop and returns a ticket; the app gets the tool's result
(one ``mcp_response``) when both the ``app.result`` (allowed) and the server's answer are in.
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import Future
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol import rules
from ..protocol._envelopes import new_envelope, now_iso, stamp, utc_now
from ..protocol._errors import CapabilityError, ProtocolError
from ._apps import REFUSED

if TYPE_CHECKING:
    from ._apps import McpApp, McpApps
    from ._wire import Wire

__all__ = ["APP_CALL_SECONDS", "TICKETS_KEPT", "AppCalls", "CallsHost"]

TICKETS_KEPT = 256  # started calls whose result a repeat (C12) may still be answered from
APP_CALL_SECONDS = 300.0  # an app's tools/call waits this long for the user at most (H20)


class CallsHost(Protocol):
    """What an app's calls need of the Host (the server's McpHost gives it)."""

    @property
    def conversation_id(self) -> str: ...

    def receive(self, raw: Any) -> ProtocolError | None: ...


class AppCalls:
    """The app.calls of one server's apps, sent as its agent ``agent_id``, and the tickets of
    the tool calls the user allowed."""

    def __init__(
        self, host: CallsHost, apps: McpApps, wire: Wire, agent_id: str, server: str
    ) -> None:
        self._host = host
        self._apps = apps
        self._wire = wire
        self._agent_id = agent_id
        self._server = server  # its name, as the user reads it
        self.prefix = f"{agent_id}."  # of its tools' capabilities
        self._lock = threading.Lock()
        self._tickets: dict[str, Future[Any]] = {}
        self._waiting: dict[str, list[tuple[McpApp, Any, str]]] = {}  # call_id -> requests
        self._ticket_ids = itertools.count(1)
        # What makes its apps' call_ids unpredictable: another agent's call_id cannot be
        # picked to match them (and is in another identity's scope anyway, H27).
        self._salt = secrets.token_hex(16)

    def call(
        self,
        app: McpApp,
        request_id: Any,
        capability: str,
        arguments: dict[str, Any],
        reason: str,
    ) -> None:
        """An app.call from the server's agent; the answer comes to ``dispatch``."""
        call_id = self.call_id(app, request_id)
        with self._lock:
            self._waiting.setdefault(call_id, []).append((app, request_id, capability))
        envelope = new_envelope(
            "lineup.v1.app.call",
            {
                "call_id": call_id,
                "capability": capability,
                "reason": reason[: rules.MAX_REASON_LENGTH],
                "expires_at": stamp(utc_now() + timedelta(seconds=APP_CALL_SECONDS)),
                "arguments": arguments,
            },
            conversation_id=self._host.conversation_id,
            sender=("agent", self._agent_id),
            target=None,
            ts=now_iso(),
        )
        refused = self._host.receive(envelope)
        if refused is not None:  # refused before the broker (a C12 conflict): no app.result
            with self._lock:
                owed = self._waiting.get(call_id, [])
                if (app, request_id, capability) in owed:
                    owed.remove((app, request_id, capability))
                if not owed:
                    self._waiting.pop(call_id, None)
            self._apps.refuse(
                app,
                request_id,
                REFUSED,
                refused.message[:500],
                {"rule": refused.rule, "status": "refused", "reason": refused.message[:500]},
            )

    def call_id(self, app: McpApp, request_id: Any) -> str:
        """The app.call's id: one per app, frame generation and JSON-RPC id, so a request sent
        again under its id is a repeat the ledger answers (C12), never a second run; hashed
        with the session's secret salt, so no one outside can compute it (issue 22)."""
        digest = hashlib.sha256(f"{self._salt}:{request_id!r}".encode()).hexdigest()[:32]
        return f"{app.app_id}.g{app.generation}.{digest}"

    def handler(self, tool: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """The capability's handler: start the tool's call, return its ticket at once (the
        broker runs it under the host's lock; the server must never be waited for there)."""

        def start(arguments: dict[str, Any]) -> dict[str, Any]:
            connection = self._wire.connection
            if connection.status != "ready":  # it ended between the card and the click
                raise CapabilityError(
                    f"the MCP server {self._server!r} ended: {connection.problem}"
                )
            ticket = f"t{next(self._ticket_ids)}"
            with self._lock:
                self._tickets[ticket] = self._wire.call_tool(tool, arguments, None)
                while len(self._tickets) > TICKETS_KEPT:  # the oldest: long answered
                    del self._tickets[next(iter(self._tickets))]
            return {"ticket": ticket, "tool": tool}

        return start

    def dispatch(self, envelope: dict[str, Any]) -> None:
        """What the host sends the server's agent: app.results of its apps' calls."""
        if envelope.get("type") != "lineup.v1.app.result":
            return  # inventories and the rest: an MCP server has no use for them
        payload = envelope.get("payload", {})
        call_id = payload.get("call_id")
        with self._lock:
            owed = self._waiting.pop(call_id, [])
        for app, request_id, capability in owed:
            self._answer(app, request_id, capability, payload)

    def forget(self, app: McpApp) -> None:
        """Its card closed: requests still owed an answer are dropped (nobody to tell)."""
        with self._lock:
            for call_id, owed in list(self._waiting.items()):
                owed[:] = [entry for entry in owed if entry[0] is not app]
                if not owed:
                    del self._waiting[call_id]

    def _answer(
        self, app: McpApp, request_id: Any, capability: str, payload: dict[str, Any]
    ) -> None:
        status = payload.get("status")
        if status != "completed":
            error = payload.get("error") or {}
            message = str(error.get("message", status))[:500]
            self._apps.refuse(
                app,
                request_id,
                REFUSED,
                f"{status}: {message}",
                {"rule": error.get("rule"), "status": status, "reason": message},
            )
            if capability.startswith(self.prefix):
                self._apps.note(app, f"{capability} {status}: {message}")
            return
        result = payload.get("result") or {}
        ticket = result.get("ticket")
        if not capability.startswith(self.prefix):  # app.open_url: opened
            self._apps.respond(app.app_id, request_id, result={})
            return
        with self._lock:
            future = self._tickets.get(ticket) if isinstance(ticket, str) else None
        if future is None:
            self._apps.refuse(app, request_id, REFUSED, "the call's result is no longer kept")
            return

        def done(future: Future[dict[str, Any]]) -> None:
            error = future.exception()
            if error is None:
                self._apps.respond(app.app_id, request_id, result=future.result())
            else:
                self._apps.refuse(
                    app,
                    request_id,
                    REFUSED,
                    f"the server did not answer: {error}",
                    {"status": "failed", "reason": str(error)},
                )

        self._wire.when_done(future, done, "answering an MCP app's tools/call")
