"""An MCP server as an agent of the host (docs/mcp-apps.md): ``host.connect_mcp(...)``.

Connecting lists the server's tools (``tools/list``, with a deadline) and attaches the agent
``mcp.<name>`` as a session of the host's own (``Host.attach_session``: ``mcp.*`` is reserved,
H28, and each session is a new Identity, H27: a namesake server connected later inherits no
remembered decision, domain grant or cached resource of this one). Each tool an app may call
(``_meta.ui.visibility`` has ``"app"``; absent means model and app) becomes the capability
``mcp.<name>.<tool>``, callable by that agent only (Capability.callers: another agent gets
``unsupported``, C3, and no list shows it). Annotations are the server's claims, not proof
(``risk_of``): only a tool that says it is read-only and does not also say it is destructive
is ``user_confirmation`` (may be pre-allowed, or remembered for this session); every other
tool, one without annotations included (the spec's default is destructive), is
``system_permission``: asked every time.

So an app's ``tools/call`` is an ``app.call`` from the server's agent, through the broker:
its card, the ledger (C12), the audit (C13), policy. The capability's handler does not wait
for the server under the host's lock: it starts the call on the connection's loop and
returns a ticket; the app gets the tool's result (one ``mcp_response``) when both the
``app.result`` (allowed) and the server's answer are in. ``ui/open-link`` is an ``app.call``
of the built-in ``app.open_url`` from the same agent. The user's own ``server.open`` and
``server.call`` in a cell are the user's acts: no card.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import secrets
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from ..capabilities._capabilities import Capabilities, Capability, Policy, Risk
from ..core._bus import History, Subscription
from ..core._identity import Identity
from ..protocol import rules
from ..protocol._envelopes import new_envelope, now_iso, stamp, utc_now
from ..protocol._errors import CapabilityError, ProtocolError, UsageError
from ..protocol._json import dumps
from ..runtime._threads import HostThread, Worker
from ._apps import INVALID_PARAMS, MESSAGES_KEPT, METHOD_NOT_FOUND, REFUSED, McpApp, McpApps
from ._connection import McpConnection, McpFailure, json_of
from ._resources import MAX_HTML_BYTES, AppResource, ResourceRefused, app_resource, over
from ._stdio import MAX_LINE_BYTES, MAX_TOOLS

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from contextlib import AbstractContextManager

    from ..runtime._problems import Problems

__all__ = ["McpHost", "McpServer", "McpTool", "fit_name", "risk_of"]

MAX_RESULT_BYTES = 4 * 1024 * 1024  # a tool's result as JSON, at most (to the app, the history)
_ANSWER_BYTES = 2 * MAX_LINE_BYTES  # parsed before its size is told (HTTP: not bounded before)
# An app's resources/read needs no card, so what one app may have read for it is bounded
# (issue 22): at most READS_IN_FLIGHT waiting for its server, READS_PER_SECOND started and
# READ_BYTES_PER_SECOND answered in any second; past them a read is refused at once, with
# the bound, and the app's card says so. A resource is at most max_html_bytes (8 MiB by default).
READS_IN_FLIGHT = 2
READS_PER_SECOND = 8
READ_BYTES_PER_SECOND = 4 * 1024 * 1024
TICKETS_KEPT = 256  # started calls whose result a repeat (C12) may still be answered from
APP_CALL_SECONDS = 300.0  # an app's tools/call waits this long for the user at most (H20)
_SEGMENT = 63  # a capability name's segment, at most (rules.CAPABILITY_NAME_PATTERN)
_WORKER_WAIT = 5.0  # seconds close waits for its worker to finish what it was given
# Characters of a server's strings the host keeps and shows (sent to the view on every open)
MAX_TITLE = 200  # a tool's title, the server's version
MAX_DESCRIPTION = 2000  # a tool's description


class McpHost(Protocol):
    """What an MCP server needs of the Host (host/_host.py _McpPort provides it)."""

    @property
    def lock(self) -> AbstractContextManager[Any]: ...

    @property
    def conversation_id(self) -> str: ...

    @property
    def history(self) -> History: ...

    @property
    def capabilities(self) -> Capabilities: ...

    @property
    def policy(self) -> Policy: ...

    @property
    def mcp_apps(self) -> McpApps: ...

    @property
    def problems(self) -> Problems: ...

    def receive(self, raw: Any) -> ProtocolError | None: ...

    def attach_session(
        self, agent_id: str, dispatch: Callable[[dict[str, Any]], None], *, via: str
    ) -> tuple[Identity, Subscription]: ...

    def detach_session(self, identity: Identity, subscription: Subscription) -> None: ...

    def fail_waiting(self, capabilities: Collection[str], reason: str) -> None: ...

    def connections_changed(self) -> None: ...


def risk_of(annotations: dict[str, Any]) -> Risk:
    """A tool's risk from its annotations, which are the server's claims (issue 22): only
    ``readOnlyHint: true`` without ``destructiveHint: true`` may be remembered
    (user_confirmation); contradictory hints, no hints, or anything else is asked every time
    (system_permission), as the spec's defaults (destructiveHint true) say."""
    read_only = annotations.get("readOnlyHint") is True
    destructive = annotations.get("destructiveHint") is True
    return "user_confirmation" if read_only and not destructive else "system_permission"


