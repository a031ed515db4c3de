"""Strict JSON in and out (host decision H2: messages are UTF-8 I-JSON, RFC 7493).

Python's json module accepts things a browser or another host would read differently:
duplicate keys (the last silently wins), NaN and Infinity, numbers that overflow to
infinity, lone surrogates. Each is refused here (with the JSON path where the parser can know it:
duplicate keys and non-finite numbers in text are reported at ``$``), so
both ends of a conversation always agree on what a message says.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic_core import from_json

from ._errors import ProtocolError
from ._rules import MAX_JSON_DEPTH, MAX_SAFE_INTEGER

_JSON_TYPES = frozenset({dict, list, str, int, float, bool, type(None)})
_COMPACT = {"separators": (",", ":"), "ensure_ascii": False, "allow_nan": False}


# An integer a double cannot hold exactly is refused (I-JSON, RFC 7493 section 2.2): JavaScript
# reads 9007199254740993 as ...992 (and 1e400's digits as Infinity) while the kernel keeps it,
# so the card would show one value and the handler run with another.
_SAFE = MAX_SAFE_INTEGER


def _error(path: str, message: str, code: str = "invalid_json") -> ProtocolError:
    return ProtocolError(code, "H2", path, message)


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        self.key = key


class _NonFinite(ValueError):
    def __init__(self, literal: str) -> None:
        self.literal = literal


def _object_without_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


def _reject_constant(literal: str) -> float:
    raise _NonFinite(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if math.isinf(value):
        raise _NonFinite(literal)
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_object_without_duplicates,
    parse_constant=_reject_constant,
    parse_float=_finite_float,
)


def loads(data: str | bytes | bytearray | memoryview, *, max_bytes: int) -> Any:
    """Parse one I-JSON value, or raise ProtocolError (code invalid_json or too_large, rule H2)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        raw = bytes(data)
        if len(raw) > max_bytes:
            raise _error(
                "$", f"the message is {len(raw)} bytes; the limit is {max_bytes}.", "too_large"
            )
        value = _fast_loads(raw)  # parses UTF-8 itself: no decoding step on the common path
        if value is not _SLOW:
            return value
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _error(
                "$", f"the bytes are not UTF-8 (invalid byte at offset {exc.start})."
            ) from None
    else:
        text = data
        # Characters never exceed UTF-8 bytes, so only long texts need the exact count.
        if len(text) * 4 > max_bytes and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
            raise _error("$", f"the message is longer than {max_bytes} bytes.", "too_large")
    if text.startswith("\ufeff"):  # one byte-order mark is tolerated (JSON.parse would not)
        text = text[1:]
    if isinstance(data, str):  # bytes already had their fast try, before decoding
        value = _fast_loads(text)
        if value is not _SLOW:
            return value
    return _strict_loads(text)


_SLOW = object()


def _fast_loads(doc: str | bytes) -> Any:
    """The common case at Rust speed: pydantic-core's parser, then one pass over the parsed
    value proving that no key was dropped as a duplicate, nothing is too deep, no number
    overflowed and no key is __proto__. Any doubt or fault returns _SLOW: the strict parser
    then decides, and explains in our words."""
    try:  # also refuses lone surrogates (escaped, or raw in a str) and bytes that are not UTF-8
        value = from_json(doc, allow_inf_nan=False, cache_strings=False)
    except (ValueError, TypeError):  # TypeError: a str that cannot be encoded at all
        return _SLOW
    # Every ':' of the text separates one member or sits inside a string; a member the parser
    # dropped as a duplicate key leaves a ':' that nothing accounts for. An escape can write a
    # colon (\\u003a) that the text does not show: such texts are counted slowly.
    if isinstance(doc, bytes):
        colons = doc.count(b":")
        escaped_colon = b"\\" in doc and b"\\u003" in doc
    else:
        colons = doc.count(":")
        escaped_colon = "\\" in doc and "\\u003" in doc
    if escaped_colon:
        return _SLOW
    keys = 0
    strings: list[str] = []
    level = [value]
    for _ in range(MAX_JSON_DEPTH):  # one level of nesting per round
        deeper = []
        for item in level:
            kind = type(item)
            if kind is dict:
                if "__proto__" in item:  # perhaps spelled with escapes: the slow path says so
                    return _SLOW
                keys += len(item)
                strings.extend(item)
                children: Any = item.values()
            elif kind is list:
                children = item
            else:
                continue
            for child in children:
                kind = type(child)
                if kind is str:
                    strings.append(child)
                elif kind is dict or kind is list:
                    deeper.append(child)
                elif (kind is float and child - child != 0) or (  # inf: too big for a double
                    kind is int and not -_SAFE <= child <= _SAFE
                ):
                    return _SLOW
        if not deeper:
            if type(value) is str:
                strings.append(value)
            return value if colons - "".join(strings).count(":") == keys else _SLOW
        level = deeper
    return _SLOW  # deeper than the limit


