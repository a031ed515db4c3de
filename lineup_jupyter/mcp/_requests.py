"""What an MCP app's view may ask of the host (the view's ``mcp_request``), one handler a
method, in one table: METHODS (the view's messages have theirs, widgets/_widget.py). A method
that is not in it is answered -32601; a handler answers its request exactly once, now or when
the server or the user did (McpApps.respond, McpApps.refuse).

A new method: its handler here and its row in the table; what it needs of the server comes
from the parts this router is given (AppCalls, AppReads), never from the server itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..protocol._json import dumps
from ._apps import INVALID_PARAMS, MESSAGES_KEPT, METHOD_NOT_FOUND, REFUSED
from ._tools import fit_name

if TYPE_CHECKING:
    from ._apps import McpApp, McpApps
    from ._calls import AppCalls
    from ._reads import AppReads
    from ._tools import McpTool
    from ._wire import Wire

__all__ = ["AppRequest", "AppRequests"]


@dataclass(frozen=True)
class AppRequest:
    """One JSON-RPC request of an app, owed one answer."""

    app: McpApp
    id: Any
    params: dict[str, Any]


class AppRequests:
    """The router of one server's apps' requests."""

    def __init__(
        self,
        apps: McpApps,
        wire: Wire,
        tools: Callable[[], list[McpTool]],
        calls: AppCalls,
        reads: AppReads,
    ) -> None:
        self._apps = apps
        self._wire = wire
        self._tools = tools  # the server's tools, as listed when it connected
        self._calls = calls
        self._reads = reads
        self.methods: dict[str, Callable[[AppRequest], None]] = {
            "tools/call": self._tools_call,
            "ui/open-link": self._open_link,
            "ui/message": self._message,
            "ui/update-model-context": self._model_context,
            # hostCapabilities.serverResources: read and list
            "resources/read": self._read,
            "resources/list": self._list,
        }

    def handle(self, app: McpApp, request_id: Any, method: str, params: dict[str, Any]) -> None:
        """One request of ``app``; answered exactly once (``McpApps.respond``)."""
        handler = self.methods.get(method)
        if handler is None:
            message = f"{method[:100]!r} is not a method this host answers"
            self._apps.refuse(app, request_id, METHOD_NOT_FOUND, message)
            return
        handler(AppRequest(app, request_id, params))

    def _invalid(self, request: AppRequest, message: str) -> None:
        self._apps.refuse(request.app, request.id, INVALID_PARAMS, message)

    def _tools_call(self, request: AppRequest) -> None:
        app, params = request.app, request.params
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            self._invalid(request, "tools/call needs a name and an arguments object")
            return
        connection = self._wire.connection
        if connection.status != "ready":
            message = f"the server has ended: {connection.problem}"
            self._apps.refuse(app, request.id, REFUSED, message)
            return
        tool = next((t for t in self._tools() if t.name == name), None)
        if tool is None:
            self._invalid(request, f"the server has no tool {name[:100]!r}")
            return
        # A tool apps may not call is asked for under the name it would have: the broker
        # answers unsupported (C3), on record, like any undeclared capability.
        capability = tool.capability or f"{self._calls.prefix}{fit_name(name)}"
        self._calls.call(app, request.id, capability, arguments, _summary(app.title, name))

    def _open_link(self, request: AppRequest) -> None:
        url = request.params.get("url")
        if not isinstance(url, str):
            self._invalid(request, "ui/open-link needs a url string")
            return
        reason = f"the app {_quoted(request.app.title)} asks to open the link {_quoted(url)}"
        self._calls.call(request.app, request.id, "app.open_url", {"url": url}, reason)

    def _message(self, request: AppRequest) -> None:
        app = request.app
        app.messages = [*app.messages, request.params][-MESSAGES_KEPT:]
        self._apps.note(app, f"message: {_text(request.params)}")
        self._apps.respond(app.app_id, request.id, result={})

    def _model_context(self, request: AppRequest) -> None:
        app = request.app
        app.model_context = request.params
        self._apps.note(app, f"model context: {_text(request.params)}")
        self._apps.respond(app.app_id, request.id, result={})

    def _read(self, request: AppRequest) -> None:
        uri = request.params.get("uri")
        if not isinstance(uri, str):
            self._invalid(request, "resources/read needs a uri string")
            return
        self._reads.read(request.app, request.id, uri)

    def _list(self, request: AppRequest) -> None:
        cursor = request.params.get("cursor")
        if cursor is not None and not isinstance(cursor, str):
            self._invalid(request, "resources/list: cursor is a string")
            return
        self._reads.list(request.app, request.id, cursor)


def _text(params: dict[str, Any]) -> str:
    """What a ui/message or model-context update says, as one line (bounded)."""
    content = params.get("content")
    if isinstance(content, list):
        texts = [c.get("text") for c in content if isinstance(c, dict)]
        text = " ".join(t for t in texts if isinstance(t, str))
    else:
        text = ""
    if not text:
        text = dumps(params)
    return text[:1000]


def _summary(title: str, tool: str) -> str:
    """An app call's reason, as the host writes it: the server's names in JSON quotes, so a
    title holding a quote, a line break or "Risk: ..." stays one quoted name on the card
    (which says the summary is the host's and the quoted names the server's, issue 22 §2)."""
    return f"the app {_quoted(title)} calls the tool {_quoted(tool)}"


def _quoted(name: str) -> str:
    return json.dumps(name, ensure_ascii=False)
