"""The MCP apps open in one host, and what their views send (docs/mcp-apps.md).

An app is one call of a tool that has a ``ui://`` resource: the resource's HTML shown in the
host's view with the tool's arguments (``tool-input``) and, once the server answered, its
result (``tool-result``) or why there is none (``tool-cancelled``). Every change is one feed
op (_view_protocol.py FEED_OPS) told to the watchers in order, under this registry's lock;
the widget's feed keeps them for a view that reloads (the snapshot's ``mcp_apps``).

What a view sends about an app comes here: its JSON-RPC requests (answered by its server's
router, _requests.py, with exactly one ``mcp_response`` each), its traffic and what the page
refused of it (recorded in the host's history for the inspector), the user's grants of the
domains its CSP declares (kept per server session, resource, directive and domain while the
session lasts, audited, and the app's frame rebuilt: a new generation), and the user's close.

Grants and the resource cache key on the server session's Identity (H27), which the host
assigned, never on the name or version a server gives itself: a namesake server (another
session calling itself ``diary`` or ``weather 1.2.0``) starts with no grant and reads its
own HTML; both end with their session.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..capabilities._audit import Audit
from ..core._bus import History
from ..core._identity import Identity
from ..protocol._envelopes import now_iso
from ..protocol._errors import UsageError
from ..protocol._json import dumps
from ..runtime._watchers import Watchers
from ._resources import GRANTABLE, AppResource

if TYPE_CHECKING:
    from ._tools import McpTool

__all__ = ["INVALID_PARAMS", "METHOD_NOT_FOUND", "REFUSED", "AppServer", "McpApp", "McpApps"]

Op = dict[str, Any]
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
REFUSED = -32000  # refused by the user, or not allowed (data: rule, reason)
MESSAGES_KEPT = 100  # ui/message lines an app keeps
NOTES_KEPT = 20  # the newest notes an app's spec keeps, for a view that reloads
TRAFFIC_ITEMS = 50  # items of one mcp_traffic message recorded; the rest are counted
PREVIEW_CHARS = 4096  # of a traffic item's message, as the history keeps it


class AppServer(Protocol):
    """An app's server as this registry sees it (_server.py's McpServer): who it is, and
    where its apps' requests and closes go. The server imports this module, not the reverse."""

    @property
    def agent_id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def capability_prefix(self) -> str: ...

    @property
    def identity(self) -> Identity | None: ...

    def settles_elsewhere(self) -> bool: ...

    def app_request(
        self, app: McpApp, request_id: Any, method: str, params: dict[str, Any]
    ) -> None: ...

    def app_closed(self, app: McpApp) -> None: ...


