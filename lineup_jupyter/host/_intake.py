"""What the host does with one agent->client envelope: parse it, check it, act, or refuse it.

Every check runs before anything changes, so a refused message changes nothing and gets
exactly one answer (H3): a ``lineup.v1.error``, or an ``app.result`` for an ``app.call`` whose
``call_id`` could be read. The Host owns the lock, the registries and the bus, and hands the
intake what it needs of them; it calls ``Intake.receive`` for the kernel and each connection.
"""

from __future__ import annotations

import json
import logging
import reprlib
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

from ..appcenter._apps import AppCenter, OpenedSurface
from ..appcenter._manifest import SurfaceManifest
from ..capabilities._broker import Broker
from ..core._bus import Bus
from ..core._components import Components
from ..core._identity import KERNEL, NOBODY, Identities, Identity
from ..core._ports import Send
from ..core._schemas import first_problem
from ..core._surfaces import Surfaces
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
)
from ..protocol._errors import ProtocolError
from ..protocol._json import check_value, dumps, member_path
from ..protocol._validate import (
    DEFAULT_LIMITS,
    Limits,
    parse_envelope,
    readable_id,
    readable_type,
)

__all__ = ["Intake", "as_recorded", "send_answer"]

logger = logging.getLogger("lineup_jupyter")

_RECENT_IDS = 4096  # H9: how many (sender, id) pairs are remembered to refuse repeats
_RAW_SHOWN = 1000  # characters of an unparseable message kept in the history


