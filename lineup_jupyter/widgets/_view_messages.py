"""What a view (the browser's side of a widget) may send the kernel, checked first (H38).

A comm message is JSON from the page: in principle our own js/, in practice whatever reaches
the comm. The kinds each widget takes and their fields are TypedDicts (_view_protocol.py),
read here as checks. A message goes to its kind's handler (the widget's dispatch table) only
if it is a JSON object of a known kind whose fields have their types, and its values are
I-JSON (H2: no number a double cannot hold). Anything else is refused with a
precise reason (code ``invalid``, rule H38, the JSON path, a sentence), recorded in the
host's history (an excerpt, never the whole message) and logged; nothing changes. Should
handling a well-formed message still fail (a bug of ours), that is refused ``internal`` the
same way: nothing the view sends raises in the kernel.
"""

from __future__ import annotations

import functools
import logging
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from typing_extensions import get_type_hints, is_typeddict

from ..core._view_protocol import MessageSet
from ..protocol._errors import ProtocolError
from ..protocol._json import check_value, dumps, member_path

if TYPE_CHECKING:
    from ..host._host import Host

__all__ = ["Handlers", "fields", "handle", "problem"]

logger = logging.getLogger("lineup_jupyter")

# kind -> {field: (the types it may have, required)}; other fields are ignored.
Fields = Mapping[str, Mapping[str, tuple[tuple[type, ...], bool]]]
# kind -> what acts on a checked message of that kind (the widget's dispatch table).
Handlers = Mapping[str, Callable[[Any], None]]
MAX_EVENTS = 1000  # events in one batch (the view's rate limit keeps real ones far below)
_EXCERPT = 1000  # characters of a refused view message kept in the history


@functools.cache
def fields(messages: MessageSet) -> Fields:
    """What each kind's TypedDict (_view_protocol.py) asks of a message, as checks: its
    fields, the JSON types each may have, and whether it must be there."""
    return {
        kind: {
            name: (_types_of(hint), name in message.__required_keys__)  # type: ignore[attr-defined]
            for name, hint in get_type_hints(message).items()
            if name != messages.key
        }
        for kind, message in messages.items()
    }


def _types_of(hint: Any) -> tuple[type, ...]:
    """The Python types json gives for a field's annotation. Only annotations a type check
    holds exactly: a Literal (its values) or a number (isinstance takes True for 1) would be
    checked less than declared, so a field of either in a message a view sends raises here
    (tests/widgets/test_view_protocol.py reads every set's checks) until this learns to check it."""
    if hint is Any:
        return (object,)
    if hint in (str, bool, type(None)):
        return (hint,)
    if is_typeddict(hint):
        return (dict,)
    origin = typing.get_origin(hint)
    if origin in (list, dict):
        return (origin,)
    if origin in (typing.Union, types.UnionType):
        return tuple(dict.fromkeys(t for arg in typing.get_args(hint) for t in _types_of(arg)))
    raise TypeError(f"no exact JSON check for a field of type {hint!r}")


def problem(content: Any, messages: MessageSet) -> ProtocolError | None:
    """Why ``content`` is not one of ``messages``, or None."""
    try:
        check_value(content)  # H2: exactly JSON (a comm message always is), doubles only
    except ProtocolError as error:
        return _refusal(error.path, error.message)
    if type(content) is not dict:
        return _refusal("$", f"a view message is a JSON object, not {_kind(content)}.")
    kind = content.get("kind")
    if type(kind) is not str or kind not in messages:
        return _refusal("$.kind", f"kind {_short(kind)} is not one of {sorted(messages)}.")
    for name, (allowed, required) in fields(messages)[kind].items():
        path = member_path((name,))
        if name not in content:
            if required:
                return _refusal(path, f"a {kind!r} message needs {name!r}.")
            continue
        if not isinstance(content[name], allowed):
            wanted = " or ".join(dict.fromkeys(_JSON_NAMES[t] for t in allowed))
            return _refusal(
                path, f"{name!r} of a {kind!r} message is {wanted}, not {_kind(content[name])}."
            )
    if kind == "events" and len(content["items"]) > MAX_EVENTS:
        return _refusal("$.items", f"at most {MAX_EVENTS} events come in one message.")
    return None


def handle(host: Host | None, content: Any, messages: MessageSet, handlers: Handlers) -> None:
    """Hand a well-formed message to its kind's handler; refuse any other, and any failure,
    on record (in ``host``'s history, when there is one)."""
    error = problem(content, messages)
    if error is None:
        try:
            handlers[content["kind"]](content)
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
