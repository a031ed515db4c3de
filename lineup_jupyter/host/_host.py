"""The client side of LineUp in the kernel: the composition root, owns surfaces, answers.

``Host.receive`` and ``Host.subscribe`` are the public contract. Bad agent input never raises
into the caller: the host answers with exactly one refusal (a ``lineup.v1.error``, or an
``app.result`` for an ``app.call`` whose ``call_id`` it could read) and changes nothing.
The Host builds the registries, the bus, the broker and the app center, and hands each part
what it needs: the intake (_intake.py) checks and acts on agent envelopes, the inventory
(_inventory.py) makes and resends client.inventory, the user's acts (_user_acts.py) check
and relay a surface's events, a close and an answer, the outbox (_outbox.py) stamps what the
client sends, the connections (_connections.py) hold the agents outside the kernel. The host
runs without a browser; its widget (``host.widget``, shown by displaying the host) only
watches it and relays what the browser says, through its port (_view_port.py).
"""

from __future__ import annotations

import os
import threading
import warnings
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..appcenter._apps import AppCenter, Change
from ..appcenter._trust import BundleTrust
from ..capabilities._audit import Audit
from ..capabilities._broker import Broker, Decision, PendingCall
from ..capabilities._builtins import builtin_capabilities
from ..capabilities._capabilities import Capabilities, HandlerT, Policy, Risk
from ..core._bus import Bus, History, Subscription
from ..core._components import ComponentChange, Components, ComponentsView
from ..core._identity import KERNEL, Identities, Identity
from ..core._surfaces import StateRevision, SurfaceChange, Surfaces, SurfacesView
from ..mcp._apps import McpApps
from ..protocol import rules
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._validate import (
    DEFAULT_LIMITS,
    Limits,
    readable_id,
)
from ..runtime._problems import Problems
from ..runtime._store import data_dir as _data_dir
from ._connections import Connections
from ._intake import Intake
from ._inventory import Inventory
from ._outbox import Outbox
from ._user_acts import UserActs
from ._view_port import ViewPort

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