class Intake:
    """The accept/act steps of each agent->client type, and the refusals (H3)."""

    def __init__(
        self,
        *,
        conversation_id: str,
        limits: Limits,
        lock: threading.RLock,
        bus: Bus,
        identities: Identities,
        surfaces: Surfaces,
        components: Components,
        apps: AppCenter,
        broker: Broker,
        send: Send,
    ) -> None:
        self._conversation_id = conversation_id
        self._limits = limits
        self._lock = lock
        self._bus = bus
        self._identities = identities
        self._surfaces = surfaces
        self._components = components
        self._apps = apps
        self._broker = broker
        self._send = send
        self.seen: set[tuple[str, str]] = set()
        self._seen_order: deque[tuple[str, str]] = deque()
        # instance_id -> (generation, app id, manifest surface) of each open installed surface:
        # the events it may send (C6). A later inline ui.open of that id has a new generation.
        self.declared: dict[str, tuple[int, str, SurfaceManifest]] = {}
        # What each agent->client type does once accepted (M2: the others are refused).
        self.actions: dict[str, Callable[[Any], None]] = {
            "lineup.v1.ui.open": self._open,
            "lineup.v1.ui.patch": self._patch,
            "lineup.v1.ui.close": self._close,
            "lineup.v1.app.call": _checked_above,
            "lineup.v1.component.show": self._show_component,
            "lineup.v1.component.remove": self._remove_component,
            "lineup.v1.component.append": self._append_component,
        }

    def receive(self, raw: Any, endpoint: object) -> ProtocolError | None:
        """``Host.receive`` from one endpoint: the kernel, or a connection (_remote.py)."""
        try:
            return self._receive_checked(raw, endpoint)
        except Exception as exc:  # even the refusal failed (a bug of ours): never raise
            logger.exception("[lineup] the host failed while refusing a message")
            return ProtocolError("internal", "H3", "$", f"the host failed: {type(exc).__name__}")

    def _receive_checked(self, raw: Any, endpoint: object) -> ProtocolError | None:
        with self._lock:
            try:
                envelope, text = parse_envelope(raw, limits=self._limits)
                self._identities.check(envelope.sender.id, endpoint)  # H41, H28
                identity = self._identities.resolve(envelope.sender.id, endpoint)  # H27
                act = self._accept(envelope)
                if type(envelope) is AppCall:  # its call_id is new in its sender's scope (C12)
                    self._broker.check(envelope.payload, identity)
                act(envelope)  # checks before it changes anything, so it may still refuse
            except ProtocolError as error:
                return self._refuse(raw, error, endpoint)
            except Exception as exc:  # a bug of ours: report it, never raise into the agent
                logger.exception("[lineup] the host failed while handling a message")
                return self._refuse(
                    raw, ProtocolError("internal", "H3", "$", f"the host failed: {exc!r}"), endpoint
                )
            if endpoint is KERNEL and self._identities.owner(envelope.sender.id) is None:
                self._identities.claim(envelope.sender.id, KERNEL)  # stays the kernel's (H41)
            self._remember(envelope.sender.id, envelope.id)
            self._bus.record_incoming(text, None)
            if type(envelope) is AppCall:
                self._answer_call(envelope, identity)  # after the call itself, in the history
            return None

    # ---- what an agent asked for ---------------------------------------------------------

    def _accept(self, envelope: Any) -> Callable[[Any], None]:
        """Every check that needs the host's state; returns what accepting the message does."""
        act = self.actions.get(envelope.type)
        if act is None:
            raise ProtocolError(
                "wrong_direction",
                "M2",
                "$.type",
                f"{envelope.type} goes from client to agent; a client does not accept it. "
                + rules.RULES["M2"],
            )
        if envelope.conversation_id != self._conversation_id:
            raise ProtocolError(
                "wrong_conversation",
                "M1",
                "$.conversation_id",
                f"this host serves conversation {self._conversation_id!r}, not "
                f"{envelope.conversation_id!r}. " + rules.RULES["M1"],
            )
        if (envelope.sender.id, envelope.id) in self.seen:
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
        self._surfaces.owned(
            envelope.sender.id, envelope.payload.instance_id, "$.payload.instance_id"
        )
        if isinstance(app, AppRef):  # enabled and verified from the cache, or refused (C3, S7)
            return self._apps.open_surface(app)
        if app.integrity is None and app.signature is None and self._apps.trust.mode == "dev":
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
        self._apps.trust.check(actual, app.signature)
        return None

    def _open(self, envelope: UiOpen) -> None:
        instance_id = envelope.payload.instance_id
        if instance_id not in self._surfaces:  # a replacement (U1) takes no new room
            _check_count(
                len(self._surfaces),
                self._limits.max_open_surfaces,
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
            self.declared[instance.instance_id] = (
                instance.generation,
                installed.app.id,
                installed.surface,
            )
        else:
            self.declared.pop(instance.instance_id, None)

    def app_changed(self, app_id: str, change: str) -> None:
        """The app center disabled or removed ``app_id`` (H35): each of its open surfaces
        closes and its agent hears ui.event 'close' with the reason; the declarations of
        surfaces closed or replaced since are dropped on the way. The caller holds the lock."""
        if change not in ("disabled", "removed"):
            return
        for instance_id, (generation, declared_app, _) in list(self.declared.items()):
            instance = self._surfaces.get(instance_id)
            if instance is None or instance.generation != generation:
                del self.declared[instance_id]  # closed or replaced since
                continue
            if declared_app != app_id:
                continue
            del self.declared[instance_id]
            self._surfaces.close(
                None, UiClosePayload.model_construct(instance_id=instance_id, reason=change)
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

    def _patch(self, envelope: UiPatch) -> None:
        self._surfaces.patch(envelope.sender.id, envelope.payload)

    def _close(self, envelope: UiClose) -> None:
        self._surfaces.close(envelope.sender.id, envelope.payload)

    def _show_component(self, envelope: ComponentShow) -> None:
        if self._components.get(envelope.payload.component_id) is None:  # an update takes none
            _check_count(
                len(self._components),
                self._limits.max_components,
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
            send_answer(
                self._send,
                removed.component_id,
                removed.spec.kind,
                "cancelled",
                None,
                removed.owner,
            )

    def _answer_call(self, envelope: AppCall, identity: Identity) -> None:
        try:
            self._broker.receive(envelope, identity)
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
                endpoint=identity.endpoint,
                identity=identity,
            )

    def _remember(self, sender_id: str, message_id: str) -> None:
        key = (sender_id, message_id)
        self.seen.add(key)
        self._seen_order.append(key)
        if len(self._seen_order) > _RECENT_IDS:
            self.seen.discard(self._seen_order.popleft())

    # ---- refusals --------------------------------------------------------------------

    def _refuse(self, raw: Any, error: ProtocolError, endpoint: object) -> ProtocolError:
        """Record the refused message and send exactly one answer to its sender (H3): to the
        endpoint it came from, addressed to the agent it named when that is the endpoint's
        (an id spoken for elsewhere never hears of it, H41)."""
        shown = as_recorded(raw, self._limits.max_message_bytes)
        source = raw if type(raw) is dict else shown  # ids are read even beside a NaN
        error = error.with_refused(readable_id(source.get("id")), readable_type(source.get("type")))
        self._bus.record_incoming(shown, error.to_payload())
        sender = source.get("sender")
        named = readable_id(sender.get("id")) if type(sender) is dict else None
        # The sender as the host knows it, when this endpoint may speak for that id (H41,
        # H28); else nobody's: its call_id is burned in no agent's scope (H27).
        identity = None if named is None else self._identities.peek(named, endpoint)
        to = (
            named
            if identity is not None
            and type(sender) is dict
            and readable_type(sender.get("kind")) == "agent"
            else None
        )
        payload = source.get("payload")
        call_id = readable_id(payload.get("call_id")) if type(payload) is dict else None
        if (
            readable_type(source.get("type")) == "lineup.v1.app.call"
            and call_id is not None
            and error.code not in ("duplicate_id", "wrong_conversation")
            # an app.result instead, unless the call_id has its one answer already (C12)
            and self._broker.refuse(
                call_id, _result_error(error), to=to, endpoint=endpoint, identity=identity or NOBODY
            )
        ):
            return error
        self._send("lineup.v1.error", error.to_payload(), to=to, endpoint=endpoint)
        return error

    def check_declared(
        self, instance_id: str, generation: int, event: str, data: dict[str, Any]
    ) -> None:
        """An installed app's surface sends only its declared events, with data matching the
        event's schema when the manifest gives one (C6)."""
        declared = self.declared.get(instance_id)
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


def _checked_above(envelope: AppCall) -> None:
    """An app.call's call_id was checked with its sender's identity (C12, H27); the broker
    answers it once it is recorded (``_answer_call``)."""


def send_answer(send: Send, component_id: str, kind: str, status: str, value: Any, to: str) -> None:
    """The one component.answer a question gets (H14): the user's, or a cancel."""
    payload: dict[str, Any] = {"component_id": component_id, "kind": kind, "status": status}
    if value is not None:
        payload["value"] = value
    send("lineup.v1.component.answer", payload, to=to)


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


def as_recorded(raw: Any, max_bytes: int = DEFAULT_LIMITS.max_message_bytes) -> dict[str, Any]:
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
