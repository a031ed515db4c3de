"""The client side of LineUp in the kernel: validates agent envelopes, owns surfaces, answers.

``Host.receive`` and ``Host.subscribe`` are the public contract. Bad agent input never raises
into the caller: the host answers with exactly one refusal (a ``lineup.v1.error``, or an
``app.result`` for an ``app.call`` whose ``call_id`` it could read) and changes nothing.
The host runs without a browser; its widget (``host.widget``, shown by displaying the host)
only watches it and relays what the browser says.
"""

from __future__ import annotations

import json
import logging
import os
import reprlib
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ValidationError

from ..agents._remote import ENDED
from ..appcenter._apps import AppCenter, Change, OpenedSurface
from ..appcenter._manifest import SurfaceManifest
from ..appcenter._trust import BundleTrust
from ..capabilities._audit import Audit
from ..capabilities._broker import Broker, Decision, PendingCall
from ..capabilities._builtins import builtin_capabilities
from ..capabilities._capabilities import ANY_OBJECT, Capabilities, Capability, Policy, Risk
from ..core._bus import Bus, History, Subscription
from ..core._components import ComponentChange, Components, ComponentsView
from ..core._identity import KERNEL, Identities
from ..core._schemas import first_problem
from ..core._surfaces import StateRevision, SurfaceChange, Surfaces, SurfacesView
from ..protocol import (
    AppCall,
    AppRef,
    ComponentAppend,
    ComponentRemove,
    ComponentShow,
    EnvelopeHeader,
    UiClose,
    UiClosePayload,
    UiOpen,
    UiPatch,
    bundle_integrity,
    rules,
    validate_surface_message,
)
from ..protocol._errors import ProtocolError, UsageError
from ..protocol._ids import new_id
from ..protocol._json import check_value, dumps, member_path
from ..protocol._models import ComponentAnswerPayload
from ..protocol._validate import (
    DEFAULT_LIMITS,
    Limits,
    from_validation_error,
    parse_envelope,
    readable_id,
    readable_type,
)
from ..runtime._problems import Problems
from ..runtime._store import data_dir as _data_dir
from ..runtime._watchers import Watchers

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping, Sequence

    from ..agents._agent import Agent
    from ..agents._listener import WebSocketListener
    from ..agents._remote import RemoteAgent, SessionHost
    from ..agents._stdio import ProcessAgent
    from ..agents._websocket import WebSocketAgent

__all__ = ["Host", "session_port"]

logger = logging.getLogger("lineup_jupyter")
HandlerT = TypeVar("HandlerT", bound=Callable[..., Any])  # what @host.capability returns

