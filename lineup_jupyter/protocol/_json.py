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

from .._errors import ProtocolError
from ._rules import MAX_JSON_DEPTH

_COMPACT = {"separators": (",", ":"), "ensure_ascii": False, "allow_nan": False}


_MAX_INT_BITS = 13_000  # about 3900 decimal digits, under Python's 4300-digit str limit


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
    try:
        value = _DECODER.decode(text[1:] if text.startswith("\ufeff") else text)  # one BOM
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
    # Fast paths: a text that cannot nest deeper than the limit, or has no surrogate escape,
    # skips the walk (the common case costs two C-level scans).
    deep = text.count("[") + text.count("{") > MAX_JSON_DEPTH
    # "\u" also catches a key like "\u005f_proto__" that only becomes __proto__ when parsed.
    if deep or "__proto__" in text or "\\u" in text or not _encodes(text):
        _walk(value, strict_types=False)
    return value


def _encodes(text: str) -> bool:
    """False for text holding a raw lone surrogate (possible in a Python str, never in bytes)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_value(value: Any) -> None:
    """Check that a Python object is exactly a JSON value (H2); raise ProtocolError where not.

    Only dict (str keys), list, str, int, float (finite), bool and None are JSON. Tuples, sets,
    bytes, int keys and the like are refused rather than silently converted, so what the
    agent's author wrote is what the surface gets.
    """
    _walk(value, strict_types=True)


def _walk(root: Any, *, strict_types: bool) -> None:
    stack: list[tuple[Any, str, int]] = [(root, "$", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if not value.isascii():
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise _error(
                        path,
                        "the string contains a lone surrogate, which is not valid Unicode text.",
                    ) from None
            continue
        if isinstance(value, dict):
            if depth >= MAX_JSON_DEPTH:
                raise _error(path, f"the value is nested more than {MAX_JSON_DEPTH} levels deep.")
            for key, item in value.items():
                if not isinstance(key, str):
                    raise _error(
                        path,
                        f"the key {key!r} is a {type(key).__name__}; JSON object keys are strings.",
                        "invalid",
                    )
                if key == "__proto__":
                    raise _error(
                        path,
                        "the key '__proto__' is refused: in JavaScript it can "
                        "rewrite an object's prototype.",
                        "invalid",
                    )
                stack.append((key, path, depth + 1))
                stack.append((item, _member_path(path, key), depth + 1))
            continue
        if isinstance(value, list):
            if depth >= MAX_JSON_DEPTH:
                raise _error(path, f"the value is nested more than {MAX_JSON_DEPTH} levels deep.")
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value))
            continue
        if not strict_types:
            continue
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if value.bit_length() > _MAX_INT_BITS:  # Python cannot even print it as JSON
                raise _error(path, "the integer is longer than 4000 digits.")
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise _error(path, f"{value} is not a finite JSON number.")
            continue
        hint = " (use a list)" if isinstance(value, (tuple, set, frozenset)) else ""
        raise _error(path, f"a {type(value).__name__} is not a JSON value{hint}.", "invalid")


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