def _for_the_widget(name: str) -> Callable[..., Any]:
    """A call moved to the widget's port (_view_port.py), kept a while with a warning."""

    def moved(host: Host, *args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"Host.{name} is the host widget's own call, not public API; it will be removed",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(host._views, name)(*args, **kwargs)

    moved.__name__ = moved.__qualname__ = name
    return moved


def _check_ids(**ids: str) -> None:
    for name, value in ids.items():
        if readable_id(value) is None:
            raise UsageError(f"[lineup] {name} {value!r} must match {rules.ID_PATTERN} (M1)")


def _app_center(
    data_dir: str | os.PathLike[str] | None,
    trust: BundleTrust | None,
    limits: Limits,
    *,
    on_change: Callable[[str, Change], None],
) -> AppCenter:
    """The app center (docs/apps.md): installed apps, their cache, the inventory revision.
    Which inline bundles may open (H37): ``trust``, else the data dir's trust.json, else dev
    mode; read once, as a policy must not shift mid-conversation."""
    directory = _data_dir(data_dir)
    if trust is None:
        trust = BundleTrust.load(directory)
    return AppCenter(
        directory, on_change=on_change, max_bundle_bytes=limits.max_bundle_bytes, trust=trust
    )


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
        _check_ids(conversation_id=conversation_id, client_id=client_id)
        self.conversation_id = conversation_id
        self.client_id = client_id
        self.limits = limits or DEFAULT_LIMITS
        # What the user's own code raised (handlers, subscribers): shown, never swallowed.
        self.problems = Problems()
        self._bus = Bus(
            conversation_id, history_size=history_size, on_handler_error=self.problems.report
        )
        self._send = Outbox(self._bus, conversation_id, client_id).send  # every part's Send
        # The registries change only through the host (its lock, history and bus); users
        # get read-only views of them (host.surfaces, host.components).
        self._surfaces = Surfaces(self.limits, state_history=state_history)
        self._components = Components()
        self._surfaces_view = self._surfaces.view()
        self._components_view = self._components.view()
        self._lock = threading.RLock()
        # agent id -> the endpoint speaking for it (H41) and who that is (H27, H28); when a
        # binding ends, so do its remembered grants
        self._identities = Identities(
            client_id, on_ended=lambda identity: self._broker.policy.forget(identity)
        )
        # Agents outside the kernel, listeners, MCP servers (in the view, closed by close()).
        self._connections = Connections(self._lock)
        self._sessions = _SessionPort(self)
        # The capability broker (docs/capabilities.md). artifact.save writes under
        # artifacts_dir, read at each save; the audit lives in the data dir (_store.py).
        self.artifacts_dir = Path(artifacts_dir or Path.cwd() / "artifacts")
        self._broker = Broker(
            self,
            Audit(_data_dir(data_dir) / "audit.sqlite3", conversation_id),
            send=self._send,
            # made before the inventory it tells of a change
            on_visibility_changed=lambda: self._inventory.capabilities_changed(),
        )
        self.apps = _app_center(data_dir, trust, self.limits, on_change=self._apps_changed)
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
        self._user = UserActs(
            lock=self._lock,
            bus=self._bus,
            surfaces=self._surfaces,
            components=self._components,
            intake=self._intake,
            send=self._send,
        )
        rates = {"events_per_second": events_per_second, "event_burst": 2 * events_per_second}
        config = {"min_height": min_height, "max_height": max_height, **rates}
        consent = self._broker.views  # the consent cards' side of the broker
        self._views = ViewPort(self, self.trust, self._user, self._connections, consent, config)

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
        """Take one agent->client envelope (dict, JSON text or bytes, or a model). Returns
        None when accepted, or the ProtocolError that refused it; never raises for bad input.
        A refused message changes nothing and gets exactly one answer on the bus. The kernel
        speaks for the agent ids it sends as (H41): an id a connection outside the kernel
        speaks for is refused here, and the kernel's ids are refused to connections."""
        return self._intake.receive(raw, KERNEL)

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Subscription:
        """Call ``callback(envelope_dict)`` for every client->agent envelope this host sends,
        starting with the current ``client.inventory``, at once and to it alone (C1: the
        session is set up when someone listens); every later revision follows like any
        envelope. Returns a Subscription; call it (or ``.close()``) to unsubscribe."""
        with self._lock:  # nothing is sent between the subscription and its inventory
            subscription = self._bus.subscribe(callback)
            self._send("lineup.v1.client.inventory", self.inventory, to=None, only=subscription)
        return subscription

    def surface_message(self, instance_id: str, message: Any) -> ProtocolError | None:
        """A message a surface frame sent upward (S4, U7-U9); the frame decides the instance.
        Valid ones reach the instance's agent as ``ui.event`` (U8). Refused ones are recorded
        and reported to that agent as ``lineup.v1.error``, and returned, never raised (like
        ``receive``: the frame's code is at fault, not the caller's); nothing else changes."""
        return self._user.surface_message(instance_id, message)

    def user_event(self, instance_id: str, event: str, data: dict[str, Any] | None = None) -> None:
        """What ``LineUpSurface.event(event, data)`` in surface ``instance_id`` does (U7, U8).
        Raises the ProtocolError when refused (recorded and told to the agent, as a frame's)."""
        self._user.user_event(instance_id, event, data)

    def user_close(self, instance_id: str) -> None:
        """The user closed a surface with the host's close button: it closes, the agent hears
        ``ui.event`` 'close' (U10). Raises the ProtocolError when it is not open (recorded)."""
        self._user.user_close(instance_id)

    def answer(self, component_id: str, status: str = "answered", value: Any = None) -> None:
        """The user's answer to a question (choice, confirm, input), or their cancel (H14).
        The view calls this; a notebook or a test may too. The answer is checked against the
        question here (the kernel decides) and reaches the agent that asked, exactly once; a
        refused one is recorded and raised as a ProtocolError (the question stays open)."""
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
        """Decorator: declare a capability whose handler is the decorated function. The
        handler gets the call's arguments (already checked against ``input_schema``) and
        returns a JSON object (or None) as the result; raising CapabilityError fails the call
        with its message. Declaring is never authorizing: the policy and the user decide."""
        return self._broker.capabilities.decorator(
            name,
            risk=risk,
            input_schema=input_schema,
            version=version,
            description=description,
            lock=self._lock,
        )

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
        browser reported for a capability that runs there (H21)."""
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

    def _apps_changed(self, app_id: str, change: Change) -> None:
        # The app center's (C1): the app's surfaces close (H35), then a new inventory (C2).
        with self._lock:
            self._intake.app_changed(app_id, change)
            self._inventory.apps_changed()

    @property
    def trust(self) -> BundleTrust:
        """The bundle policy: which inline bundles may open (H37, docs/apps.md)."""
        return self.apps.trust

    # ---- in the notebook: the history, the inspector, the widget ----------------------
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
        return self._views.inspector()

    def watch_surfaces(self, watcher: Callable[[SurfaceChange], None]) -> Callable[[], None]:
        """Call ``watcher(change)`` after each open, patch or close; returns the unwatch."""
        return self._surfaces.watch(watcher)

    def watch_components(self, watcher: Callable[[ComponentChange], None]) -> Callable[[], None]:
        """Call ``watcher(change)`` after each show, update, answer or removal; the unwatch."""
        return self._components.watch(watcher)

    @property
    def mcp_apps(self) -> McpApps:
        """The MCP apps open in this host's view (docs/mcp-apps.md)."""
        return self._mcp_apps

    @property
    def widget(self) -> Any:
        """The host's anywidget (made on first use); displaying the host displays it."""
        return self._views.widget()

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
        """Start an agent process that speaks JSON lines on stdin/stdout (H40). ``env`` adds
        to the kernel's environment. ``agent_id`` is the agent it speaks for; without it, the
        first envelope's ``sender.id`` decides (H41). ``close()`` ends it."""
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

        return self._connections.add_listener(WebSocketListener(self._sessions, port, token=token))

    def connect_mcp(
        self,
        server: Any,
        *,
        name: str | None = None,
        timeout: float = 30.0,
        max_html_bytes: int | None = None,
    ) -> McpServer:
        """Connect to an MCP server and list its tools (docs/mcp-apps.md); it becomes the
        agent ``mcp.<name>``, and ``server.open(tool, arguments)`` shows a tool's app here.
        ``server``: a command as a list (stdio), an ``http(s)://`` URL (streamable HTTP),
        ``mcp.StdioServerParameters``, or a server object (in-process). ``name`` replaces
        the server's own; ``timeout`` is every request's deadline, in seconds;
        ``max_html_bytes`` bounds an app's HTML (8 MiB by default). Needs the
        ``mcp`` extra: ``pip install 'lineup-jupyter[mcp]'``."""
        from ..mcp._server import McpServer

        self._connections.mcp_room(self.limits.max_mcp_servers)
        port = _McpPort(self)
        connected = McpServer(
            port, server, name=name, timeout=timeout, max_html_bytes=max_html_bytes
        )
        return self._connections.add_mcp(connected)

    @property
    def mcp_servers(self) -> list[McpServer]:
        """The MCP servers this host connected to, the ended ones too (the last few), with
        their ``status`` and ``problem``; the host's view lists them with the agents."""
        return self._connections.mcp_servers

    @property
    def remote_agents(self) -> list[RemoteAgent]:
        """The agents outside the kernel: processes, WebSockets, and those that connected to
        a listener; the ended ones too (the last few), with their ``status`` and ``problem``."""
        return self._connections.agents

    def close(self) -> None:
        """Close every agent process, WebSocket and listener this host started, and its
        audit and app registry files. Closing twice does nothing; a closed host is not used
        again. (A kernel that exits ends its agent processes anyway.)"""
        self._connections.close()
        self.audit.close()
        self.apps.close()

    def __enter__(self) -> Host:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Deprecated, and not public API: only the host's widget calls them (its port now).
    report_refused = _for_the_widget("report_refused")
    watch_connections = _for_the_widget("watch_connections")


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
        self._host._intake.receive(raw, endpoint)

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
        self._host._connections.track(session)

    def changed(self) -> None:
        self._host._connections.changed()


def session_port(host: Host) -> SessionHost:
    """What a session for an agent outside the kernel is given of ``host`` (the in-memory
    transport's sessions are made by lineup_jupyter.testing)."""
    return host._sessions


class _McpPort:
    """The host as an MCP server sees it (mcp/_server.McpHost): the Host's public calls, and
    the sessions of its own agents in the reserved namespace (H28), each a new Identity (H27)."""

    def __init__(self, host: Host) -> None:
        self._host = host
        self.conversation_id = host.conversation_id
        self.lock = host.lock
        self.history = host.history
        self.capabilities = host.capabilities
        self.policy = host.policy
        self.mcp_apps = host.mcp_apps
        self.problems = host.problems
        self.receive = host.receive
        self.connections_changed = host._connections.changed  # the view's agents line

    def fail_waiting(self, capabilities: Collection[str], reason: str) -> None:
        """The calls of ``capabilities`` still waiting for the user end ``failed`` with
        ``reason``, their cards withdrawn, the answers audited (a server that ended)."""
        with self._host.lock:
            self._host._broker.fail_waiting(capabilities, reason)

    def attach_session(
        self, agent_id: str, dispatch: Callable[[dict[str, Any]], None], *, via: str
    ) -> tuple[Identity, Subscription]:
        """An MCP server session as the agent ``mcp.<name>``: a new Identity, so nothing a
        namesake session before it was granted or cached is its; ``via`` says how it is
        connected. Raises UsageError when a session already holds the id."""
        host = self._host
        with host.lock:
            try:
                identity = host._identities.attach_session(agent_id, via)
            except ProtocolError as error:
                raise UsageError(f"[lineup] {error.message}") from None
            return identity, host._bus.subscribe(dispatch, agent_id=agent_id, endpoint=KERNEL)

    def detach_session(self, identity: Identity, subscription: Subscription) -> None:
        """The session ended: its id is free again, its remembered grants are gone."""
        with self._host.lock:
            subscription.close()
            self._host._identities.detach_session(identity)