def fit_name(text: str) -> str:
    """``text`` as one segment of a capability name: lower case, [a-z0-9_-], a letter first."""
    name = re.sub(r"[^a-z0-9_-]+", "-", text.lower()).strip("-_")
    if not name or not name[0].isalpha():
        name = "x" + name
    return name[:_SEGMENT]


@dataclass(frozen=True)
class McpTool:
    """A tool of an MCP server as this host sees it. ``capability`` is the name an app's
    call of it goes through the broker under, None when apps may not call it."""

    name: str
    title: str | None
    description: str | None
    resource_uri: str | None  # _meta.ui.resourceUri: its app, if it has one
    visibility: tuple[str, ...]  # "model", "app"
    read_only: bool  # the server's claims (annotations), not proof
    destructive: bool
    risk: Risk | None  # how the host asks for an app's call of it (``risk_of``); None: never
    capability: str | None

    @property
    def has_app(self) -> bool:
        return self.resource_uri is not None


class McpServer:
    """An MCP server connected to a host: ``tools``, ``open`` an app, ``call`` a tool,
    ``close``. ``status`` is ready or ended (``problem`` says why)."""

    def __init__(
        self,
        host: McpHost,
        server: Any,
        *,
        name: str | None = None,
        timeout: float = 30.0,
        max_html_bytes: int | None = None,
    ) -> None:
        if timeout <= 0:
            raise UsageError(f"[lineup] timeout must be more than 0 seconds, not {timeout}")
        if max_html_bytes is None:
            max_html_bytes = MAX_HTML_BYTES
        if max_html_bytes < 1:
            raise UsageError(f"[lineup] max_html_bytes must be at least 1, not {max_html_bytes}")
        self.max_html_bytes = max_html_bytes  # an app's HTML, and an app's resources/read
        self._host = host
        self._apps = host.mcp_apps
        self._lock = threading.Lock()
        self._tickets: dict[str, Future[Any]] = {}
        self._waiting: dict[str, list[tuple[McpApp, Any, str]]] = {}  # call_id -> requests
        self._ticket_ids = itertools.count(1)
        self._subscription: Subscription | None = None
        self.identity: Identity | None = None  # this session, as the host numbers it (H27)
        # What makes its apps' call_ids unpredictable: another agent's call_id cannot be
        # picked to match them (and is in another identity's scope anyway, H27).
        self._salt = secrets.token_hex(16)
        self._reads: dict[str, _Reads] = {}  # app_id -> its resources/read budget
        self._declared: list[str] = []
        self._claimed = False
        self._closing = False
        self.timeout = timeout
        self.tools: list[McpTool] = []
        # The server's answers arrive on the connection's loop thread; what they change in
        # the host and its view happens on the kernel's loop (a notebook), else on a worker
        # thread of this server's (a script, pytest), in order: never on the MCP loop.
        here = HostThread()
        self._worker = None if here.loop is not None else Worker("lineup-mcp-host")
        self._home = HostThread(self._worker) if self._worker is not None else here
        started = time.monotonic()  # the whole connect keeps to ``timeout``
        try:
            self._connection = McpConnection(
                server, timeout=timeout, on_end=self._ended, on_refused=self._refused
            )
        except BaseException:  # no SDK, or not a server: nothing started but the worker
            if self._worker is not None:
                self._worker.stop()
            raise
        try:
            self._connection.wait_ready()
            info = self._connection.server_info
            self.name = fit_name(name if name is not None else str(info.get("name") or "server"))
            self.version = str(info.get("version") or "")[:MAX_TITLE]
            self.agent_id = f"mcp.{self.name}"
            self.capability_prefix = f"{self.agent_id}."
            self._apps.claim(self.agent_id, self)
            self._claimed = True
            listed = self._list_tools(max(0.0, started + timeout - time.monotonic()))
            self.identity, self._subscription = host.attach_session(
                self.agent_id, self._dispatch, via=f"MCP server over {self._connection.via}"
            )
            self._declare(listed)
        except BaseException:
            self.close()
            raise

    # ---- connecting ----------------------------------------------------------------

    def _list_tools(self, timeout: float) -> list[dict[str, Any]]:
        self._record("to_server", "tools/list", {"method": "tools/list"})
        try:
            listed = self._connection.call(lambda client: client.list_tools(), timeout)
        except McpFailure as error:
            raise UsageError(f"[lineup] the MCP server did not list its tools: {error}") from None
        if len(listed.tools) > MAX_TOOLS:
            raise UsageError(
                f"[lineup] the MCP server lists {len(listed.tools)} tools, over this host's "
                f"{MAX_TOOLS}; it was not connected"
            )
        tools = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed.tools]
        self._record("from_server", "response", {"result": {"tools": _preview(tools)}})
        return tools

    def _declare(self, listed: list[dict[str, Any]]) -> None:
        """Each tool as an McpTool; those an app may call declared as capabilities."""
        room = rules.CAPABILITY_NAME_MAX_LENGTH - len(self.capability_prefix)
        taken: set[str] = set()
        for raw in listed:
            name = str(raw.get("name", ""))
            meta = raw.get("_meta")
            ui = meta.get("ui") if isinstance(meta, dict) else None
            ui = ui if isinstance(ui, dict) else {}
            uri = ui.get("resourceUri")
            visibility = ui.get("visibility")
            shown = (
                tuple(v for v in visibility if v in ("model", "app"))
                if isinstance(visibility, list)
                else ("model", "app")
            )
            annotations = raw.get("annotations")
            annotations = annotations if isinstance(annotations, dict) else {}
            risk = risk_of(annotations)
            base = segment = fit_name(name)[: max(1, room)]
            for count in itertools.count(2):  # two tools whose names fit to the same segment
                if segment not in taken:
                    break
                segment = f"{base[: max(1, room - 5)]}-{count}"
            taken.add(segment)
            capability = self.capability_prefix + segment if "app" in shown else None
            if capability is not None:
                capability = self._declare_one(capability, name, raw, risk)
            title, description = raw.get("title"), raw.get("description")
            tool = McpTool(
                name=name,
                title=title[:MAX_TITLE] if isinstance(title, str) else None,
                description=description[:MAX_DESCRIPTION] if isinstance(description, str) else None,
                resource_uri=uri if isinstance(uri, str) else None,
                visibility=shown,
                read_only=annotations.get("readOnlyHint") is True,  # what the server claims
                destructive=annotations.get("destructiveHint") is True,
                risk=risk if capability is not None else None,
                capability=capability,
            )
            self.tools.append(tool)

    def _declare_one(
        self, capability: str, tool: str, raw: dict[str, Any], risk: Risk
    ) -> str | None:
        """Declare one tool for its apps; a tool the registry refuses (its inputSchema is no
        JSON Schema) is refused alone, on record, and its apps may not call it."""
        schema = raw.get("inputSchema")
        title, description = raw.get("title"), raw.get("description")
        shown = title if isinstance(title, str) else description
        try:
            with self._host.lock:
                self._host.capabilities.declare(
                    Capability(
                        capability,
                        risk,
                        input_schema=schema if isinstance(schema, dict) else {"type": "object"},
                        handler=self._handler(tool),
                        description=(shown if isinstance(shown, str) else tool)[:500],
                        callers=frozenset({self.agent_id}),
                    )
                )
        except UsageError as error:
            self._host.history.add(
                "to_client",
                "refused",
                {"type": "mcp.tool", "server": self.name, "tool": tool[:200]},
                {"code": "invalid", "rule": "C7", "path": "$.inputSchema", "message": str(error)},
            )
            return None
        self._declared.append(capability)
        return capability

    def tool(self, name: str) -> McpTool:
        for tool in self.tools:
            if tool.name == name:
                return tool
        raise UsageError(
            f"[lineup] the MCP server {self.name!r} has no tool {name!r}; "
            f"its tools: {[t.name for t in self.tools]}"
        )

    @property
    def status(self) -> str:
        return self._connection.status

    @property
    def problem(self) -> str | None:
        return self._connection.problem

    def view(self) -> dict[str, Any]:
        """Its line in the host view's agents list (as an agent outside the kernel's, H42):
        who, how, its status, and why it ended unless the user closed it."""
        closed = self._closing
        return {
            "agent_id": getattr(self, "agent_id", None),
            "via": self._connection.via,
            "status": "closed" if closed else self.status,
            "problem": None if closed else self.problem,
        }

    @property
    def apps(self) -> list[McpApp]:
        """Its apps open in the host's view."""
        return [app for app in self._apps if app.server is self]

    # ---- the user's acts -----------------------------------------------------------

    def open(
        self, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> McpApp:
        """Show ``tool``'s app in the host's view at once and call the tool in the
        background (the user's act: no card); the app gets ``tool-input`` now and
        ``tool-result`` (or ``tool-cancelled``) when the server answered, or at the deadline:
        ``timeout`` seconds, the server's own by default."""
        found = self.tool(tool)
        if found.resource_uri is None:
            raise UsageError(
                f"[lineup] the tool {tool!r} has no app (_meta.ui.resourceUri); call it with "
                "server.call"
            )
        if "model" not in found.visibility:
            raise UsageError(
                f"[lineup] the tool {tool!r} is for its app only (_meta.ui.visibility "
                f"{list(found.visibility)}): an app calls it, not the host"
            )
        arguments = {} if arguments is None else dict(arguments)
        try:
            resource = self.resource(found.resource_uri)
        except UsageError as refused:  # shown in the host view as a card, not only here
            why = str(refused).removeprefix(f"[lineup] {self.name}: ")
            self._apps.refuse(self, found, arguments, found.resource_uri, why)
            raise
        app = self._apps.open(self, found, arguments, resource)
        future = self._tools_call(found.name, arguments, app, timeout)

        def done(future: Future[dict[str, Any]]) -> None:
            error = future.exception()
            if error is None:
                self._apps.settle(app, result=future.result())
            else:
                self._apps.settle(app, cancelled=str(error))

        future.add_done_callback(
            lambda done: app.answered(None if done.exception() else done.result())
        )
        self._when_done(future, done, "showing an MCP tool's result")
        return app

    def call(
        self, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Call ``tool`` as the user, wait for its answer (the CallToolResult as JSON), at
        most ``timeout`` seconds (the server's own by default)."""
        self.tool(tool)
        deadline = self.timeout if timeout is None else timeout
        future = self._tools_call(
            tool, {} if arguments is None else dict(arguments), None, deadline
        )
        try:
            return future.result(deadline + 5)  # the request's own deadline ends it first
        except McpFailure as error:
            raise UsageError(f"[lineup] {self.name}.{tool}: {error}") from None

    def resource(self, uri: str) -> AppResource:
        """The app resource ``uri``: read once per server session and uri, checked. Keyed by
        the session (H27), not by the name and version the server claims: a namesake
        server never gets this one's HTML."""
        assert self.identity is not None
        key = (self.identity, uri)
        cached = self._apps.resources.get(key)
        if cached is not None:
            return cached
        try:
            if not uri.startswith("ui://"):
                raise ResourceRefused(f"{uri!r} is not a ui:// resource; MCP Apps are ui://")
            self._record(
                "to_server", "resources/read", {"method": "resources/read", "params": {"uri": uri}}
            )
            try:
                read = self._connection.call(lambda client: client.read_resource(uri))
            except McpFailure as error:
                raise ResourceRefused(f"{uri!r} could not be read: {error}") from None
            found = read.model_dump(by_alias=True, exclude_none=True, mode="json")
            self._record("from_server", "response", _preview_read(found))
            resource = app_resource(uri, found, self.max_html_bytes)
        except ResourceRefused as refused:
            self._host.history.add(
                "to_client",
                "refused",
                {"type": "mcp.resource", "server": self.name, "uri": uri[:500]},
                {"code": "invalid", "rule": "MCP", "path": "$.contents", "message": str(refused)},
            )
            # Seen in the host view too, not only in the cell that asked.
            self._host.problems.add(
                f"MCP app {self.name} {uri[:200]!r}",
                str(refused),
                agent_id=self.agent_id,
                source="mcp",
            )
            raise UsageError(f"[lineup] {self.name}: {refused}") from None
        self._apps.resources[key] = resource
        return resource

    def close(self) -> None:
        """Close its apps, withdraw its tools' capabilities, end the session."""
        self._closing = True
        for app in self.apps:
            app.close()
        with self._host.lock:
            for name in self._declared:
                if name in self._host.capabilities:
                    self._host.capabilities.revoke(name)
                self._host.policy.clear(name)  # a namesake declares it again: not its (H27)
            self._declared = []
        if self._subscription is not None and self.identity is not None:
            self._host.detach_session(self.identity, self._subscription)
            self._subscription = None
        self._connection.close()
        if self._claimed:
            self._apps.release(self.agent_id, self)
            self._claimed = False
        if self._worker is not None:
            self._worker.stop()
            self._worker.join(_WORKER_WAIT)

    def _ended(self, reason: str) -> None:
        """The session ended: its apps say why; unless the user closed it, so does the host
        view's problems line (a server that dies with no app open is seen too)."""

        def ended() -> None:
            if self._declared:
                # Its tools' calls waiting for the user end failed (the answers audited),
                # their cards withdrawn: what they would run is gone.
                self._host.fail_waiting(
                    list(self._declared), f"the MCP server {self.name!r} ended: {reason}"[:4096]
                )
            self._apps.server_ended(self, reason)
            if not self._closing and self._claimed:
                self._host.problems.add(
                    f"MCP server {self.name!r}", reason, agent_id=self.agent_id, source="mcp"
                )
            self._host.connections_changed()

        self._home.call(ended, "an MCP server ended")
        if self._worker is not None:  # what comes after runs where it is handed over
            self._worker.stop()

    def _refused(self, message: str, detail: str) -> None:
        """A line of the server's refused (on its loop's thread): one problem, counted."""
        where = f"MCP server {getattr(self, 'name', '?')!r}"
        self._host.problems.add(
            where, message, detail, agent_id=getattr(self, "agent_id", None), source="mcp"
        )

    def settles_elsewhere(self) -> bool:
        """Whether the host's side of an answer runs on another thread than this one (a
        worker, or the kernel's loop seen from a thread of its own): then it may be waited
        for here. In a cell on the kernel's loop it may not: the cell holds that loop."""
        return self._worker is not None or threading.get_ident() != self._home.ident

    def _when_done(
        self, future: Future[Any], work: Callable[[Future[Any]], None], what: str
    ) -> None:
        """``work(future)`` once it is done, on the host's side (see ``_home``)."""
        future.add_done_callback(lambda done: self._home.call(lambda: work(done), what))

    # ---- the server's requests, recorded -------------------------------------------

    def _tools_call(
        self,
        tool: str,
        arguments: dict[str, Any],
        app: McpApp | None,
        timeout: float | None = None,
    ) -> Future[dict[str, Any]]:
        app_id = None if app is None else app.app_id
        params = {"name": tool, "arguments": arguments}
        self._record("to_server", "tools/call", {"method": "tools/call", "params": params}, app_id)
        raw = self._connection.request(lambda client: client.call_tool(tool, arguments), timeout)
        result: Future[dict[str, Any]] = Future()

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                self._record("from_server", "response", {"error": str(error)}, app_id)
                result.set_exception(
                    error if isinstance(error, McpFailure) else McpFailure(str(error))
                )
                return
            try:  # H2, as a LineUp message: nothing changed silently on the way to the app
                answer = json_of(future.result(), max_bytes=_ANSWER_BYTES)
            except McpFailure as refused:
                self._record("from_server", "response", {"error": str(refused)}, app_id)
                result.set_exception(refused)
                return
            answer.pop("resultType", None)
            size = len(dumps(answer))
            if size > MAX_RESULT_BYTES:  # the history, the feed and the page would hold it
                failure = f"the result is {size} bytes as JSON, over this host's {MAX_RESULT_BYTES}"
                self._record("from_server", "response", {"error": failure}, app_id)
                result.set_exception(McpFailure(failure))
                return
            self._record("from_server", "response", {"result": answer}, app_id)
            result.set_result(answer)

        raw.add_done_callback(done)
        return result

    def _record(
        self, direction: str, method: str, message: dict[str, Any], app_id: str | None = None
    ) -> None:
        self._apps.record(app_id, direction, method, message, server=getattr(self, "name", None))

    # ---- an app's requests (the view's mcp_request) ---------------------------------

    def app_request(
        self, app: McpApp, request_id: Any, method: str, params: dict[str, Any]
    ) -> None:
        """One request of ``app``; answered exactly once (``McpApps.respond``)."""
        if method == "tools/call":
            self._app_tools_call(app, request_id, params)
        elif method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str):
                self._error(app, request_id, INVALID_PARAMS, "ui/open-link needs a url string")
                return
            self._app_call(
                app, request_id, "app.open_url", {"url": url}, f"open a link: {url}", None
            )
        elif method == "ui/message":
            app.messages = [*app.messages, params][-MESSAGES_KEPT:]
            self._apps.note(app, f"message: {_text(params)}")
            self._apps.respond(app.app_id, request_id, result={})
        elif method == "ui/update-model-context":
            app.model_context = params
            self._apps.note(app, f"model context: {_text(params)}")
            self._apps.respond(app.app_id, request_id, result={})
        elif method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str):
                self._error(app, request_id, INVALID_PARAMS, "resources/read needs a uri string")
                return
            self._app_read(app, request_id, uri)
        elif method == "resources/list":  # hostCapabilities.serverResources: read and list
            cursor = params.get("cursor")
            if cursor is not None and not isinstance(cursor, str):
                self._error(app, request_id, INVALID_PARAMS, "resources/list: cursor is a string")
                return
            self._app_list(app, request_id, cursor)
        else:
            self._error(
                app,
                request_id,
                METHOD_NOT_FOUND,
                f"{method[:100]!r} is not a method this host answers",
            )

    def _error(
        self, app: McpApp, request_id: Any, code: int, message: str, data: Any = None
    ) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            error["data"] = data
        self._apps.respond(app.app_id, request_id, error=error)

    def _app_tools_call(self, app: McpApp, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        arguments = params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            self._error(
                app, request_id, INVALID_PARAMS, "tools/call needs a name and an arguments object"
            )
            return
        if self.status != "ready":
            self._error(app, request_id, REFUSED, f"the server has ended: {self.problem}")
            return
        tool = next((t for t in self.tools if t.name == name), None)
        if tool is None:
            self._error(app, request_id, INVALID_PARAMS, f"the server has no tool {name[:100]!r}")
            return
        # A tool apps may not call is asked for under the name it would have: the broker
        # answers unsupported (C3), on record, like any undeclared capability.
        capability = tool.capability or f"{self.capability_prefix}{fit_name(name)}"
        self._app_call(
            app, request_id, capability, arguments, f"the app {app.title!r} calls {name!r}", tool
        )

    def _app_call(
        self,
        app: McpApp,
        request_id: Any,
        capability: str,
        arguments: dict[str, Any],
        reason: str,
        tool: McpTool | None,
    ) -> None:
        """An app.call from this server's agent; the answer comes to ``_dispatch``."""
        call_id = _call_id(app, request_id, self._salt)
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
            sender=("agent", self.agent_id),
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
            self._error(
                app,
                request_id,
                REFUSED,
                refused.message[:500],
                {"rule": refused.rule, "status": "refused", "reason": refused.message[:500]},
            )

    def _handler(self, tool: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """The capability's handler: start the tool's call, return its ticket at once (the
        broker runs it under the host's lock; the server must never be waited for there)."""

        def start(arguments: dict[str, Any]) -> dict[str, Any]:
            if self.status != "ready":  # it ended between the card and the click
                raise CapabilityError(f"the MCP server {self.name!r} ended: {self.problem}")
            ticket = f"t{next(self._ticket_ids)}"
            with self._lock:
                self._tickets[ticket] = self._tools_call(tool, arguments, None)
                while len(self._tickets) > TICKETS_KEPT:  # the oldest: long answered
                    del self._tickets[next(iter(self._tickets))]
            return {"ticket": ticket, "tool": tool}

        return start

    def _dispatch(self, envelope: dict[str, Any]) -> None:
        """What the host sends this server's agent: app.results of its apps' calls."""
        if envelope.get("type") != "lineup.v1.app.result":
            return  # inventories and the rest: an MCP server has no use for them
        payload = envelope.get("payload", {})
        call_id = payload.get("call_id")
        with self._lock:
            owed = self._waiting.pop(call_id, [])
        for app, request_id, capability in owed:
            self._answer_app(app, request_id, capability, payload)

    def _answer_app(
        self, app: McpApp, request_id: Any, capability: str, payload: dict[str, Any]
    ) -> None:
        status = payload.get("status")
        if status != "completed":
            error = payload.get("error") or {}
            message = str(error.get("message", status))[:500]
            self._error(
                app,
                request_id,
                REFUSED,
                f"{status}: {message}",
                {"rule": error.get("rule"), "status": status, "reason": message},
            )
            if capability.startswith(self.capability_prefix):
                self._apps.note(app, f"{capability} {status}: {message}")
            return
        result = payload.get("result") or {}
        ticket = result.get("ticket")
        if not capability.startswith(self.capability_prefix):  # app.open_url: opened
            self._apps.respond(app.app_id, request_id, result={})
            return
        with self._lock:
            future = self._tickets.get(ticket) if isinstance(ticket, str) else None
        if future is None:
            self._error(app, request_id, REFUSED, "the call's result is no longer kept")
            return

        def done(future: Future[dict[str, Any]]) -> None:
            error = future.exception()
            if error is None:
                self._apps.respond(app.app_id, request_id, result=future.result())
            else:
                self._error(
                    app,
                    request_id,
                    REFUSED,
                    f"the server did not answer: {error}",
                    {"status": "failed", "reason": str(error)},
                )

        self._when_done(future, done, "answering an MCP app's tools/call")

    def _app_read(self, app: McpApp, request_id: Any, uri: str) -> None:
        with self._lock:
            reads = self._reads.setdefault(app.app_id, _Reads())
            refused = reads.start(_clock())
        if refused is not None:  # bounded before the server is asked (issue 22)
            if reads.refused == 1:  # once per run of refusals: the card says it, not 30 times
                self._apps.note(app, f"resources/read refused: {refused}")
            self._error(
                app,
                request_id,
                REFUSED,
                f"resources/read refused: {refused}",
                {"status": "refused", "reason": refused},
            )
            return
        self._record(
            "to_server",
            "resources/read",
            {"method": "resources/read", "params": {"uri": uri}},
            app.app_id,
        )
        future = self._connection.request(lambda client: client.read_resource(uri))

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                with self._lock:
                    reads.done(_clock(), 0)
                self._error(app, request_id, REFUSED, f"could not read {uri[:200]!r}: {error}")
                return
            found = future.result().model_dump(by_alias=True, exclude_none=True, mode="json")
            found.pop("resultType", None)
            self._record("from_server", "response", _preview_read(found), app.app_id)
            size = len(dumps(found))
            with self._lock:
                reads.done(_clock(), size)
            self._respond_within(app, request_id, found, size, f"{uri[:200]!r}")

        self._when_done(future, done, "answering an MCP app's resources/read")

    def _app_list(self, app: McpApp, request_id: Any, cursor: str | None) -> None:
        request = {
            "method": "resources/list",
            "params": {} if cursor is None else {"cursor": cursor},
        }
        self._record("to_server", "resources/list", request, app.app_id)
        future = self._connection.request(lambda client: client.list_resources(cursor=cursor))

        def done(future: Future[Any]) -> None:
            error = future.exception()
            if error is not None:
                self._error(app, request_id, REFUSED, f"could not list resources: {error}")
                return
            found = future.result().model_dump(by_alias=True, exclude_none=True, mode="json")
            found.pop("resultType", None)
            self._record("from_server", "response", found, app.app_id)
            self._respond_within(app, request_id, found, len(dumps(found)), "resources/list")

        self._when_done(future, done, "answering an MCP app's resources/list")

    def _respond_within(
        self, app: McpApp, request_id: Any, found: dict[str, Any], size: int, what: str
    ) -> None:
        """Answer an app's read or listing, or refuse one past max_html_bytes: it would cross
        the comm to the page whole."""
        if size > self.max_html_bytes:
            message = f"{what} is {size} bytes as JSON, {over(self.max_html_bytes)}"
            self._error(app, request_id, REFUSED, message)
            return
        self._apps.respond(app.app_id, request_id, result=found)

    def app_closed(self, app: McpApp) -> None:
        """Its card closed: requests still owed an answer are dropped (nobody to tell)."""
        with self._lock:
            self._reads.pop(app.app_id, None)
            for call_id, owed in list(self._waiting.items()):
                owed[:] = [entry for entry in owed if entry[0] is not app]
                if not owed:
                    del self._waiting[call_id]

    def __enter__(self) -> McpServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        name = getattr(self, "name", "?")
        return (
            f"McpServer({name!r}, {self.status}, tools={[t.name for t in self.tools]}"
            + (f", problem={self.problem!r}" if self.status == "ended" else "")
            + ")"
        )


def _call_id(app: McpApp, request_id: Any, salt: str) -> str:
    """The app.call's id: one per app, frame generation and JSON-RPC id, so a request sent
    again under its id is a repeat the ledger answers (C12), never a second run; hashed with
    the session's secret ``salt``, so no one outside can compute it (issue 22)."""
    digest = hashlib.sha256(f"{salt}:{request_id!r}".encode()).hexdigest()[:32]
    return f"{app.app_id}.g{app.generation}.{digest}"


_clock = time.monotonic  # the reads' seconds (a test freezes it, never sleeps)


class _Reads:
    """One app's resources/read budget (READS_IN_FLIGHT, READS_PER_SECOND,
    READ_BYTES_PER_SECOND); used under the server's lock."""

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


def _preview_read(found: dict[str, Any]) -> dict[str, Any]:
    """A resources/read result as the history keeps it: the text cut (the inspector cuts it
    again; the history need not hold megabytes)."""
    contents = []
    for content in found.get("contents", []):
        if isinstance(content, dict) and isinstance(content.get("text"), str):
            text = content["text"]
            content = {**content, "text": text[:4096], "size": len(text)}
        contents.append(content)
    return {"result": {**found, "contents": contents}}


def _preview(value: Any) -> Any:
    """A listing as the history keeps it: each string cut at MAX_DESCRIPTION characters (a
    4 MiB title is kept, and shown, as its start)."""
    if isinstance(value, str):
        return value if len(value) <= MAX_DESCRIPTION else value[:MAX_DESCRIPTION] + "…"
    if isinstance(value, list):
        return [_preview(item) for item in value]
    if isinstance(value, dict):
        return {key: _preview(item) for key, item in value.items()}
    return value