class McpApp:
    """One open MCP app: what the user opened (``server.open``) and what became of it.

    ``result`` is the tool's CallToolResult as JSON once the server answered, ``cancelled``
    the reason when it could not (a deadline, the server gone, the app closed first);
    ``messages`` what the app said with ``ui/message``, ``model_context`` its last
    ``ui/update-model-context``: kept for whoever drives the conversation.
    """

    def __init__(
        self,
        registry: McpApps,
        app_id: str,
        server: AppServer,
        tool: McpTool,
        arguments: dict[str, Any],
        resource: AppResource,
        refused: str | None = None,
    ) -> None:
        self._registry = registry
        self.app_id = app_id
        self.server = server
        self.tool = tool
        self.arguments = arguments
        self.resource = resource
        self.result: dict[str, Any] | None = None
        self.cancelled: str | None = None
        self.messages: list[dict[str, Any]] = []
        self.model_context: dict[str, Any] | None = None
        self.generation = 1
        self.closed = False
        self.notes: list[str] = []
        self.refused = refused  # why its resource was not shown (McpApps.refuse)
        self._done = threading.Event()  # the server answered, or never will
        self._settled = threading.Event()  # and result / cancelled say so
        self._answer: dict[str, Any] | None = None  # the result, as soon as the server answered

    def answered(self, result: dict[str, Any] | None) -> None:
        """The server answered (``result``) or never will (None): what ``wait`` returns. Set
        on the connection's thread, at once; ``result`` and the view follow on the host's."""
        self._answer = result
        self._done.set()

    @property
    def title(self) -> str:
        return self.tool.title or self.tool.name

    def wait(self, timeout: float | None = None) -> dict[str, Any] | None:
        """Block until the tool answered or was cancelled (at most ``timeout`` s): its result,
        or None. Safe in a cell: the answer does not need the kernel's loop to arrive
        (``result`` and the view are updated on it, after the cell)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._done.wait(timeout)
        if self.server.settles_elsewhere():  # then result and cancelled are set here too
            self._settled.wait(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return self._answer if self._answer is not None else self.result

    def close(self) -> None:
        """Close the app's card (as the user's close button does)."""
        self._registry.close(self.app_id)

    def spec(self) -> dict[str, Any]:
        """The app as a view builds its frame from (_view_protocol.py McpAppSpec)."""
        resource = self.resource
        return {
            "app_id": self.app_id,
            "agent": self.server.agent_id,
            "server": self.server.name,
            "server_version": self.server.version,
            "tool": self.tool.name,
            "title": self.title,
            "resource_uri": resource.uri,
            "html": resource.html,
            "csp": {name: list(resource.csp[name]) for name in GRANTABLE},
            "granted": self._registry.granted(self),
            "refused_csp": [dict(item) for item in resource.refused_csp],
            "owners": dict(resource.owners),
            "prefers_border": resource.prefers_border,
            "arguments": self.arguments,
            "result": self.result,
            "cancelled": self.cancelled,
            "generation": self.generation,
            "notes": list(self.notes),
            "refused": self.refused,
        }

    def __repr__(self) -> str:
        state = "closed" if self.closed else "result" if self.result is not None else "open"
        if self.refused is not None:
            state = f"refused: {self.refused}"
        elif self.cancelled is not None:
            state = f"cancelled: {self.cancelled}"
        return f"McpApp({self.app_id!r}, {self.server.name}.{self.tool.name}, {state})"


class McpApps:
    """The MCP apps open in one host, by ``app_id``; each change is a feed op to the views."""

    def __init__(self, history: History, audit: Audit, conversation_id: str) -> None:
        self._history = history
        self._audit = audit
        self._conversation_id = conversation_id
        self._apps: dict[str, McpApp] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._watchers: Watchers[[Op]] = Watchers("mcp app")
        # (server session, resource uri, directive) -> the domains the user granted (H27)
        self._grants: dict[tuple[Identity | None, str, str], list[str]] = {}
        # (server session, uri) -> the checked resource (docs/mcp-apps.md, H27)
        self.resources: dict[tuple[Identity, str], AppResource] = {}
        self._servers: dict[str, AppServer] = {}  # agent id -> the live server speaking as it

    def claim(self, agent_id: str, server: AppServer) -> None:
        """One live server per agent id: a second would take over the first's tools."""
        with self._lock:
            if agent_id in self._servers:
                raise UsageError(
                    f"[lineup] an MCP server is connected as {agent_id!r} already: close it, "
                    "or connect this one with name=..."
                )
            self._servers[agent_id] = server

    def release(self, agent_id: str, server: AppServer) -> None:
        """The server's session ended: its grants and cached resources go with it (H27)."""
        with self._lock:
            if self._servers.get(agent_id) is server:
                del self._servers[agent_id]
            for key in [k for k in self._grants if k[0] == server.identity]:
                del self._grants[key]
            for cached in [k for k in self.resources if k[0] == server.identity]:
                del self.resources[cached]

    def watch(self, watcher: Callable[[Op], None]) -> Callable[[], None]:
        return self._watchers.add(watcher)

    def _emit(self, op: Op) -> None:
        self._watchers.notify(op)

    def specs(self) -> list[dict[str, Any]]:
        with self._lock:
            return [app.spec() for app in self._apps.values()]

    def get(self, app_id: str) -> McpApp | None:
        return self._apps.get(app_id)

    def __iter__(self) -> Any:
        return iter(list(self._apps.values()))

    # ---- what the servers do (_server.py) ------------------------------------------

    def open(
        self,
        server: AppServer,
        tool: McpTool,
        arguments: dict[str, Any],
        resource: AppResource,
    ) -> McpApp:
        """A new app, shown at once with its arguments (``tool-input``)."""
        with self._lock:
            app_id = f"mcp-{next(self._ids)}"
            app = self._apps[app_id] = McpApp(self, app_id, server, tool, arguments, resource)
            self._emit({"op": "mcp_open", "spec": app.spec()})
            self._notify(app, "tool-input", {"arguments": arguments})
            return app

    def refuse_resource(
        self, server: AppServer, tool: McpTool, arguments: dict[str, Any], uri: str, reason: str
    ) -> McpApp:
        """An app whose resource was refused (too large, not an app): a card in the host view
        that says why, where the user looks for the app, not only the cell's error. It has no
        frame and its tool is not called; the user closes it as any app's card."""
        empty = AppResource(uri, "", {name: [] for name in GRANTABLE})
        with self._lock:
            app_id = f"mcp-{next(self._ids)}"
            app = McpApp(self, app_id, server, tool, arguments, empty, refused=reason)
            app.cancelled = reason  # wait() returns at once: there will be no result
            app._done.set()
            app._settled.set()
            self._apps[app_id] = app
            self._emit({"op": "mcp_open", "spec": app.spec()})
            return app

    def settle(
        self, app: McpApp, *, result: dict[str, Any] | None = None, cancelled: str | None = None
    ) -> None:
        """The tool answered (``tool-result``), or will not (``tool-cancelled``, the reason)."""
        with self._lock:
            if app.result is not None or app.cancelled is not None:
                return
            if result is not None:
                app.result = result
                if not app.closed:
                    self._notify(app, "tool-result", result)
            else:
                app.cancelled = cancelled or "cancelled"
                if not app.closed:
                    self._notify(app, "tool-cancelled", {"reason": app.cancelled})
            app._done.set()
            app._settled.set()

    def _notify(self, app: McpApp, what: str, params: dict[str, Any]) -> None:
        self._emit(
            {
                "op": "mcp_notify",
                "app_id": app.app_id,
                "method": f"ui/notifications/{what}",
                "params": params,
            }
        )

    def note(self, app: McpApp, text: str) -> None:
        """A line the app's card shows (raw: the view shows it with honest_text)."""
        with self._lock:
            app.notes = [*app.notes, text][-NOTES_KEPT:]
            if not app.closed:
                self._emit({"op": "mcp_note", "app_id": app.app_id, "text": text})

    def respond(
        self,
        app_id: str,
        request_id: Any,
        *,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """The one answer to an app's request (a JSON-RPC result or error)."""
        op: Op = {"op": "mcp_response", "app_id": app_id, "id": request_id}
        if error is not None:
            op["error"] = error
        else:
            op["result"] = {} if result is None else result
        # Not recorded here: the page's traffic (``traffic``) records the app's side of the
        # exchange once, as the app saw it; the kernel records the server's side.
        with self._lock:
            app = self._apps.get(app_id)
            if app is None or app.closed:
                return  # closed meanwhile: nobody to answer
            self._emit(op)

    def refuse(
        self, app: McpApp, request_id: Any, code: int, message: str, data: Any = None
    ) -> None:
        """The one answer to an app's request, a JSON-RPC error (``data``: rule, reason)."""
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self.respond(app.app_id, request_id, error=error)

    def record(
        self,
        app_id: str | None,
        direction: str,
        method: str,
        message: Any,
        server: str | None = None,
    ) -> None:
        """One JSON-RPC message in the host's history, for the inspector (kind ``mcp``)."""
        app = self._apps.get(app_id) if app_id is not None else None
        self._history.add(
            "to_agent" if direction in ("to_server", "from_app") else "to_client",
            "mcp",
            {
                "type": f"mcp.{method[:100]}",
                "server": server if server is not None else app.server.name if app else None,
                "app_id": app_id,
                "dir": direction,
                "jsonrpc": message,
            },
        )

    def server_ended(self, server: AppServer, reason: str) -> None:
        for app in self:
            if app.server is server and not app.closed:
                self.note(app, f"the MCP server {server.name!r} ended: {reason}")
                self.settle(app, cancelled=f"the server ended: {reason}")

    # ---- grants (the user's, per server, resource, directive and domain) ------------

    def granted(self, app: McpApp) -> dict[str, list[str]]:
        uri = app.resource.uri
        return {
            directive: [
                domain
                for domain in self._grants.get((app.server.identity, uri, directive), [])
                if domain in app.resource.csp[directive]
            ]
            for directive in GRANTABLE
        }

    # ---- what the views send (widgets/_widget.py) ------------------------------------

    def request(self, app_id: str, request_id: Any, method: str, params: dict[str, Any]) -> None:
        """An app's JSON-RPC request: its server answers (one ``mcp_response``)."""
        app = self._apps.get(app_id)
        problem = None
        if app is None or app.closed:
            problem = f"no MCP app {app_id[:100]!r} is open"
        elif type(request_id) not in (str, int) or len(str(request_id)) > 200:
            problem = (
                "a request's id is a string or an integer (JSON-RPC), of at most 200 characters"
            )
        if app is None or problem is not None:
            self.record(app_id, "from_app", method, {"id": request_id, "method": method})
            self._emit(
                {
                    "op": "mcp_response",
                    "app_id": app_id,
                    "id": request_id,
                    "error": {"code": INVALID_PARAMS, "message": problem or "no app"},
                }
            )
            return
        app.server.app_request(app, request_id, method, params)  # recorded by the page

    def traffic(self, app_id: str, items: list[Any]) -> None:
        """The app's JSON-RPC traffic as the page saw it: each item recorded (bounded)."""
        if app_id not in self._apps:
            return
        for item in items[:TRAFFIC_ITEMS]:
            if not isinstance(item, dict) or item.get("dir") not in ("to_app", "from_app"):
                continue
            message = item.get("message")
            method = message.get("method") if isinstance(message, dict) else None
            if message is not None and len(text := dumps(message)) > PREVIEW_CHARS:
                message = {"preview": text[:PREVIEW_CHARS], "size": len(text)}
            elif message is None:
                preview = item.get("preview")
                size = item.get("size")
                message = {
                    "preview": str(preview)[:PREVIEW_CHARS],
                    "size": size if isinstance(size, int) else None,
                }
            self.record(
                app_id,
                item["dir"],
                method if isinstance(method, str) else "response",
                message,
            )
        if len(items) > TRAFFIC_ITEMS:
            self.record(app_id, "from_app", "dropped", {"items": len(items) - TRAFFIC_ITEMS})

    def refused(self, app_id: str, report: dict[str, Any]) -> None:
        """What the page refused of an app: recorded as a refusal and shown on its card."""
        app = self._apps.get(app_id)
        message = str(report.get("message", ""))[:500]
        code = str(report.get("code", "refused"))[:100]
        self._history.add(
            "to_agent",
            "refused",
            {"type": "mcp.refused", "app_id": app_id},
            {
                "code": code,
                "rule": "MCP",
                "path": str(report.get("path", "$"))[:200],
                "message": message,
            },
        )
        if app is not None:
            self.note(app, f"refused ({code}): {message}")

    def grant(self, app_id: str, directive: str, domain: str, allow: bool) -> None:
        """The user's answer on a grant card: kept, audited, and the app's frame rebuilt."""
        app = self._apps.get(app_id)
        if app is None or app.closed:
            return
        if directive not in GRANTABLE or domain not in app.resource.csp[directive]:
            self.note(
                app, f"not granted: {directive[:40]} {domain[:200]!r} is not declared by the app"
            )
            return
        key = (app.server.identity, app.resource.uri, directive)
        with self._lock:
            domains = self._grants.setdefault(key, [])
            changed = (domain in domains) != allow
            if allow and domain not in domains:
                domains.append(domain)
            elif not allow and domain in domains:
                domains.remove(domain)
            self._audit_grant(app, directive, domain, allow)
            if not changed:
                return
            for other in self._apps.values():  # every open app of that resource gets it
                if (other.server.identity, other.resource.uri) == key[:2] and not other.closed:
                    other.generation += 1
                    self._emit({"op": "mcp_open", "spec": other.spec()})

    def _audit_grant(self, app: McpApp, directive: str, domain: str, allow: bool) -> None:
        try:
            self._audit.record(
                at=now_iso(),
                conversation_id=self._conversation_id,
                event="mcp_grant",
                capability=f"{app.server.capability_prefix}csp",
                agent=app.server.agent_id,
                session=None if app.server.identity is None else app.server.identity.session,
                reason=f"{directive} {domain} for {app.resource.uri}",
                decision="allow" if allow else "deny",
                decided_by="user",
                status="granted" if allow else "revoked",
            )
        except Exception:  # as the broker: a failing audit is logged, the user's act stands
            import logging

            logging.getLogger("lineup_jupyter").exception("[lineup] the audit could not be written")

    def close(self, app_id: str) -> None:
        """The user closed the app's card: its call, if still running, is cancelled."""
        with self._lock:
            app = self._apps.pop(app_id, None)
            if app is None:
                return
            app.closed = True
            self._emit({"op": "mcp_close", "app_id": app_id})
        self.settle(app, cancelled="the app was closed")
        app.server.app_closed(app)
