"""Turning bytes, text or dicts into envelope models, or into one precise ProtocolError.

The order of checks is fixed so the same bad message always gets the same answer: bytes
(H2), then the envelope's own fields (M1, H1), then the type (M2, M3), then the payload
(the U, C and H rules), then the direction of the type against the sender (M2).
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, from_json

from . import _rules as r
from ._errors import ProtocolError
from ._json import check_value, dumps, loads, member_path
from ._models import (
    COMPONENT_VERSIONS,
    ENVELOPE_CLASSES,
    ComponentShow,
    Envelope,
    EnvelopeHeader,
    UiPatchPayload,
    _Envelope,
)

__all__ = [
    "ENVELOPE_ADAPTER",
    "Limits",
    "envelope_rule",
    "parse_envelope",
    "readable_id",
    "readable_type",
    "validate_envelope",
]

ENVELOPE_ADAPTER: TypeAdapter[Envelope] = TypeAdapter(Envelope)
_HEADER_ADAPTER = TypeAdapter(EnvelopeHeader)


@dataclass(frozen=True)
class Limits:
    """The limits a host enforces; every one has a rule and a documented default
    (docs/protocol.md, "Limits"). Sizes bound one message; counts bound what the host keeps
    and serves at once, so that no agent can make it hold or start without end (H44)."""

    max_message_bytes: int = r.DEFAULT_MAX_MESSAGE_BYTES  # H2
    max_bundle_bytes: int = r.DEFAULT_MAX_BUNDLE_BYTES  # U3
    max_state_bytes: int = r.DEFAULT_MAX_STATE_BYTES  # H7
    max_open_surfaces: int = 100  # H44: open surface instances, all agents together
    max_components: int = 200  # H44: standard components shown, all agents together
    max_waiting_calls: int = 20  # H44: app.calls waiting for the user (consent cards)
    max_connections: int = 64  # H44: connections to one listener at once
    max_unnamed_connections: int = 8  # H44: of those, connections without an agent id yet
    max_handshakes: int = 128  # H44: sockets of one listener before their handshake ends
    max_mcp_servers: int = 16  # H44: MCP servers connected to one host at once


DEFAULT_LIMITS = Limits()


def validate_envelope(value: Any, *, limits: Limits = DEFAULT_LIMITS) -> _Envelope:
    """One message (bytes, JSON text, dict or model) as a model, or ProtocolError.

    Accepts either direction; what a host accepts from an agent is narrower (see Host).
    """
    return parse_envelope(value, limits=limits)[0]


def parse_envelope(value: Any, *, limits: Limits = DEFAULT_LIMITS) -> tuple[_Envelope, str | bytes]:
    """Like validate_envelope, and also the message as JSON text or bytes (for the history)."""
    if isinstance(value, BaseModel):
        # A model may have been built without validation (model_construct) or changed since:
        # check it like the dict it stands for, which also takes a copy.
        value = value.model_dump(mode="python", exclude_none=True)
    text: str | bytes
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        text = value if isinstance(value, (str, bytes)) else bytes(value)  # immutable
        message_bytes = len(text)
        data = loads(text, max_bytes=limits.max_message_bytes)
    else:
        # A Python object from an in-kernel agent: refuse what is not exactly JSON, then take
        # a deep copy through the same strict parser, so the agent changing its dict later
        # cannot change the host's state, and the size is the size on the wire.
        check_value(value)
        text = dumps(value)
        message_bytes = len(text.encode("utf-8"))
        if message_bytes > limits.max_message_bytes:
            raise ProtocolError(
                "too_large",
                "H2",
                "$",
                f"the message is {message_bytes} bytes; the limit is {limits.max_message_bytes}.",
            )
        data = from_json(text, cache_strings=False)  # the copy; check_value proved it I-JSON
    if not isinstance(data, dict):
        raise ProtocolError(
            "invalid",
            "M1",
            "$",
            f"a message is a JSON object (an envelope), not {_json_kind(data)}. " + r.RULES["M1"],
        )
    kind = data.get("type")
    model = ENVELOPE_CLASSES.get(kind) if isinstance(kind, str) else None
    context = {
        "max_bundle_bytes": limits.max_bundle_bytes,
        "max_state_bytes": limits.max_state_bytes,
        "message_bytes": message_bytes,
    }
    try:
        if model is None:
            header = _HEADER_ADAPTER.validate_python(data, context=context)
            raise _unknown_type(header.type)
        # The class the discriminated union would pick, validated directly (one call less).
        envelope = model.__pydantic_validator__.validate_python(data, context=context)
    except ValidationError as exc:
        raise from_validation_error(exc, model, data).with_refused(
            readable_id(data.get("id")), readable_type(kind)
        ) from None
    except ProtocolError as exc:
        raise exc.with_refused(readable_id(data.get("id")), readable_type(kind)) from None
    _check_direction(envelope)
    return envelope, text


def _check_direction(envelope: _Envelope) -> None:
    short = envelope.type.removeprefix(r.TYPE_PREFIX)
    expected = "agent" if short in r.AGENT_TO_CLIENT else "client"
    if envelope.sender.kind != expected:
        raise ProtocolError(
            "wrong_direction",
            "M2",
            "$.sender.kind",
            f"{envelope.type} is sent by the {expected}, but sender.kind is "
            f"{envelope.sender.kind!r}. " + r.RULES["M2"],
            refused_id=envelope.id,
            refused_type=envelope.type,
        )


def _unknown_type(kind: str) -> ProtocolError:
    short = kind.removeprefix(r.TYPE_PREFIX)
    known = [f"{r.TYPE_PREFIX}{name}" for name in (*r.AGENT_TO_CLIENT, *r.CLIENT_TO_AGENT)]
    close = difflib.get_close_matches(kind, known, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    if kind.startswith(r.TYPE_PREFIX) and short.startswith(r.EXTENSIBLE_FAMILIES):
        return ProtocolError(
            "unsupported",
            "M3",
            "$.type",
            f"{kind!r} is not a message type this host supports, so it is not executed.{hint} "
            + r.RULES["M3"],
        )
    return ProtocolError(
        "unknown_type",
        "M2",
        "$.type",
        f"{kind!r} is not a lineup.v1 message type.{hint} " + r.RULES["M2"],
    )


def from_validation_error(
    exc: ValidationError, model: type[BaseModel] | None, data: Any, *, at: tuple[str, ...] = ()
) -> ProtocolError:
    """The first pydantic error as a ProtocolError with its rule, path and a plain sentence.

    ``at`` is where ``model`` sits in the message, when it is not the whole envelope.
    """
    errors = exc.errors(include_url=False)
    error = errors[0]
    if error["type"] == "missing":
        # A missing field beside an unknown one is usually a misspelling: name the misspelling.
        parent = error["loc"][:-1]
        error = next(
            (e for e in errors if e["type"] == "extra_forbidden" and e["loc"][:-1] == parent), error
        )
    loc = _strip_tags(error["loc"], model, error["type"])
    if error["type"] == "component_kind":  # the tag itself is wrong: say where it is
        loc = (*loc, "kind")
    elif error["type"] == "value_error":  # "H12 value: ..." from a model validator names a field
        named = _NAMED_FIELD.match(str(error.get("ctx", {}).get("error", "")))
        if named:
            loc = (*loc, named.group(2))
    path = member_path((*at, *loc))
    raw = error["loc"]
    kind_model = (  # a component's own fields, not those of all eight kinds
        _COMPONENT_MODELS.get(str(raw[1])) if model is ComponentShow and len(raw) > 2 else None
    )
    rule, message = _explain(error, loc, model, at, kind_model)
    more = len(errors) - 1
    if more:
        message += f" ({more} more problem{'s' if more > 1 else ''} in this message.)"
    return ProtocolError(
        "too_large" if "limit is" in message or "must be under" in message else "invalid",
        rule,
        path,
        message,
    )


def _explain(
    error: ErrorDetails,
    loc: tuple[str | int, ...],
    model: type[BaseModel] | None,
    at: tuple[str, ...] = (),
    kind_model: type[BaseModel] | None = None,
) -> tuple[str, str]:
    kind = error["type"]
    field = loc[-1] if loc else None
    rule = envelope_rule(model, loc) if model is not None else _header_rule(loc)
    where = member_path((*at, *loc))
    if kind == "component_kind":
        got = error["input"].get("kind") if isinstance(error["input"], dict) else None
        said = "missing" if got is None else _shown(got)
        return rule, (
            f"{where} is {said}; expected one of {', '.join(COMPONENT_VERSIONS)}. " + r.RULES[rule]
        )
    if kind == "value_error":
        text = str(error.get("ctx", {}).get("error", error["msg"]))
        text = _NAMED_FIELD.sub(r"\1 \2: ", text)
        head, _, rest = text.partition(" ")
        if head in r.RULES:  # a validator that names its own rule: "U9 the event data is ..."
            rule, text = head, rest
        return rule, f"{text}. {r.RULES[rule]}"
    if kind == "missing":
        return rule, f"{where} is required but missing. {r.RULES[rule]}"
    if kind == "extra_forbidden":
        if (
            model is not None
            and loc[:1] == ("payload",)
            and model.model_fields["payload"].annotation is UiPatchPayload
        ):
            return "U5", f"ui.patch may not carry {field!r}. {r.RULES['U5']}"
        siblings = (
            list(kind_model.model_fields)
            if kind_model is not None and len(loc) == 2
            else _siblings(model, loc[:-1])
        )
        close = difflib.get_close_matches(str(field), siblings, n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        allowed = f" Allowed here: {', '.join(sorted(siblings))}." if siblings else ""
        return "H1", f"{where} is not a known field.{hint}{allowed} {r.RULES['H1']}"
    shown = _shown(error.get("input"))
    if kind in _JSON_TYPES:
        got = _json_kind(error.get("input"))
        return rule, f"{where} must be {_JSON_TYPES[kind]}, not {got}. {r.RULES[rule]}"
    if kind == "string_pattern_mismatch":
        return rule, f"{where} is {shown}, which does not have the required form. {r.RULES[rule]}"
    if kind in ("literal_error", "enum"):
        expected = error.get("ctx", {}).get("expected", "")
        return rule, f"{where} is {shown}; expected {expected}. {r.RULES[rule]}"
    if kind in ("string_too_long", "string_too_short", "too_long", "too_short"):
        return (
            rule,
            f"{where} {error['msg'].lower().replace('string ', '').replace('should', 'must')}. "
            + r.RULES[rule],
        )
    return rule, f"{where} is {shown}: {error['msg'].lower()}. {r.RULES[rule]}"


_JSON_TYPES = {
    "dict_type": "a JSON object",
    "model_type": "a JSON object",
    "model_attributes_type": "a JSON object",
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "true or false",
    "list_type": "an array",
}


def envelope_rule(model: type[BaseModel] | None, loc: tuple[str | int, ...]) -> str:
    """The rule of the deepest field on ``loc`` that names one (``x-rule``), else M1."""
    rule = "M1"
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        found = None
        for candidate in _models_in(current):
            info = candidate.model_fields.get(part)
            if info is not None:
                found = info
                break
        if found is None:
            break
        extra = found.json_schema_extra
        if isinstance(extra, dict) and isinstance(extra.get("x-rule"), str):
            rule = str(extra["x-rule"])
        current = found.annotation
    return rule


def _header_rule(loc: tuple[str | int, ...]) -> str:
    return envelope_rule(EnvelopeHeader, loc)


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """The model classes inside an annotation (through Optional, list, Union, Annotated)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _models_in(get_args(annotation)[0])
    if origin in (Union, types.UnionType, list):
        found: list[type[BaseModel]] = []
        for arg in get_args(annotation):
            found.extend(_models_in(arg))
        return found
    return []


