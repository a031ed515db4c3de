"""An MCP server as an agent of the host (docs/mcp-apps.md): ``host.connect_mcp(...)``.

Connecting lists the server's tools (``tools/list``, with a deadline) and attaches the agent
``mcp.<name>`` as a session of the host's own (``Host.attach_session``: ``mcp.*`` is reserved,
H28, and each session is a new Identity, H27: a namesake server connected later inherits no
remembered decision, domain grant or cached resource of this one). Each tool an app may call
becomes the capability ``mcp.<name>.<tool>`` (_tools.py), callable by that agent only
(Capability.callers: another agent gets ``unsupported``, C3, and no list shows it).

The user's own ``server.open`` and ``server.call`` in a cell are the user's acts: no card.
What the server's apps ask goes through the router (_requests.py): their calls through the
broker (_calls.py), their reads bounded (_reads.py); every request to the server is recorded
and its answer acted on at the host's side (_wire.py).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, Protocol

from ..capabilities._capabilities import Capabilities, Capability, Policy, Risk
from ..core._bus import History, Subscription
from ..core._identity import Identity
from ..protocol._errors import ProtocolError, UsageError
from ..runtime._threads import HostThread, Worker
from ._apps import McpApp, McpApps
from ._calls import AppCalls
from ._connection import McpConnection, McpFailure
from ._reads import AppReads, preview_read
from ._requests import AppRequests
from ._resources import MAX_HTML_BYTES, AppResource, ResourceRefused, app_resource
from ._stdio import MAX_TOOLS
from ._tools import MAX_TITLE, McpTool, fit_name, preview, tools_of
from ._wire import Wire

if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from contextlib import AbstractContextManager

    from ..runtime._problems import Problems

__all__ = ["McpHost", "McpServer"]

_WORKER_WAIT = 5.0  # seconds close waits for its worker to finish what it was given


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
        self._subscription: Subscription | None = None
        self.identity: Identity | None = None  # this session, as the host numbers it (H27)
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
        self._wire = Wire(self._connection, self._apps, self._home)
        try:
            self._connection.wait_ready()
            info = self._connection.server_info
            self.name = fit_name(name if name is not None else str(info.get("name") or "server"))
            self.version = str(info.get("version") or "")[:MAX_TITLE]
            self.agent_id = f"mcp.{self.name}"
            self.capability_prefix = f"{self.agent_id}."
            self._wire.server_name = self.name
            self._apps.claim(self.agent_id, self)
            self._claimed = True
            listed = self._list_tools(max(0.0, started + timeout - time.monotonic()))
            self._calls = AppCalls(host, self._apps, self._wire, self.agent_id, self.name)
            self._reads = AppReads(self._apps, self._wire, lambda: self.max_html_bytes)
            self._requests = AppRequests(
                self._apps, self._wire, lambda: self.tools, self._calls, self._reads
            )
            self.identity, self._subscription = host.attach_session(
                self.agent_id, self._calls.dispatch, via=f"MCP server over {self._connection.via}"
            )
            self.tools = tools_of(listed, self.capability_prefix, self._declare_one)
        except BaseException:
            self.close()
            raise

    # ---- connecting ----------------------------------------------------------------

    def _list_tools(self, timeout: float) -> list[dict[str, Any]]:
        self._wire.record("to_server", "tools/list", {"method": "tools/list"})
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
        self._wire.record("from_server", "response", {"result": {"tools": preview(tools)}})
        return tools

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
                        handler=self._calls.handler(tool),
                        description=(shown if isinstance(shown, str) else tool)[:500],
                        described_by="requester",
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
            self._apps.refuse_resource(self, found, arguments, found.resource_uri, why)
            raise
        app = self._apps.open(self, found, arguments, resource)
        future = self._wire.call_tool(found.name, arguments, app, timeout)

        def done(future: Future[dict[str, Any]]) -> None:
            error = future.exception()
            if error is None:
                self._apps.settle(app, result=future.result())
            else:
                self._apps.settle(app, cancelled=str(error))

        future.add_done_callback(
            lambda done: app.answered(None if done.exception() else done.result())
        )
        self._wire.when_done(future, done, "showing an MCP tool's result")
        return app

    def call(
        self, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Call ``tool`` as the user, wait for its answer (the CallToolResult as JSON), at
        most ``timeout`` seconds (the server's own by default)."""
        self.tool(tool)
        deadline = self.timeout if timeout is None else timeout
        future = self._wire.call_tool(
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
            self._wire.record(
                "to_server", "resources/read", {"method": "resources/read", "params": {"uri": uri}}
            )
            try:
                read = self._connection.call(lambda client: client.read_resource(uri))
            except McpFailure as error:
                raise ResourceRefused(f"{uri!r} could not be read: {error}") from None
            found = read.model_dump(by_alias=True, exclude_none=True, mode="json")
            self._wire.record("from_server", "response", preview_read(found))
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

    # ---- its apps' requests (McpApps hands them over) -------------------------------

    def app_request(
        self, app: McpApp, request_id: Any, method: str, params: dict[str, Any]
    ) -> None:
        """One request of ``app``; answered exactly once (_requests.py)."""
        self._requests.handle(app, request_id, method, params)

    def app_closed(self, app: McpApp) -> None:
        """Its card closed: requests still owed an answer are dropped (nobody to tell)."""
        self._calls.forget(app)
        self._reads.forget(app)

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