_RECENT_IDS = 4096  # H9: how many (sender, id) pairs are remembered to refuse repeats
_RAW_SHOWN = 1000  # characters of an unparseable message kept in the history
_CLOSED_AGENTS_SHOWN = 10  # ended connections still listed in the view, the latest


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
        self._seen: set[tuple[str, str]] = set()
        self._seen_order: deque[tuple[str, str]] = deque()
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
        # What each agent->client type does once accepted (M2: the others are refused).
        self._actions: dict[str, Callable[[Any], None]] = {
            "lineup.v1.ui.open": self._open,
            "lineup.v1.ui.patch": self._patch,
            "lineup.v1.ui.close": self._close,
            "lineup.v1.app.call": self._check_call,
            "lineup.v1.component.show": self._show_component,
            "lineup.v1.component.remove": self._remove_component,
            "lineup.v1.component.append": self._append_component,
        }
        self._inventory: dict[str, Any] | None = None
        # The capability broker (docs/capabilities.md). artifact.save writes under
        # artifacts_dir, read at each save; the audit lives in the data dir (_store.py).
        self.artifacts_dir = Path(artifacts_dir or Path.cwd() / "artifacts")
        self._broker = Broker(
            self,
            Audit(_data_dir(data_dir) / "audit.sqlite3"),
            send=self._send,
            on_visibility_changed=self._capabilities_changed,
        )
        for builtin in builtin_capabilities(lambda: self.artifacts_dir):
            self._broker.capabilities.declare(builtin, schema_checked=True)
        # The app center (docs/apps.md): installed apps, their cache, the inventory revision.
        self.apps = AppCenter(
            _data_dir(data_dir),
            on_change=self._apps_changed,
            max_bundle_bytes=self.limits.max_bundle_bytes,
            # Which inline bundles may open (H37): the argument, else the data dir's
            # trust.json, else dev mode; read once, as a policy must not shift mid-conversation.
            trust=trust if trust is not None else BundleTrust.load(_data_dir(data_dir)),
        )
        # instance_id -> (generation, app id, manifest surface) of each open installed surface:
        # the events it may send (C6). A later inline ui.open of that id has a new generation.
        self._declared: dict[str, tuple[int, str, SurfaceManifest]] = {}

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
        try:
            return self._receive_checked(raw, endpoint)
        except Exception as exc:  # even the refusal failed (a bug of ours): never raise
            logger.exception("[lineup] the host failed while refusing a message")
            return ProtocolError("internal", "H3", "$", f"the host failed: {type(exc).__name__}")

    def _receive_checked(self, raw: Any, endpoint: object) -> ProtocolError | None:
        with self._lock:
            try:
                envelope, text = parse_envelope(raw, limits=self.limits)
                self._identities.check(envelope.sender.id, endpoint)  # H41
                act = self._accept(envelope)
                act(envelope)  # checks before it changes anything, so it may still refuse
            except ProtocolError as error:
                return self._refuse(raw, error, endpoint)
            except Exception as exc:  # a bug of ours: report it, never raise into the agent
                logger.exception("[lineup] the host failed while handling a message")
                return self._refuse(
                    raw, ProtocolError("internal", "H3", "$", f"the host failed: {exc!r}"), endpoint
                )
            if endpoint is KERNEL:  # an id the kernel spoke for stays the kernel's (H41)
                self._identities.claim(envelope.sender.id, KERNEL)
            self._remember(envelope.sender.id, envelope.id)
            self._bus.record_incoming(text, None)
            if type(envelope) is AppCall:
                self._answer_call(envelope)  # after the call itself, in the history too
            return None

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

    # ---- what an agent asked for ---------------------------------------------------------

    def _accept(self, envelope: Any) -> Callable[[Any], None]:
        """Every check that needs the host's state; returns what accepting the message does."""
        act = self._actions.get(envelope.type)
        if act is None:
            raise ProtocolError(
                "wrong_direction",
                "M2",
                "$.type",
                f"{envelope.type} goes from client to agent; a client does not accept it. "
                + rules.RULES["M2"],
            )
        if envelope.conversation_id != self.conversation_id:
            raise ProtocolError(
                "wrong_conversation",
                "M1",
                "$.conversation_id",
                f"this host serves conversation {self.conversation_id!r}, not "
                f"{envelope.conversation_id!r}. " + rules.RULES["M1"],
            )
        if (envelope.sender.id, envelope.id) in self._seen:
            raise ProtocolError(
                "duplicate_id",
                "H9",
                "$.id",
                f"agent {envelope.sender.id!r} already sent a message with id {envelope.id!r}. "
                + rules.RULES["H9"],
            )
        return act

    def _check_open(self, envelope: UiOpen) -> OpenedSurface | None:
        app = envelope.payload.app
        self._surfaces._owned(
            envelope.sender.id, envelope.payload.instance_id, "$.payload.instance_id"
        )
        if isinstance(app, AppRef):  # enabled and verified from the cache, or refused (C3, S7)
            return self.apps.open_surface(app)
        if app.integrity is None and app.signature is None and self.trust.mode == "dev":
            return None  # nothing to verify: no need to hash the bundle
        actual = bundle_integrity(app.html, app.css, app.js)
        if app.integrity is not None and actual != app.integrity:
            raise ProtocolError(
                "integrity_mismatch",
                "S7",
                "$.payload.app.integrity",
                f"the bundle hashes to {actual}, not {app.integrity}; it was changed or the "
                "digest was computed differently (see `lineup hash`). " + rules.RULES["S7"],
            )
        self.trust.check(actual, app.signature)
        return None

    def _check_call(self, envelope: AppCall) -> None:
        self._broker.check(envelope.payload)  # a call_id names one request (C12)

    def _open(self, envelope: UiOpen) -> None:
        instance_id = envelope.payload.instance_id
        if instance_id not in self._surfaces:  # a replacement (U1) takes no new room
            _check_count(
                len(self._surfaces),
                self.limits.max_open_surfaces,
                "$.payload.instance_id",
                "surfaces open",
                "close one (ui.close), or replace one by opening its instance_id again",
            )
        installed = self._check_open(envelope)
        payload = envelope.payload
        if installed is not None:  # the view draws the installed bundle like an inline one
            payload = payload.model_copy(update={"app": installed.app})
        instance = self._surfaces.open(envelope.sender.id, payload)
        if installed is not None:
            self._declared[instance.instance_id] = (
                instance.generation,
                installed.app.id,
                installed.surface,
            )
        else:
            self._declared.pop(instance.instance_id, None)

    def _patch(self, envelope: UiPatch) -> None:
        self._surfaces.patch(envelope.sender.id, envelope.payload)

    def _close(self, envelope: UiClose) -> None:
        self._surfaces.close(envelope.sender.id, envelope.payload)

    def _show_component(self, envelope: ComponentShow) -> None:
        if self._components.get(envelope.payload.component_id) is None:  # an update takes none
            _check_count(
                len(self._components),
                self.limits.max_components,
                "$.payload.component_id",
                "components shown",
                "remove one (component.remove), or update one by showing its component_id again",
            )
        self._components.show(envelope.sender.id, envelope.payload)

    def _append_component(self, envelope: ComponentAppend) -> None:
        self._components.append(envelope.sender.id, envelope.payload)

    def _remove_component(self, envelope: ComponentRemove) -> None:
        removed = self._components.remove(envelope.sender.id, envelope.payload.component_id)
        if removed.pending:  # H14: the question still gets its one answer, a cancel
            self._send_answer(
                removed.component_id, removed.spec.kind, "cancelled", None, removed.owner
            )

    def _answer_call(self, envelope: AppCall) -> None:
        try:
            self._broker.receive(envelope)
        except Exception:  # a bug of ours; the call must still get its one answer (C10)
            logger.exception("[lineup] the broker failed on call %r", envelope.payload.call_id)
            self._broker.refuse(
                envelope.payload.call_id,
                {
                    "code": "internal",
                    "rule": "H3",
                    "path": "$",
                    "message": "the host failed while handling the call; see the kernel's log.",
                },
                to=envelope.sender.id,
            )

    def _remember(self, sender_id: str, message_id: str) -> None:
        key = (sender_id, message_id)
        self._seen.add(key)
        self._seen_order.append(key)
        if len(self._seen_order) > _RECENT_IDS:
            self._seen.discard(self._seen_order.popleft())

    # ---- refusals --------------------------------------------------------------------

    def _refuse(self, raw: Any, error: ProtocolError, endpoint: object) -> ProtocolError:
        """Record the refused message and send exactly one answer to its sender (H3): to the
        endpoint it came from, addressed to the agent it named when that is the endpoint's
        (an id spoken for elsewhere never hears of it, H41)."""
        shown = _shown(raw, self.limits.max_message_bytes)
        source = raw if type(raw) is dict else shown  # ids are read even beside a NaN
        error = error.with_refused(readable_id(source.get("id")), readable_type(source.get("type")))
        self._bus.record_incoming(shown, error.to_payload())
        sender = source.get("sender")
        to = (
            readable_id(sender.get("id"))
            if type(sender) is dict and readable_type(sender.get("kind")) == "agent"
            else None
        )
        if to is not None and self._identities.owner(to) not in (None, endpoint):
            to = None
        payload = source.get("payload")
        call_id = readable_id(payload.get("call_id")) if type(payload) is dict else None
        if (
            readable_type(source.get("type")) == "lineup.v1.app.call"
            and call_id is not None
            and error.code not in ("duplicate_id", "wrong_conversation")
            # an app.result instead, unless the call_id has its one answer already (C12)
            and self._broker.refuse(call_id, _result_error(error), to=to, endpoint=endpoint)
        ):
            return error
        self._send("lineup.v1.error", error.to_payload(), to=to, endpoint=endpoint)
        return error

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
        envelope: dict[str, Any] = {
            "v": rules.ENVELOPE_VERSION,
            "id": new_id("msg"),
            "type": type_,
            "conversation_id": self.conversation_id,
            "sender": {"kind": "client", "id": self.client_id},
            "ts": _now(),
            "payload": payload,
        }
        if to is not None:
            envelope["target"] = {"kind": "agent", "id": to}
        self._bus.send(envelope, endpoint=endpoint, only=only)
        return envelope

    def surface_message(self, instance_id: str, message: Any) -> ProtocolError | None:
        """A message a surface frame sent upward (S4, U7-U9); the frame decides the instance.

        Valid ones reach the instance's agent as ``ui.event`` (U8). Refused ones are recorded
        and reported to that agent as ``lineup.v1.error``; nothing else changes.
        """
        with self._lock:
            instance = self._surfaces.get(instance_id)
            try:
                if instance is None:
                    raise ProtocolError(
                        "unknown_instance",
                        "S4",
                        "$",
                        f"a message arrived for surface {instance_id!r}, which is not open.",
                    )
                event, data = validate_surface_message(message)
                self._check_declared(instance.instance_id, instance.generation, event, data)
            except ProtocolError as error:
                error = error.with_refused(None, "lineup.surface.v1.event")
                return self._report_surface(instance_id, _shown(message), error)
            self._send(
                "lineup.v1.ui.event",
                {"instance_id": instance_id, "event": event, "data": data},
                to=instance.owner,
            )
            return None

    def _check_declared(
        self, instance_id: str, generation: int, event: str, data: dict[str, Any]
    ) -> None:
        """An installed app's surface sends only its declared events, with data matching the
        event's schema when the manifest gives one (C6)."""
        declared = self._declared.get(instance_id)
        if declared is None or declared[0] != generation:
            return  # an inline bundle: its events are the agent's business (U9 still holds)
        _, app_id, surface = declared
        if event not in surface.events:
            raise ProtocolError(
                "invalid",
                "C6",
                "$.event",
                f"surface {surface.id!r} of {app_id} sent the event {event!r}, which its "
                f"manifest does not declare (it declares {surface.events}). " + rules.RULES["C6"],
            )
        schema = surface.event_schemas.get(event)
        if schema is not None:
            problem = first_problem(schema, data)
            if problem is not None:
                path = member_path(("data", *problem.path))
                raise ProtocolError(
                    "invalid",
                    "C6",
                    path,
                    f"{path}: {problem.message} (the schema {app_id} declares for "
                    f"{event!r}). " + rules.RULES["C6"],
                )

    def user_event(
        self, instance_id: str, event: str, data: dict[str, Any] | None = None
    ) -> ProtocolError | None:
        """What ``LineUpSurface.event(event, data)`` in surface ``instance_id`` does (U7, U8)."""
        return self.surface_message(
            instance_id,
            {
                "namespace": rules.SURFACE_NAMESPACE,
                "type": "event",
                "event": event,
                "data": {} if data is None else data,
            },
        )

    def user_close(self, instance_id: str) -> ProtocolError | None:
        """The user closed a surface with the host's close button: it closes, the agent hears
        ``ui.event`` 'close' (U10)."""
        with self._lock:
            try:
                instance = self._surfaces.close(
                    None, UiClosePayload.model_construct(instance_id=instance_id, reason="user")
                )
            except ProtocolError as error:
                self._bus.history.add(
                    "to_client", "refused", {"instance_id": instance_id}, error.to_payload()
                )
                return error
            self._send(
                "lineup.v1.ui.event",
                {"instance_id": instance_id, "event": "close", "data": {}},
                to=instance.owner,
            )
            return None

    def answer(
        self, component_id: str, status: str = "answered", value: Any = None
    ) -> ProtocolError | None:
        """The user's answer to a question (choice, confirm, input), or their cancel (H14).

        The view calls this; a notebook or a test may too. The answer is checked against the
        question here (the kernel decides) and reaches the agent that asked, exactly once.
        """
        with self._lock:
            shown = self._components.get(component_id)
            # A non-question is answered as if it were one, so the store says what it is.
            kind = shown.spec.kind if shown is not None and shown.is_question else "confirm"
            data: dict[str, Any] = {"component_id": component_id, "kind": kind, "status": status}
            if value is not None:
                data["value"] = value
            try:
                self._components.existing(component_id)
                check_value({"payload": data})  # H2: JSON, numbers a double can hold
                try:
                    payload = ComponentAnswerPayload.model_validate(data)
                except ValidationError as exc:
                    raise from_validation_error(
                        exc, ComponentAnswerPayload, data, at=("payload",)
                    ) from None
                component = self._components.answer(payload)
            except ProtocolError as error:
                error = error.with_refused(None, "lineup.v1.component.answer")
                self._bus.history.add("to_agent", "refused", _shown(data), error.to_payload())
                return error
            self._send_answer(
                component_id, component.spec.kind, payload.status, payload.value, component.owner
            )
            return None

    def _send_answer(self, component_id: str, kind: str, status: str, value: Any, to: str) -> None:
        payload: dict[str, Any] = {"component_id": component_id, "kind": kind, "status": status}
        if value is not None:
            payload["value"] = value
        self._send("lineup.v1.component.answer", payload, to=to)

    # ---- inventory (C1, C2, C4) ------------------------------------------------------

    @property
    def inventory(self) -> dict[str, Any]:
        """The latest client.inventory payload (made on first use; remade under a new revision
        when another kernel changed the app center meanwhile)."""
        if (
            self._inventory is None
            or self._inventory["applications"] != self.apps.inventory_entries()
        ):
            self._inventory = self._make_inventory()
        return json.loads(dumps(self._inventory))  # type: ignore[no-any-return]

    def _make_inventory(self) -> dict[str, Any]:
        return {
            "revision": str(self.apps.next_revision()),  # C2: persisted, never reused (H36)
            "standard_components": [
                {"id": kind, "version": version}
                for kind, version in rules.COMPONENT_VERSIONS.items()
            ],
            "applications": self.apps.inventory_entries(),  # C5: enabled and verified
            "capabilities": self._broker.inventory_entries(),  # C7: after policy
        }

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
        """The audit trail (C13): ``query(...)``, ``verify()``; shows as a table."""
        return self._broker.audit

    def send_app_list(self, to: str | None = None) -> dict[str, Any]:
        """Send app.list, the capabilities an agent may request (C7); returns the envelope."""
        with self._lock:
            return self._send(
                "lineup.v1.app.list", {"capabilities": self._broker.list_entries()}, to=to
            )

    def _capabilities_changed(self) -> None:
        """A capability appeared, went or was hidden: agents that saw the inventory get the
        new one, under a new revision (C4)."""
        if (
            self._inventory is not None
            and self._inventory["capabilities"] != self._broker.inventory_entries()
        ):
            self._inventory = self._make_inventory()
            self._send("lineup.v1.client.inventory", self.inventory, to=None)

    def _apps_changed(self, app_id: str, change: Change) -> None:
        """The app center changed (C1): a disabled or removed app's open surfaces close and
        their agents hear ui.event 'close' (H35); agents that saw the inventory get a new one."""
        with self._lock:
            if change in ("disabled", "removed"):
                for instance_id, (generation, declared_app, _) in list(self._declared.items()):
                    instance = self._surfaces.get(instance_id)
                    if instance is None or instance.generation != generation:
                        del self._declared[instance_id]  # closed or replaced since
                        continue
                    if declared_app != app_id:
                        continue
                    del self._declared[instance_id]
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
            if self._inventory is not None:
                self._inventory = self._make_inventory()
                self._send("lineup.v1.client.inventory", self.inventory, to=None)

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
            from ..widgets._widget import InspectorWidget

            self._inspector = InspectorWidget(self)
        return self._inspector

    def watch_surfaces(self, watcher: Callable[[SurfaceChange], None]) -> Callable[[], None]:
        return self._surfaces.watch(watcher)

    def watch_components(self, watcher: Callable[[ComponentChange], None]) -> Callable[[], None]:
        return self._components.watch(watcher)

    def report_refused(self, instance_id: str, report: dict[str, Any]) -> ProtocolError:
        """What the browser refused from a surface (S4, U7, U9, a flood): record it and tell
        the instance's agent, so whoever writes the surface can see why nothing happened."""
        code = report.get("code")
        rule = report.get("rule")
        error = ProtocolError(
            code if type(code) is str and code in rules.ERROR_CODES else "invalid",
            rule if type(rule) is str and rule in rules.RULES else "S4",
            str(report.get("path", "$"))[:1024],
            f"in the browser, surface {instance_id!r}: {str(report.get('message', ''))[:1000]}",
            refused_type="lineup.surface.v1.event",
        )
        with self._lock:
            return self._report_surface(instance_id, {"instance_id": instance_id}, error)

    def _report_surface(
        self, instance_id: str, shown: dict[str, Any], error: ProtocolError
    ) -> ProtocolError:
        """Record what a surface did wrong and tell the agent that owns it (or every agent)."""
        instance = self._surfaces.get(instance_id)
        self._bus.history.add("to_client", "refused", shown, error.to_payload())
        self._send("lineup.v1.error", error.to_payload(), to=instance.owner if instance else None)
        return error

    # ---- in the notebook -----------------------------------------------------------

    @property
    def widget(self) -> Any:
        """The host's anywidget (made on first use); displaying the host displays it."""
        if self._widget is None:
            from ..widgets._widget import HostWidget

            self._widget = HostWidget(
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


def _check_count(count: int, limit: int, path: str, what: str, instead: str) -> None:
    if count >= limit:
        raise ProtocolError(
            "too_many",
            "H44",
            path,
            f"{count} {what} is this host's limit (Limits); {instead} first.",
        )


def _result_error(error: ProtocolError) -> dict[str, Any]:
    return {
        "code": error.code,
        "rule": error.rule,
        "path": error.path[:1024],
        "message": error.message[:4096],
    }


def _shown(raw: Any, max_bytes: int = DEFAULT_LIMITS.max_message_bytes) -> dict[str, Any]:
    """What the history keeps of a message that may not even be JSON (nor a plain type); of
    one over ``max_bytes`` (refused too_large), an excerpt, never the whole (H44)."""
    if type(raw) is dict:
        try:  # keep a JSON copy; a dict holding non-JSON values is shown by its repr
            check_value(raw)  # first: copying calls no method of a type that is not JSON's
            text = dumps(raw)
        except (ProtocolError, RecursionError):
            return {"raw": _repr(raw)}
        if len(text) > max_bytes:  # characters: at most its UTF-8 bytes
            return _excerpt(text, len(text.encode("utf-8")))
        return json.loads(text)  # type: ignore[no-any-return]
    if isinstance(raw, EnvelopeHeader):
        return raw.model_dump(mode="json", exclude_none=True)
    if isinstance(raw, (bytes, bytearray, memoryview)):
        if len(raw) > max_bytes:
            return _excerpt(bytes(raw[: 4 * _RAW_SHOWN]).decode("utf-8", "replace"), len(raw))
        raw = bytes(raw).decode("utf-8", "replace")
    if isinstance(raw, str):
        if len(raw) > max_bytes:
            return _excerpt(raw, len(raw.encode("utf-8", "surrogatepass")))
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, dict):
            return value
        return {"raw": raw[:_RAW_SHOWN]}
    return {"raw": _repr(raw)}


def _excerpt(text: str, size: int) -> dict[str, Any]:
    return {"raw": text[:_RAW_SHOWN], "excerpt_of_bytes": size}


def _repr(value: Any) -> str:
    try:
        return reprlib.repr(value)  # bounded in depth and length
    except Exception:  # even repr can fail (a 5000-digit int, a broken __repr__)
        return f"<unprintable {type(value).__name__}>"