def _strip_tags(
    loc: tuple[str | int, ...], model: type[BaseModel] | None, kind: str = ""
) -> tuple[str | int, ...]:
    """Drop the discriminator tags ('lineup.v1.ui.open', 'inline') and the union members'
    labels ('int', 'list[constrained-str]') pydantic puts in locations: they are no part of
    the message's JSON path."""
    kept: list[str | int] = []
    for index, part in enumerate(loc):
        if index == 0 and model is not None and part == _tag_of(model):
            continue
        if part in ("inline", "ref") and kept[-1:] == ["app"]:
            continue
        if (
            part in COMPONENT_VERSIONS
            and kept == ["payload"]
            and model is ComponentShow
            and loc[index - 1] == "payload"  # the tag, not a field named like it ("text")
        ):
            continue
        unknown_key = kind == "extra_forbidden" and index == len(loc) - 1  # a key of the input
        if isinstance(part, str) and not unknown_key and _UNION_LABEL.fullmatch(part):
            continue
        kept.append(part)
    return tuple(kept)


_COMPONENT_MODELS = {
    get_args(cls.model_fields["kind"].annotation)[0]: cls
    for cls in _models_in(ComponentShow.model_fields["payload"].annotation)
}


def _tag_of(model: type[BaseModel]) -> str | None:
    for name, cls in ENVELOPE_CLASSES.items():
        if cls is model:
            return name
    return None


