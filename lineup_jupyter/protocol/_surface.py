"""The one message a surface may send upward (U7, U9), checked in the kernel, the authority.

The browser checks the same rules first (js/surface_message.js, from the same constants);
the kernel checks again because a browser is not a place to trust.
"""

from __future__ import annotations

import re
from typing import Any

from . import _rules as r
from ._errors import ProtocolError
from ._json import check_value, size

__all__ = ["validate_surface_message"]

_EVENT_NAME = re.compile(r.EVENT_NAME_PATTERN)
_KEYS = frozenset({"namespace", "type", "event", "data"})


def _refuse(code: str, rule: str, path: str, message: str) -> ProtocolError:
    return ProtocolError(code, rule, path, f"{message} {r.RULES[rule]}")


def validate_surface_message(message: Any) -> tuple[str, dict[str, Any]]:
    """``(event, data)`` of a valid upward surface message, or ProtocolError (S4, U7, U9)."""
    if not isinstance(message, dict):
        raise _refuse("invalid", "U7", "$", "a surface message is a JSON object.")
    extra = sorted(set(message) - _KEYS)
    if extra:
        raise _refuse(
            "invalid",
            "U7",
            f"$.{extra[0]}" if extra[0].isidentifier() else "$",
            f"{extra[0]!r} is not part of a surface message.",
        )
    if message.get("namespace") != r.SURFACE_NAMESPACE:
        raise _refuse(
            "invalid", "U7", "$.namespace", f"the namespace must be {r.SURFACE_NAMESPACE!r}."
        )
    if message.get("type") != "event":
        raise _refuse("invalid", "U7", "$.type", "the only upward type is 'event'.")
    event = message.get("event")
    if not isinstance(event, str) or _EVENT_NAME.fullmatch(event) is None:
        shown = (
            repr(event)
            if not isinstance(event, str) or len(event) <= 80
            else repr(event[:77] + "...")
        )
        raise _refuse(
            "invalid", "U9", "$.event", f"the event name {shown} does not have the required form."
        )
    data = message.get("data")
    if not isinstance(data, dict):
        raise _refuse("invalid", "U9", "$.data", "data must be a JSON object.")
    try:
        check_value(data)
    except ProtocolError as exc:
        raise ProtocolError(
            exc.code, exc.rule, exc.path.replace("$", "$.data", 1), exc.message
        ) from None
    n = size(data)
    if n >= r.MAX_EVENT_DATA_BYTES:
        raise _refuse(
            "too_large",
            "U9",
            "$.data",
            f"the data is {n} bytes; it must be under {r.MAX_EVENT_DATA_BYTES}.",
        )
    return event, data
