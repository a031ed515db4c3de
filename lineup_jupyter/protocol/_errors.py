"""The exceptions lineup-jupyter raises, in one place.

    LineUpError                 base of everything below; catch this to catch them all
    ├── ProtocolError           a message broke a rule of LineUp v1 or of this host
    │                           (carries code, rule id, JSON path and a sentence for a person)
    ├── UsageError              the Python API was called wrongly (not a wire problem)
    └── CapabilityError         a capability's handler refused its arguments; its message is
                                written for the agent and goes into the call's app.result

`Host.receive` never raises these for bad agent input: it answers the agent with an
error envelope built from the `ProtocolError` and returns it (so does `surface_message`,
for what a surface frame sends). The agent helper and the user's acts called in Python
(`answer`, `user_close`, `user_event`, `decide`) raise them to the notebook author whose own
call was refused, because that is their code to fix (docs/architecture.md, "Refusals").
"""

from __future__ import annotations

from typing import Any

__all__ = ["CapabilityError", "LineUpError", "ProtocolError", "UsageError"]


class LineUpError(Exception):
    """Base class of every exception raised by lineup-jupyter."""


class UsageError(LineUpError):
    """The Python API was used in a way it does not support."""


class CapabilityError(LineUpError):
    """Raised by a capability handler to fail a call with a message the agent may read.

    Any other exception from a handler fails the call too, but the agent only learns its
    type: its text may hold paths or secrets (docs/capabilities.md). ``path`` is the JSON
    path of the argument at fault, like ``$.payload.arguments.path``.
    """

    def __init__(self, message: str, *, path: str = "$.payload.arguments") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


class ProtocolError(LineUpError):
    """A message broke a rule.

    code:        a stable machine-readable kind of failure (see docs/protocol.md, "Error codes")
    rule:        the rule it broke: a LineUp rule (M1, U9, C12, ...) or a host decision (H2, ...)
    path:        where in the message, a JSON path (``$.payload.instance_id``); ``$`` is all of it
    message:     what was wrong and what the rule says, written for a person learning the protocol
    refused_id:  the ``id`` of the refused message, when it could be read
    refused_type: its ``type``, when it could be read
    """

    def __init__(
        self,
        code: str,
        rule: str,
        path: str,
        message: str,
        *,
        refused_id: str | None = None,
        refused_type: str | None = None,
    ) -> None:
        # Bounded so the error envelope itself always validates, however long the input was.
        message = _bounded(message, 4096)
        super().__init__(message)
        self.code = code
        self.rule = rule
        self.path = _bounded(path, 1024)
        self.message = message
        self.refused_id = refused_id
        self.refused_type = refused_type

    def __str__(self) -> str:
        return f"[{self.rule} {self.code}] {self.path}: {self.message}"

    def __repr__(self) -> str:
        return f"ProtocolError(code={self.code!r}, rule={self.rule!r}, path={self.path!r})"

    def with_refused(self, refused_id: str | None, refused_type: str | None) -> ProtocolError:
        """The same error, naming the message it refused."""
        return ProtocolError(
            self.code,
            self.rule,
            self.path,
            self.message,
            refused_id=refused_id if refused_id is not None else self.refused_id,
            refused_type=refused_type if refused_type is not None else self.refused_type,
        )

    def to_payload(self) -> dict[str, Any]:
        """The payload of the ``lineup.v1.error`` envelope that reports this refusal (H3)."""
        payload: dict[str, Any] = {
            "code": self.code,
            "rule": self.rule,
            "path": self.path,
            "message": self.message,
        }
        if self.refused_id is not None:
            payload["refused_id"] = self.refused_id
        if self.refused_type is not None:
            payload["refused_type"] = self.refused_type
        return payload


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