def _siblings(model: type[BaseModel] | None, loc: tuple[str | int, ...]) -> list[str]:
    current: Any = model or EnvelopeHeader
    for part in loc:
        if isinstance(part, int):
            continue
        models = _models_in(current)
        info = next((m.model_fields[part] for m in models if part in m.model_fields), None)
        if info is None:
            return []
        current = info.annotation
    names: list[str] = []
    for candidate in _models_in(current):
        names.extend(n for n in candidate.model_fields if n not in names)
    return names


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_ID = re.compile(r.ID_PATTERN)
_UNION_LABEL = re.compile(r"int|float|bool|str|constrained-[a-z]+|[a-z-]+\[.*\]")
_NAMED_FIELD = re.compile(r"^([A-Z][0-9]{1,2}) ([a-z_]+): ")


def readable_id(value: Any) -> str | None:
    """``value`` if it is a valid id (H1), so a refusal may name it; else None."""
    return value if type(value) is str and _ID.fullmatch(value) else None


def readable_type(value: Any) -> str | None:
    """``value`` if it is a string short enough to quote back as a refused type; else None."""
    return value if type(value) is str and len(value) <= 128 else None


def _json_kind(value: Any) -> str:
    kinds = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        type(None): "null",
        int: "a number",
        float: "a number",
    }
    return kinds.get(type(value), f"a {type(value).__name__}")
