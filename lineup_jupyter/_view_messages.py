"""What a view (the browser's side of a widget) may send the kernel, checked first (H38).

A comm message is JSON from the page: in principle our own js/, in practice whatever reaches
the comm. Each widget declares the kinds it takes and the fields of each; a message is
handled only if it is a JSON object of a known kind whose fields have their types, and its
values are I-JSON (H2: no number a double cannot hold). Anything else is refused with a
precise reason (code ``invalid``, rule H38, the JSON path, a sentence), recorded in the
host's history (an excerpt, never the whole message) and logged; nothing changes. Should
handling a well-formed message still fail (a bug of ours), that is refused ``internal`` the
same way: nothing the view sends raises in the kernel.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ._errors import ProtocolError
from .protocol._json import check_value, dumps, member_path

if TYPE_CHECKING:
    from ._host import Host

__all__ = ["APP_CENTER", "EVENT", "HOST", "INSPECTOR", "Fields", "handle"]

logger = logging.getLogger("lineup_jupyter")

# kind -> {field: (the types it may have, required)}; other fields are ignored.
Fields = Mapping[str, Mapping[str, tuple[tuple[type, ...], bool]]]
_STR = ((str,), True)
_ANY = ((object,), True)
HOST: Fields = {
    "sync": {},
    "event": {"instance_id": _STR, "message": _ANY},
    "events": {"items": ((list,), True)},  # each item is checked as an EVENT message
    "close": {"instance_id": _STR},
    "refused": {
        "instance_id": _STR,
        **dict.fromkeys(("code", "rule", "path", "message"), ((str,), False)),
    },
    "answer": {"component_id": _STR, "status": _STR, "value": ((object,), False)},
    "consent_sync": {},
    "consent_decide": {
        "call_id": _STR,
        "decision": _STR,
        "remember": ((bool,), False),
        "typed_name": ((str, type(None)), False),
        "outcome": ((dict,), False),
    },
    "consent_revoke": {"capability": _STR},
    "clear_problems": {},
    # What a surface's script got wrong, as its bridge reported it (_widget.py bounds it).
    "surface_problem": {
        "instance_id": _STR,
        "level": ((str,), False),
        "text": ((str,), False),
        "stack": ((str,), False),
    },
}
# An item of "events": an event or a refusal, never another batch.
EVENT: Fields = {"event": HOST["event"], "refused": HOST["refused"]}
INSPECTOR: Fields = {"sync": {}, "states": {"instance_id": _STR}, "export": {}}
APP_CENTER: Fields = {
    "refresh": {},
    "verify": {},
    **{kind: {"app_id": _STR} for kind in ("enable", "disable", "rollback", "remove", "install")},
}
MAX_EVENTS = 1000  # events in one batch (the view's rate limit keeps real ones far below)
_EXCERPT = 1000  # characters of a refused view message kept in the history


def problem(content: Any, fields: Fields) -> ProtocolError | None:
    """Why ``content`` is not a message these fields describe, or None."""
    try:
        check_value(content)  # H2: exactly JSON (a comm message always is), doubles only
    except ProtocolError as error:
        return _refusal(error.path, error.message)
    if type(content) is not dict:
        return _refusal("$", f"a view message is a JSON object, not {_kind(content)}.")
    kind = content.get("kind")
    if type(kind) is not str or kind not in fields:
        return _refusal("$.kind", f"kind {_short(kind)} is not one of {sorted(fields)}.")
    for name, (types, required) in fields[kind].items():
        path = member_path((name,))
        if name not in content:
            if required:
                return _refusal(path, f"a {kind!r} message needs {name!r}.")
            continue
        if not isinstance(content[name], types):
            wanted = " or ".join(_JSON_NAMES[t] for t in types)
            return _refusal(
                path, f"{name!r} of a {kind!r} message is {wanted}, not {_kind(content[name])}."
            )
    if kind == "events" and len(content["items"]) > MAX_EVENTS:
        return _refusal("$.items", f"at most {MAX_EVENTS} events come in one message.")
    return None


def handle(host: Host | None, content: Any, fields: Fields, act: Callable[[], None]) -> None:
    """Run ``act`` for a well-formed message; refuse any other, and any failure, on record."""
    error = problem(content, fields)
    if error is None:
        try:
            act()
            return
        except Exception as exc:  # a bug of ours: the view still never makes the kernel raise
            logger.exception("[lineup] handling a view message failed")
            error = ProtocolError(
                "internal", "H38", "$", f"the kernel failed on this message: {type(exc).__name__}"
            )
    logger.warning("[lineup] a view message was refused at %s: %s", error.path, error.message)
    if host is not None:
        host.history.add("to_client", "refused", {"view": excerpt(content)}, error.to_payload())


def excerpt(content: Any) -> str:
    """At most _EXCERPT characters of what the view sent, whatever it was."""
    try:
        text = dumps(content)
    except Exception:  # not JSON at all: its type says enough
        return f"<a {type(content).__name__}>"
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + f"… ({len(text)} characters)"


def _refusal(path: str, message: str) -> ProtocolError:
    return ProtocolError("invalid", "H38", path, message)


_JSON_NAMES = {
    str: "a string",
    list: "an array",
    dict: "an object",
    bool: "a boolean",
    type(None): "null",
    int: "a number",
    float: "a number",
}


def _kind(value: Any) -> str:
    return _JSON_NAMES.get(type(value), f"a {type(value).__name__}")


def _short(value: Any) -> str:
    text = excerpt(value)
    return text if len(text) <= 64 else text[:61] + "..."
