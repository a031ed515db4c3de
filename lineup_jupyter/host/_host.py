"""The client side of LineUp in the kernel: the composition root, owns surfaces, answers.

``Host.receive`` and ``Host.subscribe`` are the public contract. Bad agent input never raises
into the caller: the host answers with exactly one refusal (a ``lineup.v1.error``, or an
``app.result`` for an ``app.call`` whose ``call_id`` it could read) and changes nothing.
The Host builds the registries, the bus, the broker and the app center, and hands each part
what it needs: the intake (_intake.py) checks and acts on agent envelopes, the inventory
(_inventory.py) makes and resends client.inventory, the user's acts (_user_acts.py) check
and relay a surface's events, a close and an answer. The host runs without a browser; its
widget (``host.widget``, shown by displaying the host) only watches it and relays what the
browser says.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..agents._remote import ENDED
from ..appcenter._apps import AppCenter, Change
from ..appcenter._trust import BundleTrust
from ..capabilities._audit import Audit
from ..capabilities._broker import Broker, Decision, PendingCall
from ..capabilities._builtins import builtin_capabilities
from ..capabilities._capabilities import ANY_OBJECT, Capabilities, Capability, Policy, Risk
from ..core._bus import Bus, History, Subscription
from ..core._components import ComponentChange, Components, ComponentsView
from ..core._identity import KERNEL, Identities
from ..core._surfaces import StateRevision, SurfaceChange, Surfaces, SurfacesView
from ..core._views import views
from ..mcp._apps import McpApps
from ..protocol import (
    UiClosePayload,
    rules,
)
from ..protocol._envelopes import new_envelope, now_iso
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._validate import (
    DEFAULT_LIMITS,
    Limits,
    readable_id,
)
from ..runtime._problems import Problems
from ..runtime._store import data_dir as _data_dir
from ..runtime._watchers import Watchers
from ._intake import Intake
from ._inventory import Inventory
from ._user_acts import UserActs

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping, Sequence

    from ..agents._agent import Agent
    from ..agents._listener import WebSocketListener
    from ..agents._remote import RemoteAgent, SessionHost
    from ..agents._stdio import ProcessAgent
    from ..agents._websocket import WebSocketAgent
    from ..mcp._server import McpServer

__all__ = ["Host", "session_port"]

HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])  # what @host.capability returns

_CLOSED_AGENTS_SHOWN = 10  # ended connections still listed in the view, the latest


class Host:
    """A LineUp client for one conversation, living in the kernel.

    >>> host = Host(conversation_id="conv_01")
    >>> unsubscribe = host.subscribe(print)     # every client->agent envelope
    >>> host.receive(ui_open_envelope)          # an agent->client envelope: dict, text or model
    """

    def __init__(
        self,
        conversation_id: str,
        *,
        limits: Limits | None = None,
        history_size: int = 1000,
        state_history: int = 20,
        client_id: str = "lineup-jupyter",
        min_height: int = 40,
        max_height: int = 800,
        events_per_second: int = 50,
        data_dir: str | os.PathLike[str] | None = None,
        artifacts_dir: str | os.PathLike[str] | None = None,
        trust: BundleTrust | None = None,
    ) -> None:
        for name, value in (("conversation_id", conversation_id), ("client_id", client_id)):
            if readable_id(value) is None:
                raise UsageError(f"[lineup] {name} {value!r} must match {rules.ID_PATTERN} (M1)")
        self.conversation_id = conversation_id
        self.client_id = client_id
        self.limits = limits or DEFAULT_LIMITS
        # What the user's own code raised (handlers, subscribers): shown, never swallowed.
        self.problems = Problems()
        self._bus = Bus(
            conversation_id, history_size=history_size, on_handler_error=self.problems.report
        )
        if state_history < 0:
            raise UsageError(f"[lineup] state_history must be 0 or more, not {state_history}")
        # The registries change only through the host (its lock, history and bus); users
        # get read-only views of them (host.surfaces, host.components).
        self._surfaces = Surfaces(self.limits, state_history=state_history)
        self._components = Components()
        self._surfaces_view = self._surfaces.view()
        self._components_view = self._components.view()
        self._lock = threading.RLock()
        self._identities = Identities()  # agent id -> the endpoint speaking for it (H41)
        self._widget: Any = None
        self._inspector: Any = None
        # Every agent outside the kernel (shown in the view, closed by close()), and the
        # listeners this host opened.
        self._remote_agents: list[RemoteAgent] = []
        self._listeners: list[WebSocketListener] = []
        self._connection_watchers: Watchers[[]] = Watchers("connection")
        self._sessions = _SessionPort(self)  # what the agents' sessions see of the host
        self._view_config = {
            "min_height": min_height,
            "max_height": max_height,
            "events_per_second": events_per_second,
            "event_burst": 2 * events_per_second,
        }
        # The capability broker (docs/capabilities.md). artifact.save writes under
        # artifacts_dir, read at each save; the audit lives in the data dir (_store.py).
        self.artifacts_dir = Path(artifacts_dir or Path.cwd() / "artifacts")
        self._broker = Broker(
            self,
            Audit(_data_dir(data_dir) / "audit.sqlite3", conversation_id),
            send=self._send,
            on_visibility_changed=self._capabilities_changed,
        )
        # The app center (docs/apps.md): installed apps, their cache, the inventory revision.
        self.apps = AppCenter(
            _data_dir(data_dir),
            on_change=self._apps_changed,
            max_bundle_bytes=self.limits.max_bundle_bytes,
            # Which inline bundles may open (H37): the argument, else the data dir's
            # trust.json, else dev mode; read once, as a policy must not shift mid-conversation.
            trust=trust if trust is not None else BundleTrust.load(_data_dir(data_dir)),
        )
        self._inventory = Inventory(self.apps, self._broker, self._send)
        for builtin in builtin_capabilities(lambda: self.artifacts_dir):
            self._broker.capabilities.declare(builtin, schema_checked=True)
        self._intake = Intake(
            conversation_id=conversation_id,
            limits=self.limits,
            lock=self._lock,
            bus=self._bus,
            identities=self._identities,
            surfaces=self._surfaces,
            components=self._components,
            apps=self.apps,
            broker=self._broker,
            send=self._send,
        )
        # MCP servers as agents of this host, their apps in its view (docs/mcp-apps.md).
        self._mcp_apps = McpApps(self._bus.history, self._broker.audit, conversation_id)
        self._mcp_servers: list[McpServer] = []
        self._user = UserActs(
            lock=self._lock,
            bus=self._bus,
            surfaces=self._surfaces,
            components=self._components,
            intake=self._intake,
            send=self._send,
        )

    @property
    def surfaces(self) -> SurfacesView:
        """The open surface instances by id, read-only (U1): a change goes through
        ``receive`` or an Agent, which take the lock, record it and tell the agents."""
        return self._surfaces_view

    @property
    def components(self) -> ComponentsView:
        """The shown components, oldest first, read-only (``get``, ``values``, ``in``)."""
        return self._components_view

    @property
    def lock(self) -> threading.RLock:
        """The host's re-entrant lock. Every call on the host takes it; hold it to make
        several calls one step, with nothing from an agent, a transport or a timer in between
        (a surface watcher reads a state and reopens the surface under it)."""
        return self._lock

    # ---- the contract ----------------------------------------------------------------

    def receive(self, raw: Any) -> ProtocolError | None:
        """Take one agent->client envelope (dict, JSON text or bytes, or a model).

        Returns None when accepted, or the ProtocolError that refused it; never raises for bad
        input. A refused message changes nothing and gets exactly one answer on the bus.
        The kernel speaks for the agent ids it sends as (H41): an id a connection outside the
        kernel speaks for is refused here, and the kernel's ids are refused to connections.
        """
        return self._receive(raw, KERNEL)

    def _receive(self, raw: Any, endpoint: object) -> ProtocolError | None:
        """``receive`` from one endpoint: the kernel, or a connection (_remote.py)."""
        return self._intake.receive(raw, endpoint)

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Subscription:
        """Call ``callback(envelope_dict)`` for every client->agent envelope this host sends,
        starting with the current ``client.inventory``, at once and to it alone (C1: the
        session is set up when someone listens); every later revision follows like any
        envelope. Returns a Subscription; call it (or ``.close()``) to unsubscribe.
        """
        with self._lock:  # nothing is sent between the subscription and its inventory
            subscription = self._bus.subscribe(callback)
            self._send("lineup.v1.client.inventory", self.inventory, to=None, only=subscription)
        return subscription

    # ---- what the client sends -------------------------------------------------------

    def _send(
        self,
        type_: str,
        payload: dict[str, Any],
        *,
        to: str | None,
        endpoint: object = None,
        only: Subscription | None = None,
    ) -> dict[str, Any]:
        message = new_envelope(
            type_,
            payload,
            conversation_id=self.conversation_id,
            sender=("client", self.client_id),
            target=None if to is None else ("agent", to),
            ts=now_iso(),
        )
        self._bus.send(message, endpoint=endpoint, only=only)
        return message

    def surface_message(self, instance_id: str, message: Any) -> ProtocolError | None:
        """A message a surface frame sent upward (S4, U7-U9); the frame decides the instance.

        Valid ones reach the instance's agent as ``ui.event`` (U8). Refused ones are recorded
        and reported to that agent as ``lineup.v1.error``, and returned, never raised (like
        ``receive``: the frame's code is at fault, not the caller's); nothing else changes.
        """
        return self._user.surface_message(instance_id, message)

    def user_event(self, instance_id: str, event: str, data: dict[str, Any] | None = None) -> None:
        """What ``LineUpSurface.event(event, data)`` in surface ``instance_id`` does (U7, U8).
        Raises the ProtocolError when refused (recorded and told to the agent, as a frame's)."""
        error = self.surface_message(
            instance_id,
            {
                "namespace": rules.SURFACE_NAMESPACE,
                "type": "event",
                "event": event,
                "data": {} if data is None else data,
            },
        )
        if error is not None:
            raise error

    def user_close(self, instance_id: str) -> None:
        """The user closed a surface with the host's close button: it closes, the agent hears
        ``ui.event`` 'close' (U10). Raises the ProtocolError when it is not open (recorded)."""
        self._user.user_close(instance_id)

    def answer(self, component_id: str, status: str = "answered", value: Any = None) -> None:
        """The user's answer to a question (choice, confirm, input), or their cancel (H14).

        The view calls this; a notebook or a test may too. The answer is checked against the
        question here (the kernel decides) and reaches the agent that asked, exactly once; a
        refused one is recorded and raised as a ProtocolError (the question stays open).
        """
        self._user.answer(component_id, status, value)

    # ---- inventory (C1, C2, C4) ------------------------------------------------------

    @property
    def inventory(self) -> dict[str, Any]:
        """The latest client.inventory payload (made on first use; remade under a new revision
        when another kernel changed the app center meanwhile)."""
        return self._inventory.current()

    def attach_agent(
        self, agent_id: str, dispatch: Callable[[dict[str, Any]], None]
    ) -> Subscription:
        """Speak for ``agent_id`` in the kernel (H41: the id is the kernel's from now on, a
        connection that claims it is refused) and give ``dispatch`` every envelope addressed
        to it or to every agent. What an in-kernel ``Agent`` is made with; raises UsageError
        when a connection already speaks for that id."""
        with self._lock:
            try:
                self._identities.claim(agent_id, KERNEL)
            except ProtocolError as error:
                raise UsageError(f"[lineup] {error.message}") from None
            return self._bus.subscribe(dispatch, agent_id=agent_id, endpoint=KERNEL)

    def send_inventory(self, to: str | None = None) -> dict[str, Any]:
        """Send the current client.inventory (to one agent, or to all); returns the envelope."""
        with self._lock:
            return self._send("lineup.v1.client.inventory", self.inventory, to=to)

    # ---- capabilities: the broker (docs/capabilities.md) -----------------------------

    def capability(
        self,
        name: str,
        *,
        risk: Risk,
        input_schema: dict[str, Any] | None = None,
        version: str = "1.0",
        description: str | None = None,
    ) -> Callable[[HandlerT], HandlerT]:
        """Decorator: declare a capability whose handler is the decorated function.

        The handler gets the call's arguments (already checked against ``input_schema``) and
        returns a JSON object (or None) as the result; raising CapabilityError fails the call
        with its message. Declaring is never authorizing: the policy and the user decide.
        """

        def declare(handler: HandlerT) -> HandlerT:
            with self._lock:
                self._broker.capabilities.declare(
                    Capability(
                        name,
                        risk,
                        version=version,
                        input_schema=dict(ANY_OBJECT) if input_schema is None else input_schema,
                        handler=handler,
                        description=(handler.__doc__ or "").strip()
                        if description is None
                        else description,
                    )
                )
            return handler

        return declare

    @property
    def capabilities(self) -> Capabilities:
        """The registry: declared capabilities (``revoke(name)`` withdraws one)."""
        return self._broker.capabilities

    @property
    def policy(self) -> Policy:
        """What runs without asking, what is refused, and the session's remembered grants."""
        return self._broker.policy

    @property
    def pending_calls(self) -> list[PendingCall]:
        """Calls waiting for the user, oldest first."""
        with self._lock:
            return list(self._broker.pending.values())

    def decide(
        self,
        call_id: str,
        decision: Decision,
        *,
        remember: bool = False,
        typed_name: str | None = None,
        outcome: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Decide a waiting call as the user ('allow', 'deny' or 'cancel'); returns the
        app.result payload the agent got. The view calls this on a click; so can a test.

        ``remember`` keeps an allow for the session (user_confirmation only, C8);
        ``typed_name`` is the restricted tier's extra act (H23); ``outcome`` is what the
        browser reported for a capability that runs there (H21).
        """
        with self._lock:
            return self._broker.decide(
                call_id, decision, remember=remember, typed_name=typed_name, outcome=outcome
            )

    @property
    def audit(self) -> Audit:
        """The audit trail (C13): ``query(...)`` (this conversation's rows unless
        ``conversation_id=`` says another, or None for all), ``verify()`` (the whole chain);
        shows as a table of this conversation's rows."""
        return self._broker.audit

    def send_app_list(self, to: str | None = None) -> dict[str, Any]:
        """Send app.list, the capabilities an agent may request (C7); returns the envelope."""
        with self._lock:
            return self._send(
                "lineup.v1.app.list", {"capabilities": self._broker.list_entries()}, to=to
            )

    def _capabilities_changed(self) -> None:
        # The broker's callback: it is made before the inventory it tells.
        self._inventory.capabilities_changed()

    def _apps_changed(self, app_id: str, change: Change) -> None:
        """The app center changed (C1): a disabled or removed app's open surfaces close and
        their agents hear ui.event 'close' (H35); agents that saw the inventory get a new one."""
        with self._lock:
            if change in ("disabled", "removed"):
                for instance_id, (generation, declared_app, _) in list(
                    self._intake.declared.items()
                ):
                    instance = self._surfaces.get(instance_id)
                    if instance is None or instance.generation != generation:
                        del self._intake.declared[instance_id]  # closed or replaced since
                        continue
                    if declared_app != app_id:
                        continue
                    del self._intake.declared[instance_id]
                    self._surfaces.close(
                        None,
                        UiClosePayload.model_construct(instance_id=instance_id, reason=change),
                    )
                    self._send(
                        "lineup.v1.ui.event",
                        {
                            "instance_id": instance_id,
                            "event": "close",
                            "data": {"reason": f"app_{change}", "app_id": app_id},
                        },
                        to=instance.owner,
                    )
            self._inventory.apps_changed()

    @property
    def trust(self) -> BundleTrust:
        """The bundle policy: which inline bundles may open (H37, docs/apps.md)."""
        return self.apps.trust

    # ---- for the notebook and the inspector -----------------------------------------

    @property
    def history(self) -> History:
        """Every envelope in both directions, refusals included, oldest first (bounded)."""
        return self._bus.history

    def state_history(self, instance_id: str) -> list[StateRevision]:
        """The last ``state_history`` states of a surface instance (open or closed), oldest
        first, each with its revision: what the inspector shows by revision."""
        return self._surfaces.state_history(instance_id)

    @property
    def inspector(self) -> Any:
        """The inspector's widget (made on first use): the conversation's history, refusals,
        calls, inventory revisions and surface states in a cell (docs/agents.md)."""
        if self._inspector is None:
            self._inspector = views().inspector(self)
        return self._inspector

    def watch_surfaces(self, watcher: Callable[[SurfaceChange], None]) -> Callable[[], None]:
        """Call ``watcher(change)`` after each open, patch or close; returns the unwatch."""
        return self._surfaces.watch(watcher)

    def watch_components(self, watcher: Callable[[ComponentChange], None]) -> Callable[[], None]:
        """Call ``watcher(change)`` after each show, update, answer or removal; returns the
        unwatch."""
        return self._components.watch(watcher)

    def report_refused(self, instance_id: str, report: dict[str, Any]) -> ProtocolError:
        """What the browser refused from a surface (S4, U7, U9, a flood): record it and tell
        the instance's agent, so whoever writes the surface can see why nothing happened."""
        return self._user.report_refused(instance_id, report)

    @property
    def mcp_apps(self) -> McpApps:
        """The MCP apps open in this host's view (docs/mcp-apps.md)."""
        return self._mcp_apps

    # ---- in the notebook -----------------------------------------------------------

    @property
    def widget(self) -> Any:
        """The host's anywidget (made on first use); displaying the host displays it."""
        if self._widget is None:
            self._widget = views().host(
                self, self._broker.views, trust=self.trust.summary(), **self._view_config
            )
        return self._widget

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def connect_agent(self, agent_id: str) -> Agent:
        """An in-kernel agent of this host: helpers instead of hand-written envelopes."""
        from ..agents._agent import Agent

        return Agent(self, agent_id)

    def __repr__(self) -> str:
        return f"Host(conversation_id={self.conversation_id!r}, surfaces={list(self._surfaces)})"

    # ---- agents outside the kernel (docs/agents.md) -----------------------------------

    def connect_process(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        cwd: str | os.PathLike[str] | None = None,
        env: Mapping[str, str] | None = None,
        agent_id: str | None = None,
    ) -> ProcessAgent:
        """Start an agent process that speaks JSON lines on stdin/stdout (H40).

        ``env`` adds to the kernel's environment. ``agent_id`` is the agent it speaks for;
        without it, the first envelope's ``sender.id`` decides (H41). ``close()`` ends it.
        """
        from ..agents._stdio import ProcessAgent

        return ProcessAgent(self._sessions, argv, cwd=cwd, env=env, agent_id=agent_id)

    def connect_websocket(
        self,
        url: str,
        *,
        agent_id: str | None = None,
        headers: Mapping[str, str] | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> WebSocketAgent:
        """Connect to an agent serving WebSocket at ``url``; reconnects when dropped (H42).
        A ``wss://`` URL is checked against the system's certificate authorities, or against
        ``ssl_context`` (an agent with a self-signed or private certificate)."""
        from ..agents._websocket import WebSocketAgent

        return WebSocketAgent(
            self._sessions, url, agent_id=agent_id, headers=headers, ssl_context=ssl_context
        )

    def listen_websocket(self, port: int = 0, *, token: str | None = None) -> WebSocketListener:
        """Let agents connect on 127.0.0.1:``port`` with ``token`` (made up if None) (H43)."""
        from ..agents._listener import WebSocketListener

        listener = WebSocketListener(self._sessions, port, token=token)
        self._listeners.append(listener)
        return listener

    def connect_mcp(
        self, server: Any, *, name: str | None = None, timeout: float = 30.0
    ) -> McpServer:
        """Connect to an MCP server and list its tools (docs/mcp-apps.md); it becomes the
        agent ``mcp.<name>``, and ``server.open(tool, arguments)`` shows a tool's app here.

        ``server``: a command as a list (stdio), an ``http(s)://`` URL (streamable HTTP),
        ``mcp.StdioServerParameters``, or a server object (in-process). ``name`` replaces
        the server's own; ``timeout`` is every request's deadline, in seconds. Needs the
        ``mcp`` extra: ``pip install 'lineup-jupyter[mcp]'``.
        """
        from ..mcp._server import McpServer

        connected = McpServer(self, server, name=name, timeout=timeout, on_change=self._mcp_changed)
        with self._lock:
            ended = [s for s in self._mcp_servers if s.status == "ended"]
            for gone in ended[: max(0, len(ended) + 1 - _CLOSED_AGENTS_SHOWN)]:
                self._mcp_servers.remove(gone)
            self._mcp_servers.append(connected)
        self._mcp_changed()
        return connected

    def _mcp_changed(self) -> None:
        if self._connection_watchers:
            self._connection_watchers.notify()

    @property
    def mcp_servers(self) -> list[McpServer]:
        """The MCP servers this host connected to, the ended ones too (the last few), with
        their ``status`` and ``problem``; the host's view lists them with the agents."""
        return list(self._mcp_servers)

    @property
    def remote_agents(self) -> list[RemoteAgent]:
        """The agents outside the kernel: processes, WebSockets, and those that connected to
        a listener; the ended ones too (the last few), with their ``status`` and ``problem``."""
        return list(self._remote_agents)

    def watch_connections(self, watcher: Callable[[], None]) -> Callable[[], None]:
        """Call ``watcher()`` when an agent outside the kernel connects, is named, or ends."""
        return self._connection_watchers.add(watcher)

    def close(self) -> None:
        """Close every agent process, WebSocket and listener this host started, and its
        audit and app registry files. Closing twice does nothing; a closed host is not used
        again. (A kernel that exits ends its agent processes anyway.)"""
        with self._lock:
            agents, self._remote_agents = self._remote_agents, []
            listeners, self._listeners = self._listeners, []
            servers, self._mcp_servers = self._mcp_servers, []
        for server in servers:
            server.close()
        for agent in agents:  # an ended agent's close does nothing more
            agent.close()
        for listener in listeners:
            listener.close()
        self.audit.close()
        self.apps.close()

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _SessionPort:
    """The host as a session for an agent outside the kernel sees it (_remote.SessionHost):
    sessions and transports depend on this small interface, never on the Host class."""

    def __init__(self, host: Host) -> None:
        self._host = host

    @property
    def limits(self) -> Limits:
        return self._host.limits

    @property
    def lock(self) -> threading.RLock:
        return self._host.lock

    @property
    def identities(self) -> Identities:
        return self._host._identities

    @property
    def inventory(self) -> dict[str, Any]:
        return self._host.inventory

    def receive(self, raw: str | bytes, endpoint: object) -> None:
        self._host._receive(raw, endpoint)

    def send(
        self, type_: str, payload: dict[str, Any], *, to: str | None, endpoint: object
    ) -> None:
        self._host._send(type_, payload, to=to, endpoint=endpoint)

    def record_refused(self, shown: dict[str, Any], error: dict[str, Any]) -> None:
        self._host._bus.record_incoming(shown, error)

    def subscribe(
        self, callback: Callable[[dict[str, Any]], None], endpoint: object
    ) -> Subscription:
        return self._host._bus.subscribe(callback, endpoint=endpoint)

    def track(self, session: RemoteAgent) -> None:
        host = self._host
        with host._lock:  # a listener's agents arrive on its threads
            ended = [a for a in host._remote_agents if a.status in ENDED]
            for gone in ended[: max(0, len(ended) - _CLOSED_AGENTS_SHOWN)]:
                host._remote_agents.remove(gone)
            host._remote_agents.append(session)
        self.changed()

    def changed(self) -> None:
        if self._host._connection_watchers:
            self._host._connection_watchers.notify()


def session_port(host: Host) -> SessionHost:
    """What a session for an agent outside the kernel is given of ``host`` (the in-memory
    transport's sessions are made by lineup_jupyter.testing)."""
    return host._sessions