def _strict_loads(text: str) -> Any:
    """Python's parser with hooks for every H2 fault, then a walk for what hooks cannot see."""
    try:
        value = _DECODER.decode(text)
    except _DuplicateKey as exc:
        raise _error(
            "$", f"the key {exc.key!r} appears twice in one object; keys must be unique."
        ) from None
    except _NonFinite as exc:
        raise _error("$", f"{exc.literal} is not a finite JSON number.") from None
    except RecursionError:
        raise _error("$", f"the value is nested more than {MAX_JSON_DEPTH} levels deep.") from None
    except json.JSONDecodeError as exc:
        raise _error(
            "$", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}."
        ) from None
    except ValueError as exc:  # e.g. an integer longer than Python's 4300-digit limit
        raise _error("$", f"not valid JSON: {exc}.") from None
    _walk(value, strict_types=False)
    return value


def check_value(value: Any) -> None:
    """Check that a Python object is exactly a JSON value (H2); raise ProtocolError where not.

    Only dict (str keys), list, str, int, float (finite), bool and None are JSON. Tuples, sets,
    bytes, int keys and the like are refused rather than silently converted, so what the
    agent's author wrote is what the surface gets.
    """
    _walk(value, strict_types=True)


Node = tuple[Any, str | int] | None  # (parent node, key or index); None is the root, "$"


def _path(node: Node) -> str:
    parts: list[str | int] = []
    while node is not None:
        node, part = node
        parts.append(part)
    return member_path(tuple(reversed(parts)))


def _walk(root: Any, *, strict_types: bool) -> None:
    # Paths are built only for an error: a node is a cheap (parent, key) pair until then.
    stack: list[tuple[Any, Node, int]] = [(root, None, 0)]
    while stack:
        value, node, depth = stack.pop()
        if strict_types and type(value) not in _JSON_TYPES:
            # Exactly these types: a subclass (of dict, str, int...) may override any method
            # the host would call, and make the host raise; a tuple or set is not JSON either.
            hint = " (use a list)" if isinstance(value, (tuple, set, frozenset)) else ""
            raise _error(
                _path(node), f"a {type(value).__name__} is not a JSON value{hint}.", "invalid"
            )
        if isinstance(value, str):
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise _error(
                        _path(node),
                        "the string contains a lone surrogate, which is not valid Unicode text.",
                    ) from None
            continue
        if isinstance(value, dict):
            if depth >= MAX_JSON_DEPTH:
                raise _error(
                    _path(node), f"the value is nested more than {MAX_JSON_DEPTH} levels deep."
                )
            for key, item in value.items():
                if type(key) is not str:
                    raise _error(
                        _path(node),
                        f"a key is a {type(key).__name__}; JSON object keys are strings.",
                        "invalid",
                    )
                if key == "__proto__":
                    raise _error(
                        _path(node),
                        "the key '__proto__' is refused: in JavaScript it can "
                        "rewrite an object's prototype.",
                        "invalid",
                    )
                stack.append((key, node, depth + 1))
                stack.append((item, (node, key), depth + 1))
            continue
        if isinstance(value, list):
            if depth >= MAX_JSON_DEPTH:
                raise _error(
                    _path(node), f"the value is nested more than {MAX_JSON_DEPTH} levels deep."
                )
            stack.extend((item, (node, i), depth + 1) for i, item in enumerate(value))
            continue
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if not -_SAFE <= value <= _SAFE:
                raise _error(_path(node), _unsafe_integer(value))
            continue
        if not strict_types:
            continue
        if not math.isfinite(value):  # a float: the only type left
            raise _error(_path(node), f"{value} is not a finite JSON number.")


