"""What the user does, through the host's view or a notebook: a surface's event, closing a
surface, answering a question; and what a surface did wrong, reported to its agent.

Each is checked here, in the kernel (the browser is not the authority), recorded in the
history, and reaches the agent that owns the surface or asked the question, exactly once.
What a frame sends is refused by returning the ProtocolError (its agent is told); the user's
own acts raise it (docs/architecture.md, "Refusals"). The user-facing texts are the Host's
(its thin calls); these methods say what they do inside.
"""

from __future__ import annotations

import threading
from typing import Any

from pydantic import ValidationError

from ..core._bus import Bus
from ..core._components import Components
from ..core._ports import Send
from ..core._surfaces import Surfaces
from ..protocol import UiClosePayload, rules, validate_surface_message
from ..protocol._errors import ProtocolError
from ..protocol._json import check_value
from ..protocol._models import ComponentAnswerPayload
from ..protocol._validate import from_validation_error
from ._intake import Intake, as_recorded, send_answer

__all__ = ["UserActs"]


class UserActs:
    """The user's side of the conversation, under the host's lock."""

    def __init__(
        self,
        *,
        lock: threading.RLock,
        bus: Bus,
        surfaces: Surfaces,
        components: Components,
        intake: Intake,
        send: Send,
    ) -> None:
        self._lock = lock
        self._bus = bus
        self._surfaces = surfaces
        self._components = components
        self._intake = intake
        self._send = send

    def surface_message(self, instance_id: str, message: Any) -> ProtocolError | None:
        """Check a frame's message and send it to the owner as ui.event, or refuse it."""
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
                self._intake.check_declared(instance.instance_id, instance.generation, event, data)
            except ProtocolError as error:
                error = error.with_refused(None, "lineup.surface.v1.event")
                return self._report_surface(instance_id, as_recorded(message), error)
            self._send(
                "lineup.v1.ui.event",
                {"instance_id": instance_id, "event": event, "data": data},
                to=instance.owner,
            )
            return None

    def user_event(self, instance_id: str, event: str, data: dict[str, Any] | None) -> None:
        """What ``LineUpSurface.event(event, data)`` in the surface does; raises the refusal."""
        message = {"namespace": rules.SURFACE_NAMESPACE, "type": "event", "event": event}
        error = self.surface_message(instance_id, {**message, "data": {} if data is None else data})
        if error is not None:
            raise error

    def user_close(self, instance_id: str) -> None:
        """Close the surface and tell its owner, or record the refusal and raise it."""
        with self._lock:
            try:
                instance = self._surfaces.close(
                    None, UiClosePayload.model_construct(instance_id=instance_id, reason="user")
                )
            except ProtocolError as error:
                self._bus.history.add(
                    "to_client", "refused", {"instance_id": instance_id}, error.to_payload()
                )
                raise
            self._send(
                "lineup.v1.ui.event",
                {"instance_id": instance_id, "event": "close", "data": {}},
                to=instance.owner,
            )

    def answer(self, component_id: str, status: str = "answered", value: Any = None) -> None:
        """Check the answer against its question and send it to the asker, or record the
        refusal and raise it."""
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
                self._bus.history.add("to_agent", "refused", as_recorded(data), error.to_payload())
                raise error from None
            send_answer(
                self._send,
                component_id,
                component.spec.kind,
                payload.status,
                payload.value,
                component.owner,
            )

    def report_refused(self, instance_id: str, report: dict[str, Any]) -> ProtocolError:
        """Rebuild the browser's report as a ProtocolError (bounded, known codes and rules
        only), record it and tell the surface's owner."""
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