def _unsafe_integer(value: int) -> str:
    # str() refuses past 4300 digits: a long one is named by its size.
    shown = str(value) if value.bit_length() <= 128 else f"an integer of {value.bit_length()} bits"
    return (
        f"{shown} is beyond +/-(2^53-1), the integers a double holds exactly (I-JSON, "
        "RFC 7493 section 2.2): a browser would read another number. Send it as a string."
    )


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _member_path(path: str, key: str) -> str:
    if len(key) <= 64 and _PLAIN_KEY.fullmatch(key):
        return f"{path}.{key}"
    shown = key if len(key) <= 64 else key[:61] + "..."
    # As JSON.stringify writes a key: non-ASCII as is, a lone surrogate as its escape.
    quoted = _LONE_SURROGATE.sub(
        lambda m: f"\\u{ord(m.group()):04x}", json.dumps(shown, ensure_ascii=False)
    )
    return f"{path}[{quoted}]"


def member_path(parts: tuple[str | int, ...]) -> str:
    """The JSON path of a pydantic error location: ('payload', 'app', 'id') -> $.payload.app.id."""
    path = "$"
    for part in parts:
        path = f"{path}[{part}]" if isinstance(part, int) else _member_path(path, part)
    return path


def dumps(value: Any) -> str:
    """Compact JSON as JavaScript's JSON.stringify writes it (the form sizes are measured in)."""
    return json.dumps(value, **_COMPACT)  # type: ignore[arg-type]


def size(value: Any) -> int:
    """Bytes of UTF-8 in the compact serialisation: the unit of every size limit.

    Counted as JSON.stringify would write it, so the browser's pre-check and the kernel agree:
    Python writes some floats differently (``1e-07``, ``10.0``), which is corrected here.
    """
    text = dumps(value)
    n = len(text) if text.isascii() else len(text.encode("utf-8"))
    if "." in text or "e" in text or "E" in text:  # floats may be present: correct their lengths
        n += sum(len(js_number(f)) - len(repr(f)) for f in _floats(value))
    return n


def _floats(value: Any) -> list[float]:
    found: list[float] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            found.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def js_number(value: float) -> str:
    """A finite float as JavaScript's Number.prototype.toString writes it (ECMA-262 6.1.6.1.20)."""
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, _, exponent = repr(abs(value)).partition("e")
    whole, _, fraction = digits.partition(".")
    fraction = fraction.rstrip("0")
    mantissa = (whole + fraction).lstrip("0")
    # n: where the decimal point sits relative to the start of the significant digits
    n = len(whole) + int(exponent or 0) - (len(whole + fraction) - len(mantissa))
    mantissa = mantissa.rstrip("0") or "0"
    k = len(mantissa)
    if k <= n <= 21:
        text = mantissa + "0" * (n - k)
    elif 0 < n <= 21:
        text = f"{mantissa[:n]}.{mantissa[n:]}"
    elif -6 < n <= 0:
        text = "0." + "0" * -n + mantissa
    else:
        power = n - 1
        head = mantissa[0] + (f".{mantissa[1:]}" if k > 1 else "")
        text = f"{head}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text
